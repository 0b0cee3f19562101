import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

#if canImport(Glibc)
    import Glibc
#endif

/// `SyncEngine` against pyftpdlib (MLSD, permission facts, throttling), started
/// per test: the same promises as on a card, over FTP.
@Suite(.serialized)
struct SyncFTPTests {
    let out: TempDir
    let fm = FileManager.default

    init() throws {
        out = try TempDir(prefix: "sync-ftp-out")
    }

    /// A pyftpdlib server with three photos and a movie under `/pub/DCIM`.
    func server(_ options: FTPTestServerOptions = .init()) async throws -> FTPTestServer {
        let s = try await FTPTestServer(.pyftpdlib, options: options)
        for i in 1...3 {
            try s.write(TestData.bytes(40_000 * i, seed: UInt64(i)), at: "/pub/DCIM/100__TSB/IMG_000\(i).JPG")
        }
        try s.write(TestData.bytes(9_000, seed: 9), at: "/pub/DCIM/101__TSB/MOV_0001.MOV")
        return s
    }

    func engine(_ s: FTPTestServer, _ configure: (inout SyncOptions) -> Void = { _ in }) throws -> SyncEngine {
        var o = SyncOptions()
        o.download.retryDelay = .milliseconds(20)
        configure(&o)
        return try SyncEngine(url: try RemoteURL(parsing: s.url("/pub/DCIM")), directory: out.path, options: o)
    }

    func same(_ local: String, _ s: FTPTestServer, _ remote: String) -> Bool {
        fm.contentsEqual(atPath: out.file(local), andPath: s.local(remote))
    }

    @Test func importsOnceThenOnlyNewNothingTwiceChangedUnderANewName() async throws {
        let s = try await server()
        let first = try await engine(s) { $0.jobs = 3 }.runPass()
        #expect(first.succeeded && first.imported == 4 && first.bytes == 249_000)
        #expect(first.sourceKey == "ftp://127.0.0.1:\(s.port)/pub/DCIM")
        #expect(!first.sourceKey.contains(FTPTestServer.testPassword))
        #expect(same("100__TSB/IMG_0002.JPG", s, "/pub/DCIM/100__TSB/IMG_0002.JPG"))

        try s.write(TestData.bytes(5_000, seed: 40), at: "/pub/DCIM/100__TSB/IMG_0004.JPG")
        try fm.removeItem(atPath: out.file("100__TSB/IMG_0001.JPG"))  // deleted locally: stays deleted
        try s.write(TestData.bytes(77_000, seed: 30), at: "/pub/DCIM/100__TSB/IMG_0003.JPG")  // changed
        let second = try await engine(s).runPass()
        #expect(second.imported == 2 && second.changed == 1 && second.alreadyImported == 3)
        #expect(!fm.fileExists(atPath: out.file("100__TSB/IMG_0001.JPG")))
        #expect(same("100__TSB/IMG_0004.JPG", s, "/pub/DCIM/100__TSB/IMG_0004.JPG"))
        #expect(same("100__TSB/IMG_0003 (2).JPG", s, "/pub/DCIM/100__TSB/IMG_0003.JPG"))
        #expect(LocalFileSizes.of(out.file("100__TSB/IMG_0003.JPG")) == 120_000)

        let third = try await engine(s).runPass()
        #expect(third.imported == 0 && third.bytes == 0 && third.alreadyImported == 5)
    }

    @Test func filtersAndDryRun() async throws {
        let s = try await server()
        let dry = try await engine(s) {
            $0.dryRun = true
            $0.extensions = ["mov"]
        }.runPass()
        #expect(dry.items.map(\.remotePath) == ["/pub/DCIM/101__TSB/MOV_0001.MOV"] && dry.filtered == 3)
        #expect(try fm.contentsOfDirectory(atPath: out.path).isEmpty)
        let only = try await engine(s) { $0.extensions = ["jpg"] }.runPass()
        #expect(only.imported == 3 && only.filtered == 1)
    }

    @Test func deleteAfterRemovesOnlyWritableVerifiedFiles() async throws {
        let s = try await server(FTPTestServerOptions(readOnlyFolders: ["/pub/DCIM/101__TSB"]))
        let pass = try await engine(s) { $0.deleteAfter = true }.runPass()
        #expect(pass.imported == 4 && pass.succeeded)
        #expect(
            Set(pass.deleted) == [
                "/pub/DCIM/100__TSB/IMG_0001.JPG", "/pub/DCIM/100__TSB/IMG_0002.JPG", "/pub/DCIM/100__TSB/IMG_0003.JPG",
            ])
        #expect(pass.kept.map(\.remotePath) == ["/pub/DCIM/101__TSB/MOV_0001.MOV"])
        #expect(fm.fileExists(atPath: s.local("/pub/DCIM/101__TSB/MOV_0001.MOV")))
        #expect(!fm.fileExists(atPath: s.local("/pub/DCIM/100__TSB/IMG_0001.JPG")))
        #expect(LocalFileSizes.of(out.file("100__TSB/IMG_0001.JPG")) == 40_000)
    }

    @Test func anInterruptedPassResumesItsPartialFile() async throws {
        let s = try await server(FTPTestServerOptions(throttle: 400_000))
        let big = try s.write(TestData.bytes(2_000_000, seed: 50), at: "/pub/DCIM/BIG.RAW")
        let sync = try engine(s) { $0.extensions = ["raw"] }
        let pass = Task { try await sync.runPass() }
        let part = out.file("BIG.RAW.part")
        let deadline = Date().addingTimeInterval(20)
        while (LocalFileSizes.of(part) ?? 0) < 500_000 && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        pass.cancel()
        let stopped = try await pass.value
        #expect(stopped.interrupted)
        let kept = LocalFileSizes.of(part) ?? 0
        #expect(kept >= 500_000 && kept < 2_000_000)
        let events = SyncEvents()
        let resumed = try await sync.runPass(events: events.handler)
        #expect(resumed.imported == 1 && resumed.succeeded)
        #expect((events.imported.first?.1.resumedFrom ?? 0) >= 500_000)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out.file("BIG.RAW"))) == big)
    }

    @Test func watchPicksUpANewFileAndWaitsOutTheServerGoingAway() async throws {
        let s = try await server()
        let events = SyncEvents()
        let sync = try engine(s) { $0.interval = .milliseconds(300) }
        let watch = Task { try await sync.watch(events: events.handler) }
        defer { watch.cancel() }
        let deadline = Date().addingTimeInterval(15)
        while events.imported.count < 4 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(events.imported.count == 4)
        let added = Date()
        try s.write(TestData.bytes(12_000, seed: 61), at: "/pub/DCIM/100__TSB/NEW.JPG")
        while events.imported.count < 5 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(Date().timeIntervalSince(added) < 5)
        #expect(same("100__TSB/NEW.JPG", s, "/pub/DCIM/100__TSB/NEW.JPG"))

        s.stop()  // the server goes away: reported, waited for, no crash
        let unavailable = { events.all.contains { if case .sourceUnavailable = $0 { true } else { false } } }
        while !unavailable() && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(unavailable())
        watch.cancel()
        let last = try await watch.value
        #expect(last?.succeeded == true)
    }
}
