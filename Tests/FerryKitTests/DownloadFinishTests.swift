import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

#if canImport(Glibc)
    import Glibc
#endif

/// The end of a download: the engine hands a complete file straight to its
/// flush (`DownloadAttempt.handOver`, `PartFile.syncEarly`), the source's
/// time is set on the open file before it, and the driver links it.
@Suite(.serialized)
struct DownloadFinishTests {
    let files: TempDir
    let out: TempDir
    let nginx: NginxServer

    init() throws {
        files = try TempDir(prefix: "www")
        out = try TempDir(prefix: "dl")
        nginx = try NginxServer(root: files.path)
    }

    /// The modification time of `path`, whole seconds.
    func mtime(_ path: String) -> Int64? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return OS.modificationTime(st).seconds
    }

    func setSourceTime(_ name: String, _ seconds: Int64) throws {
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: TimeInterval(seconds))], ofItemAtPath: files.file(name))
    }

    @Test(arguments: [false, true])
    func theFileCarriesTheSourcesTimeWhenItAppears(namedPart: Bool) async throws {
        // 2021-03-04 05:06:07 UTC, as nginx sends it in Last-Modified.
        let when: Int64 = 1_614_834_367
        try TestData.file(files.file("small.bin"), size: 50_000, seed: 1)
        try TestData.file(files.file("large.bin"), size: 6_000_000, seed: 2)
        try setSourceTime("small.bin", when)
        try setSourceTime("large.bin", when + 60)
        try await LocalFile.$unnamedFilesFailWith.withValue(namedPart ? EOPNOTSUPP : nil) {
            for (name, time) in [("small.bin", when), ("large.bin", when + 60)] {
                let r = try await Ferry.download(
                    try RemoteURL(parsing: nginx.url("/" + name)), to: out.file(name), options: .init()
                ).result
                #expect(r.sourceModified == Date(timeIntervalSince1970: TimeInterval(time)))
                #expect(mtime(out.file(name)) == time, "\(name)")
            }
        }
    }

    @Test func aFileWithoutATimeKeepsItsOwn() async throws {
        // A server that sends no Last-Modified.
        let server = try ScriptedHTTPServer { _ in ScriptedResponse(body: [UInt8](repeating: 7, count: 10_000)) }
        let before = Int64(Date().timeIntervalSince1970) - 2
        let dest = out.file("plain.bin")
        let r = try await Ferry.download(try RemoteURL(parsing: server.url("/plain.bin")), to: dest, options: .init())
            .result
        #expect(r.sourceModified == nil)
        #expect((mtime(dest) ?? 0) >= before)
        #expect(LocalFile.size(atPath: dest) == 10_000)
    }

    /// Hundreds of small files finishing together go through the engine's
    /// hand-off to the group commit and back to their tasks; every one arrives
    /// whole under its name, and nothing else is left.
    @Test func manySmallFilesFinishTogether() async throws {
        let count = 300
        for i in 0..<count { try TestData.file(files.file("m\(i).bin"), size: 64 << 10, seed: UInt64(i)) }
        let engine = CurlEngine(limits: .init(total: 16, perHost: 4))
        let fs = HTTPFileSystem(url: try RemoteURL(parsing: nginx.url("/")), engine: engine)
        let transfers = (0..<count).map { fs.download("/m\($0).bin", to: out.file("m\($0).bin"), options: .init()) }
        for t in transfers { #expect(try await t.result.size == 64 << 10) }
        for i in 0..<count {
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: out.file("m\(i).bin")))
                    == TestData.bytes(64 << 10, seed: UInt64(i)))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).count == count)
    }
}
