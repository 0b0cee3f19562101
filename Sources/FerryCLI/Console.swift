import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where the CLI writes: results to stdout, messages and progress to stderr.
/// Writes are serialised by a lock so lines from concurrent transfers never mix.
final class Console: Sendable {
    private let lock = Mutex(())
    /// Whether stderr is a terminal (progress bars only then).
    let stderrIsTerminal: Bool

    init() {
        stderrIsTerminal = isatty(2) != 0
    }

    /// Writes text to stdout as is.
    func out(_ text: String) {
        lock.withLock { _ in Console.write(1, text) }
    }

    /// Writes one line to stderr.
    func error(_ text: String) {
        lock.withLock { _ in Console.write(2, text + "\n") }
    }

    /// Writes raw text to stderr (progress drawing).
    func drawError(_ text: String) {
        lock.withLock { _ in Console.write(2, text) }
    }

    /// Prints one JSON object as a line on stdout.
    func json<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return }
        out(String(decoding: data, as: UTF8.self) + "\n")
    }

    private static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return
            }
            offset += n
        }
        bytes.removeAll()
    }
}

/// Human-readable sizes and durations.
enum Format {
    static func bytes(_ n: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var v = Double(n)
        var i = 0
        while v >= 1000 && i < units.count - 1 {
            v /= 1000
            i += 1
        }
        return i == 0 ? "\(n) B" : String(format: v >= 100 ? "%.0f %@" : "%.1f %@", v, units[i])
    }

    static func rate(_ bytesPerSecond: Double) -> String {
        bytes(Int64(bytesPerSecond)) + "/s"
    }

    static func duration(_ d: Duration) -> String {
        let s = Int(d / .seconds(1))
        if s >= 3600 { return String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) }
        return String(format: "%d:%02d", s / 60, s % 60)
    }
}

/// Joins local path parts with one slash (plain string work: this runs per file).
func localJoin(_ base: String, _ name: String) -> String {
    if base.isEmpty || base == "." { return name }
    return base.hasSuffix("/") ? base + name : base + "/" + name
}

/// The last component of a local path.
func localName(_ path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? path
}
