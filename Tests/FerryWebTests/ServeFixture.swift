import FerryTestSupport
import FerryWeb
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A card folder for the UI tests, `ferry card` on it, and `ferry serve` on the card.
///
/// The folder: `DCIM/100FERRY` (5 photos of 1600x1200 and `NOTES.TXT`),
/// `DCIM/101FERRY` (2 photos), `SLOW` (`SLOW_0001.JPG` and `SLOW_0003.JPG`,
/// 12 megapixels, and `FAST_0002.JPG`, small), `BIG` (1,000 photos) and an empty `MISC`.
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

    init(slowRate: Int = 1_000_000, slowLatencyMilliseconds: Int = 200) throws {
        let folder = try TempDir(prefix: "ferry-ui")
        let cache = try TempDir(prefix: "ferry-ui-cache")
        self.folder = folder
        self.cache = cache
        let root = folder.path + "/root"
        var layout = SamplePhotos.Layout()
        layout.folders = [("100FERRY", 5), ("101FERRY", 2)]
        try SamplePhotos.populate(folder: root, layout: layout)
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/SLOW", withIntermediateDirectories: true)
        try Data(SamplePhotos.jpeg(index: 99, width: 4000, height: 3000)).write(
            to: URL(fileURLWithPath: root + "/SLOW/SLOW_0001.JPG"))
        try fm.copyItem(atPath: root + "/SLOW/SLOW_0001.JPG", toPath: root + "/SLOW/SLOW_0003.JPG")
        try Data(SamplePhotos.jpeg(index: 98, width: 800, height: 600)).write(
            to: URL(fileURLWithPath: root + "/SLOW/FAST_0002.JPG"))
        try fm.createDirectory(atPath: root + "/BIG", withIntermediateDirectories: true)
        let small = root + "/BIG/IMG_0001.JPG"
        try Data(SamplePhotos.jpeg(index: 1, width: 640, height: 480)).write(to: URL(fileURLWithPath: small))
        for i in 2...1000 {
            guard link(small, root + String(format: "/BIG/IMG_%04d.JPG", i)) == 0 else {
                throw NSError(domain: "link", code: Int(errno))
            }
        }
        var processes: [ServerProcess] = []
        func start(_ arguments: [String], _ name: String) throws -> ServerProcess {
            let p = try ServerProcess(TestProcess.ferryExecutable(), arguments, logPath: "\(folder.path)/\(name).log")
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
