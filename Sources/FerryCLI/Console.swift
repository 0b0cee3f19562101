import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where the CLI writes: results to stdout, messages and progress to stderr.
/// Writes are serialised by a lock so lines from concurrent transfers never mix.
/// The text goes to a sink: the process's file descriptors, or, in a test that
/// runs a command in-process, whatever the test collects it in.
final class Console: Sendable {
    /// One of the two streams a command writes to.
    enum Stream: Sendable, Equatable {
        case standardOutput
        case standardError
    }

    /// Takes each piece of text for a stream, in order (called under the console's lock).
    typealias Sink = @Sendable (Stream, String) -> Void

    private let lock = Mutex(())
    private let sink: Sink
    /// Whether stderr is a terminal (progress bars only then).
    let stderrIsTerminal: Bool

    /// The console of the process: file descriptors 1 and 2.
    convenience init() {
        self.init(stderrIsTerminal: isatty(2) != 0) { stream, text in
            Console.write(stream == .standardOutput ? 1 : 2, text)
        }
    }

    /// A console whose text goes to `sink`.
    init(stderrIsTerminal: Bool = false, sink: @escaping Sink) {
        self.stderrIsTerminal = stderrIsTerminal
        self.sink = sink
    }

    /// Writes text to stdout as is.
    func out(_ text: String) {
        lock.withLock { _ in sink(.standardOutput, text) }
    }

    /// Writes text meant for people to stdout, control characters shown as `?`
    /// (`Format.printable`): names and values that came from a server.
    func show(_ text: String) {
        out(Format.printable(text))
    }

    /// Writes one line to stderr, control characters shown as `?`.
    func error(_ text: String) {
        let line = Format.printable(text)
        lock.withLock { _ in sink(.standardError, line + "\n") }
    }

    /// Writes raw text to stderr (progress drawing).
    func drawError(_ text: String) {
        lock.withLock { _ in sink(.standardError, text) }
    }

    /// Prints one JSON object as a line on stdout (``JSONLine``).
    func json<T: Encodable>(_ value: T) {
        guard let line = JSONLine.encode(value) else { return }
        out(line)
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
    /// `text` with its control characters (C0 but the line feed, DEL, C1) shown as
    /// `?`, as GNU ls shows names on a terminal: a file name, a card's SSID or a
    /// server's text never moves the cursor, recolours or retitles the terminal.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars { out.append(isControl(s) ? "?" : s) }
        return String(out)
    }

    private static func isControl(_ s: Unicode.Scalar) -> Bool {
        (s.value < 0x20 && s != "\n") || (0x7F...0x9F).contains(s.value)
    }

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

    /// An elapsed time for a summary: `0.4 s`, `12 s`, `3:05`.
    static func seconds(_ s: Double) -> String {
        if s < 10 { return String(format: "%.1f s", s) }
        if s < 60 { return String(format: "%.0f s", s) }
        return duration(.milliseconds(Int64(s * 1000)))
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
    // ASCII paths by their bytes (this runs per file); others by Characters, as
    // before (a Character may span a `/` there).
    guard path.utf8.allSatisfy({ $0 < 0x80 }) else {
        return path.split(separator: "/").last.map(String.init) ?? path
    }
    let u = path.utf8
    let slash = UInt8(ascii: "/")
    var end = u.endIndex
    while end > u.startIndex && u[u.index(before: end)] == slash { end = u.index(before: end) }
    guard end > u.startIndex else { return path }
    var start = end
    while start > u.startIndex && u[u.index(before: start)] != slash { start = u.index(before: start) }
    return String(path[start..<end])
}

/// Whether a destination starts with `~` (expanded by the download, so its parent
/// is not the one the planner made).
func destinationStartsWithTilde(_ path: String) -> Bool {
    path.utf8.first == UInt8(ascii: "~")
}
