import FerryTestSupport
import FerryWeb
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A source folder for the UI tests and `ferry serve` running on it as a process.
///
/// The folder: `DCIM/100FERRY` (5 photos of 1600x1200 and `NOTES.TXT`),
/// `DCIM/101FERRY` (2 photos), `SLOW` (`SLOW_0001.JPG`, which the server holds
/// back, and `FAST_0002.JPG`), `BIG` (1,000 photos) and an empty `MISC`.
final class ServeFixture: Sendable {
    let folder: TempDir
    let cache: TempDir
    let server: ServerProcess
    /// The URL `ferry serve` printed.
    let url: String

    /// The source folder.
    var root: String { folder.path + "/root" }

    init(slowDelayMilliseconds: Int = 2500, host: String? = nil) throws {
        folder = try TempDir(prefix: "ferry-ui")
        cache = try TempDir(prefix: "ferry-ui-cache")
        let root = folder.path + "/root"
        var layout = SamplePhotos.Layout()
        layout.folders = [("100FERRY", 5), ("101FERRY", 2)]
        try SamplePhotos.populate(folder: root, layout: layout)
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/SLOW", withIntermediateDirectories: true)
        try fm.copyItem(atPath: root + "/DCIM/100FERRY/FER_0001.JPG", toPath: root + "/SLOW/SLOW_0001.JPG")
        try fm.copyItem(atPath: root + "/DCIM/100FERRY/FER_0002.JPG", toPath: root + "/SLOW/FAST_0002.JPG")
        try fm.createDirectory(atPath: root + "/BIG", withIntermediateDirectories: true)
        let small = root + "/BIG/IMG_0001.JPG"
        try Data(SamplePhotos.jpeg(index: 1, width: 640, height: 480)).write(to: URL(fileURLWithPath: small))
        for i in 2...1000 {
            guard link(small, root + String(format: "/BIG/IMG_%04d.JPG", i)) == 0 else {
                throw NSError(domain: "link", code: Int(errno))
            }
        }
        var arguments = [
            "serve", root, "--port", "0", "--cache", cache.path, "--test-delay", "\(slowDelayMilliseconds):SLOW_",
        ]
        if let host { arguments += ["--host", host] }
        server = try ServerProcess(
            TestProcess.ferryExecutable(), arguments, logPath: folder.path + "/serve.log")
        url = try Self.waitForURL(server)
    }

    deinit {
        server.stop()
    }

    /// Reads `ferry serve: open URL` from the server's output.
    static func waitForURL(_ server: ServerProcess) throws -> String {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            for line in server.log.split(separator: "\n") where line.hasPrefix("ferry serve: open ") {
                return String(line.dropFirst("ferry serve: open ".count))
            }
            if !server.process.isRunning { break }
            usleep(20_000)
        }
        throw NSError(
            domain: "ferry serve did not print its URL", code: 1, userInfo: [NSLocalizedDescriptionKey: server.log])
    }
}
