import FerryTestSupport
import FerryWeb
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A card as slow as a real one for the import tests: `ferry card` with one
/// connection, 30 ms latency and 2.5 MB/s over a folder of photos, and
/// `ferry serve` on it importing into ``importDirectory``.
///
/// The folder: `DCIM/100FERRY` (20 photos of about 1 MB: 1600x1200 JPEGs
/// padded after their end marker, as cameras pad with maker data), `DCIM/101FERRY`
/// (3 photos, for delete-after), `.hidden.txt` at the root.
final class ImportFixture: Sendable {
    let folder: TempDir
    let cache: TempDir
    let processes: [ServerProcess]
    /// The UI on the card.
    let url: String
    /// The card's URL for `ferry sync`: a second emulator on the same folder with the
    /// same CID (the same card at another address), as the first allows one connection
    /// and `ferry serve` holds it.
    let cardURL: String
    static let cid = "035344534432474280ffffffff0123ab"

    var root: String { folder.path + "/card" }
    var importDirectory: String { folder.path + "/imported" }
    var logs: String { processes.map(\.log).joined(separator: "\n") }

    init(photos: Int = 20, photoBytes: Int = 1_000_000) throws {
        let folder = try TempDir(prefix: "ferry-ui-import")
        let cache = try TempDir(prefix: "ferry-ui-import-cache")
        self.folder = folder
        self.cache = cache
        let root = folder.path + "/card"
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
        var processes: [ServerProcess] = []
        func start(_ arguments: [String], _ name: String) throws -> ServerProcess {
            let p = try ServerProcess(
                "/usr/bin/nice", ["-n", "10", TestProcess.ferryExecutable()] + arguments,
                logPath: "\(folder.path)/\(name).log")
            processes.append(p)
            return p
        }
        do {
            let card = try ServeFixture.cardURL(
                start(
                    [
                        "card", root, "--port", "0", "--max-connections", "1", "--latency", "30", "--rate",
                        "2500000", "--cid", Self.cid,
                    ], "card"))
            cardURL = try ServeFixture.cardURL(start(["card", root, "--port", "0", "--cid", Self.cid], "card-2"))
            url = try ServeFixture.waitForURL(
                start(
                    [
                        "serve", card, "--port", "0", "--cache", cache.path,
                        "--import-to", folder.path + "/imported",
                    ], "serve"))
        } catch {
            for p in processes { p.stop() }
            throw error
        }
        self.processes = processes
    }

    deinit {
        for p in processes { p.stop() }
    }
}
