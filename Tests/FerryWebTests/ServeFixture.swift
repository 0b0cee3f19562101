import FerryTestSupport
import FerryWeb
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A card folder for the UI tests, `ferry card` on it, and `ferry serve` on the card.
///
/// The folder: `DCIM/100FERRY` (`FER_0001.JPG` of 1600x1200, 4 more photos of
/// 800x600 and `NOTES.TXT`), `DCIM/101FERRY` (2 photos), `SLOW` (`SLOW_0001.JPG`
/// and `SLOW_0003.JPG`, 1600x1200, and `FAST_0002.JPG`), `BIG` (1,000 photos)
/// and an empty `MISC`.
///
/// Three UIs: ``url`` on a card over the whole folder; ``slowURL`` on a second,
/// slow card (a byte rate and latency, as a real card over Wi-Fi) serving
/// `SLOW`; ``localURL`` on the folder itself, for what a card cannot do (rename).
final class ServeFixture: Sendable {
    let folder: TempDir
    let cache: TempDir
    let processes: [ServerProcess]
    /// The UI on the card.
    let url: String
    /// The UI on the slow card.
    let slowURL: String
    /// The UI on the local folder.
    let localURL: String

    /// The card's folder.
    var root: String { folder.path + "/root" }

    /// The log of every process, for failure messages.
    var logs: String { processes.map(\.log).joined(separator: "\n") }

    init(slowRate: Int = 150_000, slowLatencyMilliseconds: Int = 200) throws {
        let folder = try TempDir(prefix: "ferry-ui")
        let cache = try TempDir(prefix: "ferry-ui-cache")
        self.folder = folder
        self.cache = cache
        let root = folder.path + "/root"
        // Pixels are drawn by Swift code that is slow in debug builds, and the
        // tests run beside timing-sensitive suites: draw few, copy the rest.
        var layout = SamplePhotos.Layout()
        layout.folders = [("100FERRY", 5), ("101FERRY", 2)]
        layout.width = 800
        layout.height = 600
        try SamplePhotos.populate(folder: root, layout: layout)
        let fm = FileManager.default
        // One photo larger than the window, for fit, zoom and pan; its date kept for the date order.
        let first = root + "/DCIM/100FERRY/FER_0001.JPG"
        let taken = try fm.attributesOfItem(atPath: first)[.modificationDate] as? Date ?? Date()
        try Data(SamplePhotos.jpeg(index: 1, width: 1600, height: 1200, taken: taken)).write(
            to: URL(fileURLWithPath: first))
        try fm.setAttributes([.modificationDate: taken], ofItemAtPath: first)
        try fm.createDirectory(atPath: root + "/SLOW", withIntermediateDirectories: true)
        try fm.copyItem(atPath: first, toPath: root + "/SLOW/SLOW_0001.JPG")
        try fm.copyItem(atPath: first, toPath: root + "/SLOW/SLOW_0003.JPG")
        try fm.copyItem(atPath: root + "/DCIM/100FERRY/FER_0002.JPG", toPath: root + "/SLOW/FAST_0002.JPG")
        try fm.createDirectory(atPath: root + "/BIG", withIntermediateDirectories: true)
        let small = root + "/BIG/IMG_0001.JPG"
        try fm.copyItem(atPath: root + "/DCIM/100FERRY/FER_0003.JPG", toPath: small)
        for i in 2...1000 {
            guard link(small, root + String(format: "/BIG/IMG_%04d.JPG", i)) == 0 else {
                throw NSError(domain: "link", code: Int(errno))
            }
        }
        var processes: [ServerProcess] = []
        func start(_ arguments: [String], _ name: String) throws -> ServerProcess {
            // At a lower priority, like the browser: suites that measure time run beside these.
            let p = try ServerProcess(
                "/usr/bin/nice", ["-n", "10", TestProcess.ferryExecutable()] + arguments,
                logPath: "\(folder.path)/\(name).log")
            processes.append(p)
            return p
        }
        var urls: [String] = []
        do {
            let card = try Self.cardURL(start(["card", root, "--port", "0"], "card"))
            let slowCard = try Self.cardURL(
                start(
                    [
                        "card", root + "/SLOW", "--port", "0", "--rate", "\(slowRate)", "--latency",
                        "\(slowLatencyMilliseconds)",
                    ], "slow-card"))
            urls.append(
                try Self.waitForURL(start(["serve", card, "--port", "0", "--cache", cache.path + "/card"], "serve")))
            urls.append(
                try Self.waitForURL(
                    start(["serve", slowCard, "--port", "0", "--cache", cache.path + "/slow"], "serve-slow")))
            urls.append(
                try Self.waitForURL(
                    start(["serve", root, "--port", "0", "--cache", cache.path + "/local"], "serve-local")))
        } catch {
            for p in processes { p.stop() }
            throw error
        }
        self.processes = processes
        url = urls[0]
        slowURL = urls[1]
        localURL = urls[2]
    }

    deinit {
        for p in processes { p.stop() }
    }

    /// Reads `ferry serve: open URL` from the server's output.
    static func waitForURL(_ server: ServerProcess) throws -> String {
        try waitForLine(server, prefix: "ferry serve: open ")
    }

    /// Reads the `flashair://` URL from `ferry card`'s first line.
    static func cardURL(_ card: ServerProcess) throws -> String {
        let line = try waitForLine(card, prefix: "ferry card: serving ")
        guard let start = line.range(of: "(flashair://") else { throw FixtureError(log: card.log) }
        return String(line[line.index(after: start.lowerBound)...].prefix { $0 != ")" })
    }

    static func waitForLine(_ server: ServerProcess, prefix: String) throws -> String {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            for line in server.log.split(separator: "\n") where line.hasPrefix(prefix) {
                return String(line.dropFirst(prefix.count))
            }
            if !server.process.isRunning { break }
            usleep(20_000)
        }
        throw FixtureError(log: server.log)
    }
}

/// A server that did not start; carries its output.
struct FixtureError: Error, CustomStringConvertible {
    var log: String
    var description: String { "server did not start:\n\(log)" }
}
