import FerryTestSupport
import Foundation
import Testing

/// Uploads are streamed to disk, never held in memory: measured on a `ferry card`
/// process of its own, so other suites running in parallel cannot disturb the figure.
@Suite struct CardUploadMemoryTests {
    @Test func aFiftyMegabyteUploadDoesNotGrowTheServer() throws {
        let root = try TempDir(prefix: "card-mem")
        try FileManager.default.createDirectory(atPath: root.file("DCIM"), withIntermediateDirectories: true)
        let work = try TempDir(prefix: "card-mem-src")
        let data = try TestData.file(work.file("big.bin"), size: 50 << 20, seed: 5)
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        _ = try TestProcess.run("/usr/bin/curl", ["-s", card.httpURL("/command.cgi?op=100&DIR=/")])
        let before = card.peakResidentBytes
        let out = try TestProcess.run(
            "/usr/bin/curl",
            ["-s", "-F", "file=@\(work.file("big.bin"));filename=\"big.bin\"", card.httpURL("/upload.cgi")])
        #expect(out.status == 0 && out.stdout.uppercased().contains("SUCCESS"), "\(out.stdout) \(out.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: root.file("big.bin"))) == data)
        let growth = card.peakResidentBytes - before
        print("card upload: peak resident memory grew by \(growth) bytes for a \(data.count)-byte upload")
        #expect(before > 0)
        #expect(growth < 16 << 20, "peak resident memory grew by \(growth) bytes")
    }
}
