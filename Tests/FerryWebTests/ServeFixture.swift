import FerryTestSupport
import FerryWeb
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A card folder for the UI tests, `ferry card` on it and `ferry serve` on the
/// card: the one fixture of the browser and import tests, in two layouts.
///
/// - ``browsing(slowRate:slowLatencyMilliseconds:)``: the viewer's folder and three UIs;
/// - ``importing(photos:photoBytes:)``: a card as slow as a real one, and a UI that imports.
///
/// Every process runs at a lower priority (timing-sensitive suites run beside
/// these), writes its log into the fixture's folder, and stops with the fixture.
final class ServeFixture: Sendable {
    let folder: TempDir
    let cache: TempDir
    let processes: [ServerProcess]
    /// The URL each process printed (a card's `flashair://`, a UI's `http://`), by its name.
    private let addresses: [String: String]
    /// The UI of the first `ferry serve`.
    let url: String

    /// The card's folder.
    var root: String { folder.path + "/card" }
    /// Where a UI started with `--import-to` ``importDirectory`` imports to.
    var importDirectory: String { folder.path + "/imported" }
    /// The log of every process, for failure messages.
    var logs: String { processes.map(\.log).joined(separator: "\n") }

    /// Starts `ferry card` and `ferry serve` processes, each named for its log.
    struct Launcher {
        let folder: String
        let cache: String
        fileprivate(set) var processes: [ServerProcess] = []
        fileprivate(set) var addresses: [String: String] = [:]
        fileprivate(set) var firstUI: String?

        private mutating func start(_ arguments: [String], _ name: String) throws -> ServerProcess {
            let p = try ServerProcess(
                "/usr/bin/nice", ["-n", "10", TestProcess.ferryExecutable()] + arguments,
                logPath: "\(folder)/\(name).log")
            processes.append(p)
            return p
        }

        /// `ferry card FOLDER --port 0 ARGUMENTS`; its `flashair://` URL.
        @discardableResult
        mutating func card(_ name: String, _ folder: String, _ arguments: [String] = []) throws -> String {
            let url = try ServeFixture.cardURL(start(["card", folder, "--port", "0"] + arguments, name))
            addresses[name] = url
            return url
        }

        /// `ferry serve SOURCE --port 0 --cache CACHE/NAME ARGUMENTS`; the UI's URL.
        @discardableResult
        mutating func serve(_ name: String, _ source: String, _ arguments: [String] = []) throws -> String {
            let url = try ServeFixture.waitForURL(
                start(["serve", source, "--port", "0", "--cache", cache + "/" + name] + arguments, name))
            addresses[name] = url
            if firstUI == nil { firstUI = url }
            return url
        }
    }

    /// Makes the folder (`populate` fills ``root``), then starts the processes
    /// `launch` names; stops those already started when one fails.
    init(prefix: String, populate: (String) throws -> Void, launch: (inout Launcher) throws -> Void) throws {
        folder = try TempDir(prefix: prefix)
        cache = try TempDir(prefix: prefix + "-cache")
        try populate(folder.path + "/card")
        var launcher = Launcher(folder: folder.path, cache: cache.path)
        do {
            try launch(&launcher)
            guard let first = launcher.firstUI else { throw FixtureError(log: "no ferry serve was started") }
            url = first
        } catch {
            for p in launcher.processes { p.stop() }
            throw error
        }
        processes = launcher.processes
        addresses = launcher.addresses
    }

    deinit {
        for p in processes { p.stop() }
    }

    /// The URL the process named `name` printed.
    func address(_ name: String) -> String {
        guard let url = addresses[name] else { preconditionFailure("no process named \(name) in this fixture") }
        return url
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

// MARK: - Browsing

extension ServeFixture {
    /// The viewer's folder: `DCIM/100FERRY` (`FER_0001.JPG` of 1600x1200, 4 more
    /// photos of 800x600 and `NOTES.TXT`), `DCIM/101FERRY` (2 photos), `SLOW`
    /// (`SLOW_0001.JPG` and `SLOW_0003.JPG`, 1600x1200, and `FAST_0002.JPG`), `BIG`
    /// (1,000 photos) and an empty `MISC`.
    ///
    /// Three UIs: ``url`` on a card over the whole folder; ``slowURL`` on a second,
    /// slow card (a byte rate and latency, as a real card over Wi-Fi) serving
    /// `SLOW`; ``localURL`` on the folder itself, for what a card cannot do (rename).
    static func browsing(slowRate: Int = 150_000, slowLatencyMilliseconds: Int = 200) throws -> ServeFixture {
        try ServeFixture(prefix: "ferry-ui", populate: populateBrowsing) { launch in
            let root = launch.folder + "/card"
            let card = try launch.card("card", root)
            let slowCard = try launch.card(
                "slow-card", root + "/SLOW",
                ["--rate", "\(slowRate)", "--latency", "\(slowLatencyMilliseconds)"])
            try launch.serve("serve", card)
            try launch.serve("serve-slow", slowCard)
            try launch.serve("serve-local", root)
        }
    }

    /// The UI on the slow card (``browsing(slowRate:slowLatencyMilliseconds:)``).
    var slowURL: String { address("serve-slow") }
    /// The UI on the local folder (``browsing(slowRate:slowLatencyMilliseconds:)``).
    var localURL: String { address("serve-local") }

    private static func populateBrowsing(_ root: String) throws {
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
    }
}

// MARK: - Importing

extension ServeFixture {
    /// The card's CID in the import layout.
    static let importCID = "035344534432474280ffffffff0123ab"

    /// A card as slow as a real one for the import tests: `ferry card` with one
    /// connection, 30 ms latency and 2.5 MB/s, and ``url``, `ferry serve` on it
    /// importing into ``importDirectory``.
    ///
    /// The folder: `DCIM/100FERRY` (`photos` photos of about `photoBytes`: 1600x1200
    /// JPEGs padded after their end marker, as cameras pad with maker data),
    /// `DCIM/101FERRY` (3 photos, for delete-after), `.hidden.txt` at the root.
    static func importing(photos: Int = 20, photoBytes: Int = 1_000_000) throws -> ServeFixture {
        try ServeFixture(prefix: "ferry-ui-import") { root in
            try populateImporting(root, photos: photos, photoBytes: photoBytes)
        } launch: { launch in
            let root = launch.folder + "/card"
            let card = try launch.card(
                "card", root,
                ["--max-connections", "1", "--latency", "30", "--rate", "2500000", "--cid", importCID])
            try launch.card("card-2", root, ["--cid", importCID])
            try launch.serve(
                "serve", card, ["--import-to", launch.folder + "/imported", "--import-to", launch.folder + "/archive"])
        }
    }

    /// The card's URL for `ferry sync` (``importing(photos:photoBytes:)``): a second
    /// emulator on the same folder with the same CID (the same card at another
    /// address), as the first allows one connection and `ferry serve` holds it.
    var cardURL: String { address("card-2") }

    private static func populateImporting(_ root: String, photos: Int, photoBytes: Int) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/DCIM/100FERRY", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/DCIM/101FERRY", withIntermediateDirectories: true)
        // Two drawn photos, copied with different padding: drawing is slow in debug builds.
        let base = [try SamplePhotos.jpeg(index: 1, width: 1600, height: 1200), try SamplePhotos.jpeg(index: 2)]
        func write(_ path: String, _ i: Int, size: Int) throws {
            var bytes = base[i % 2]
            if bytes.count < size {
                bytes += (0..<(size - bytes.count)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }
            }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        for i in 1...photos {
            try write(root + String(format: "/DCIM/100FERRY/IMG_%04d.JPG", i), i, size: photoBytes + i * 1000)
        }
        for i in 1...3 { try write(root + String(format: "/DCIM/101FERRY/DEL_%04d.JPG", i), i, size: 200_000) }
        try Data("hidden".utf8).write(to: URL(fileURLWithPath: root + "/.hidden.txt"))
    }
}

/// A server that did not start; carries its output.
struct FixtureError: Error, CustomStringConvertible {
    var log: String
    var description: String { "server did not start:\n\(log)" }
}
