import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// Downloads against real servers on loopback: nginx (Range, limit_rate, a
/// location that ignores Range), python's http.server (no Range at all), and a
/// fault-injecting proxy that cuts connections.
@Suite(.serialized)
struct HTTPDownloadTests {
    let files: TempDir
    let out: TempDir
    let nginx: NginxServer

    init() throws {
        files = try TempDir(prefix: "www")
        out = try TempDir(prefix: "dl")
        // nginx lets one second's worth through at once, then limits: keep files
        // several times the rate so pauses land mid-file.
        nginx = try NginxServer(root: files.path, slowRate: 1_000_000)
    }

    func fs(_ url: String) throws -> HTTPFileSystem {
        HTTPFileSystem(url: try RemoteURL(parsing: url))
    }

    func download(_ url: String, to dest: String, options: DownloadOptions = .init()) -> Transfer {
        Ferry.download(try! RemoteURL(parsing: url), to: dest, options: options)
    }

    @Test func downloadsAFileByteIdentical() async throws {
        let data = try TestData.file(files.file("a.bin"), size: 3_000_000)
        let dest = out.file("a.bin")
        let t = download(nginx.url("/a.bin"), to: dest)
        let r = try await t.result
        #expect(r.size == 3_000_000)
        #expect(r.bytesTransferred == 3_000_000)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data)
        #expect(!FileManager.default.fileExists(atPath: dest + ".part"))
        #expect(!FileManager.default.fileExists(atPath: dest + ".part.journal"))
        #expect(t.state == .completed)
    }

    @Test func progressIsMonotonicAndEndsAtTheTotal() async throws {
        try TestData.file(files.file("p.bin"), size: 3_000_000)
        let t = download(nginx.url("/slow/p.bin"), to: out.file("p.bin"))
        var seen: [TransferProgress] = []
        for await p in t.progress { seen.append(p) }
        _ = try await t.result
        #expect(seen.count >= 3)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.bytesDone <= $1.bytesDone })
        #expect(seen.last?.bytesDone == 3_000_000)
        #expect(seen.last?.fraction == 1)
        #expect(seen.contains { $0.totalBytes == 3_000_000 && $0.bytesPerSecond > 0 && $0.eta != nil })
    }

    @Test func pauseKeepsBytesAndResumeUsesRange() async throws {
        let data = try TestData.file(files.file("pr.bin"), size: 16_000_000)
        let dest = out.file("pr.bin")
        let t = download(nginx.url("/slow/pr.bin"), to: dest)
        var cycles = 0
        var lastPausedAt: Int64 = -1
        while cycles < 10 {
            try await Task.sleep(for: .milliseconds(200))
            if t.state.isFinished { break }
            t.pause()
            try await Task.sleep(for: .milliseconds(60))
            let onDisk = LocalFile.size(atPath: dest + ".part") ?? 0
            #expect(onDisk >= lastPausedAt)
            lastPausedAt = onDisk
            t.resume()
            cycles += 1
        }
        let r = try await t.result
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data)
        #expect(cycles == 10)
        // The last attempt continued the part with a 206 after a pause: it says so.
        #expect(r.resumedFrom > 0 && r.resumedFrom < r.size)
        #expect(t.currentProgress.resumedFrom == r.resumedFrom)
        // Every resumed request is ranged, and little is fetched twice.
        let redundant = r.bytesTransferred - r.size
        print("bench: re-downloaded \(redundant) bytes over \(cycles) pause/resume cycles of a \(r.size)-byte download")
        #expect(redundant <= 1 << 20, "re-downloaded \(redundant) bytes over \(cycles) pause/resume cycles")
        let ranged = nginx.accessLog.filter { $0.contains("/slow/pr.bin") && $0.contains("range=\"bytes=") }
        #expect(ranged.count >= 1)
    }

    @Test func serverIgnoringRangeRestartsCleanly() async throws {
        let data = try TestData.file(files.file("nr.bin"), size: 2_000_000)
        let dest = out.file("nr.bin")
        // A stale part from an earlier run of the same URL, resumed against a server without Range.
        let url = nginx.url("/norange/nr.bin")
        let partial = data.prefix(700_000)
        try partial.write(to: URL(fileURLWithPath: dest + ".part"))
        try DownloadJournal(source: url, bootID: DownloadJournal.currentBootID).save(to: dest + ".part.journal")
        let r = try await download(url, to: dest).result
        // The 200 kept none of the 700,000 bytes on disk (issue 14 item 6).
        #expect(r.resumedFrom == 0)
        #expect(r.restarts == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data)
    }

    @Test func pythonHTTPServerWithoutRangeSupport() async throws {
        let data = try TestData.file(files.file("py.bin"), size: 1_000_000)
        let py = try PythonHTTPServer(root: files.path)
        let dest = out.file("py.bin")
        let url = py.url("/py.bin")
        try Data(repeating: 0xEE, count: 300_000).write(to: URL(fileURLWithPath: dest + ".part"))
        try DownloadJournal(source: url, bootID: DownloadJournal.currentBootID).save(to: dest + ".part.journal")
        _ = try await download(url, to: dest).result
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data)
    }

    @Test func fileReplacedOnServerBetweenPauseAndResumeGivesTheNewFile() async throws {
        try TestData.file(files.file("ch.bin"), size: 3_000_000, seed: 1)
        let dest = out.file("ch.bin")
        let t = download(nginx.url("/slow/ch.bin"), to: dest)
        try await Task.sleep(for: .milliseconds(400))
        t.pause()
        try await Task.sleep(for: .milliseconds(100))
        #expect((LocalFile.size(atPath: dest + ".part") ?? 0) > 0)
        // Same size, different bytes and time: only the validator tells.
        try await Task.sleep(for: .milliseconds(1100))
        let newData = try TestData.file(files.file("ch.bin"), size: 3_000_000, seed: 2)
        t.resume()
        let r = try await t.result
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == newData)
        #expect(r.restarts == 1)
        let resumeLine = nginx.accessLog.last { $0.contains("/slow/ch.bin") && $0.contains("range=\"bytes=") }
        #expect(resumeLine?.contains("ifrange=\"\"") == false, "If-Range must be sent: \(resumeLine ?? "none")")
    }

    @Test func connectionsCutAtRandomOffsetsStillGiveIdenticalBytes() async throws {
        let data = try TestData.file(files.file("cut.bin"), size: 5_000_000, seed: 3)
        let proxy = try FaultProxy(upstreamPort: nginx.port, faultyConnections: 6, cutAfter: 10_000...900_000)
        let dest = out.file("cut.bin")
        var options = DownloadOptions()
        options.retryDelay = .milliseconds(20)
        let r = try await download(proxy.url("/cut.bin"), to: dest, options: options).result
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data)
        #expect(proxy.cutCount == 6)
        #expect(r.retries >= 6)
    }

    @Test func notFoundFailsAtOnceWithTheStatus() async throws {
        let dest = out.file("missing.bin")
        if let e = await #expect(
            throws: FerryError.self,
            performing: {
                _ = try await download(nginx.url("/missing.bin"), to: dest).result
            })
        {
            #expect(
                e.code == .notFound && e.serverCode == 404 && e.description.contains("404 Not Found")
                    && e.description.contains("missing.bin"), "\(e)")
        }
        #expect(!FileManager.default.fileExists(atPath: dest))
    }

    @Test func connectionsResetBeforeTheFirstByteAreRetried() async throws {
        // A reset or an empty reply is not a refusal: the server is there.
        let data = try TestData.file(files.file("reset.bin"), size: 200_000, seed: 5)
        let proxy = try FaultProxy(upstreamPort: nginx.port, faultyConnections: 2, cutAfter: 0...0)
        let dest = out.file("reset.bin")
        var options = DownloadOptions()
        options.retryDelay = .milliseconds(20)
        let r = try await download(proxy.url("/reset.bin"), to: dest, options: options).result
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data)
        #expect(proxy.cutCount == 2)
        #expect(r.retries == 2)
    }

    @Test func refusedConnectionFailsWithoutRetryingForever() async throws {
        let port = Loopback.freePort()
        let start = ContinuousClock.now
        do {
            let e = await #expect(throws: FerryError.self) {
                _ = try await download("http://127.0.0.1:\(port)/x.bin", to: out.file("x.bin")).result
            }
            #expect(e?.code == .connectionFailed, "\(String(describing: e))")
        }
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test func existingDestinationIsNeverClobbered() async throws {
        try TestData.file(files.file("e.bin"), size: 1000)
        let dest = out.file("e.bin")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: dest))
        do {
            let e = await #expect(throws: FerryError.self) {
                _ = try await download(nginx.url("/e.bin"), to: dest).result
            }
            #expect(e?.code == .destinationExists, "\(String(describing: e))")
        }
        #expect(try String(contentsOfFile: dest, encoding: .utf8) == "mine")
        var skip = DownloadOptions()
        skip.overwrite = .skip
        #expect(try await download(nginx.url("/e.bin"), to: dest, options: skip).result.skipped)
        var over = DownloadOptions()
        over.overwrite = .overwrite
        #expect(try await download(nginx.url("/e.bin"), to: dest, options: over).result.size == 1000)
    }

    @Test func fullDiskAtTheLastBufferFailsClearly() async throws {
        // A file smaller than one write buffer reaches the disk only when its
        // transfer ends: the engine thread writes the buffer out then and hands it
        // back (DownloadAttempt.didEnd); the error reaches the result from there.
        try TestData.file(files.file("small-full.bin"), size: 200_000)
        let mount = try TempDir(prefix: "tmpfs")
        let m = try TestProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=100k", "tmpfs", mount.path])
        try #require(m.status == 0, "mounting a tmpfs is not permitted here: \(m.stderr)")
        defer { _ = try? TestProcess.run("/bin/umount", [mount.path]) }
        let dest = mount.file("small-full.bin")
        await #expect {
            _ = try await download(nginx.url("/small-full.bin"), to: dest).result
        } throws: { error in
            guard let e = error as? FerryError else { return false }
            return e.code == .diskFull && e.description.contains("small-full.bin")
        }
        #expect(!FileManager.default.fileExists(atPath: dest))
    }

    @Test func cancelKeepsThePartAndNoFinalFile() async throws {
        try TestData.file(files.file("c.bin"), size: 4_000_000)
        let dest = out.file("c.bin")
        let t = download(nginx.url("/slow/c.bin"), to: dest)
        try await Task.sleep(for: .milliseconds(300))
        t.cancel()
        do {
            let e = await #expect(throws: FerryError.self) {
                _ = try await t.result
            }
            #expect(e?.code == .cancelled, "\(String(describing: e))")
        }
        #expect(t.state == .cancelled)
        #expect(!FileManager.default.fileExists(atPath: dest))
        #expect((LocalFile.size(atPath: dest + ".part") ?? 0) > 0)
    }

    @Test func aSmallDownloadHasNoPartNameUntilItStopsEarly() async throws {
        // Below one write buffer the bytes live in an unnamed file (O_TMPFILE):
        // nothing to clean up after a crash, one link to the final name at the end.
        // Stopping early gives them the .part name and a journal, and a resume
        // continues from there.
        let slow = try NginxServer(root: files.path, slowRate: 40_000)
        let data = try TestData.file(files.file("small.bin"), size: 200_000, seed: 9)
        let dest = out.file("small.bin")
        let t = download(slow.url("/slow/small.bin"), to: dest)
        while t.currentProgress.bytesDone < 20_000 && !t.state.isFinished {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty, "nothing named yet")
        t.cancel()
        _ = try? await t.result
        let kept = LocalFile.size(atPath: dest + ".part") ?? 0
        #expect(kept > 0 && kept < 200_000, "kept \(kept)")
        #expect(FileManager.default.fileExists(atPath: DownloadJournal.path(forPart: dest + ".part")))
        let r = try await download(slow.url("/slow/small.bin"), to: dest).result
        #expect(r.resumedFrom == kept)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["small.bin"])
    }

    @Test func cancellingTheAwaitingTaskCancelsTheTransfer() async throws {
        try TestData.file(files.file("tc.bin"), size: 4_000_000)
        let t = download(nginx.url("/slow/tc.bin"), to: out.file("tc.bin"))
        let waiter = Task { try await t.result }
        try await Task.sleep(for: .milliseconds(200))
        waiter.cancel()
        _ = await waiter.result
        #expect(t.state == .cancelled)
    }

    @Test func manyDownloadsRespectThePerHostLimit() async throws {
        for i in 0..<12 { try TestData.file(files.file("m\(i).bin"), size: 200_000, seed: UInt64(i)) }
        let proxy = try FaultProxy(upstreamPort: nginx.port)
        let engine = CurlEngine(limits: .init(total: 16, perHost: 6))
        let root = try RemoteURL(parsing: proxy.url("/"))
        engine.setHostLimit(root.hostKey, 1)
        let fs = HTTPFileSystem(url: root, engine: engine)
        let transfers = (0..<12).map { fs.download("/m\($0).bin", to: out.file("m\($0).bin"), options: .init()) }
        for t in transfers { _ = try await t.result }
        #expect(proxy.maxConcurrentConnections == 1)
        #expect(proxy.connectionCount == 1, "one connection reused for all files")
        for i in 0..<12 {
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: out.file("m\(i).bin")))
                    == TestData.bytes(200_000, seed: UInt64(i)))
        }
    }

    /// With `widensFarServers`, a web server whose answers take 15 ms or more
    /// (a proxy holds each request 25 ms) gets twice the per-server limit once
    /// a few answers came; without it, or with a host limit of its own, not.
    @Test(arguments: [(true, nil), (false, nil), (true, 3)] as [(Bool, Int?)])
    func aFarServerGetsTwiceThePerHostLimit(widens: Bool, hostLimit: Int?) async throws {
        for i in 0..<40 { try TestData.file(files.file("w\(i).bin"), size: 20_000, seed: UInt64(i)) }
        let proxy = try FaultProxy(upstreamPort: nginx.port, requestDelay: .milliseconds(25))
        let engine = CurlEngine(limits: .init(total: 16, perHost: 4, widensFarServers: widens))
        let root = try RemoteURL(parsing: proxy.url("/"))
        if let hostLimit { engine.setHostLimit(root.hostKey, hostLimit) }
        let fs = HTTPFileSystem(url: root, engine: engine)
        let transfers = (0..<40).map { fs.download("/w\($0).bin", to: out.file("w\($0).bin"), options: .init()) }
        for t in transfers { _ = try await t.result }
        let expected = hostLimit ?? (widens ? 8 : 4)
        #expect(proxy.maxConcurrentConnections == expected, "widens \(widens), limit \(hostLimit ?? 0)")
        for i in [0, 39] {
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: out.file("w\(i).bin")))
                    == TestData.bytes(20_000, seed: UInt64(i)))
        }
    }

    /// The engine stops looking for a job to start once no server with waiting
    /// jobs has a free connection; a job for another server queued behind a full
    /// one must still start at once.
    @Test func aJobForAnotherServerIsNotHeldBehindAFullOne() async throws {
        for i in 0..<4 { try TestData.file(files.file("q\(i).bin"), size: 2_000_000, seed: UInt64(i)) }
        try TestData.file(files.file("other.bin"), size: 10_000, seed: 9)
        let proxy = try FaultProxy(upstreamPort: nginx.port)
        let engine = CurlEngine(limits: .init(total: 16, perHost: 6))
        let busy = try RemoteURL(parsing: proxy.url("/slow/"))
        engine.setHostLimit(busy.hostKey, 1)
        let slow = HTTPFileSystem(url: busy, engine: engine)
        let queued = (0..<4).map { slow.download("/slow/q\($0).bin", to: out.file("q\($0).bin"), options: .init()) }
        // Queued behind the four, for another server (nginx itself, not the proxy).
        let other = HTTPFileSystem(url: try RemoteURL(parsing: nginx.url("/")), engine: engine)
        let result = try await other.download("/other.bin", to: out.file("other.bin"), options: .init()).result
        #expect(result.size == 10_000)
        // 4 x 2 MB at 1 MB/s one at a time: at least two are still waiting or running.
        let unfinished = queued.filter { $0.state != .completed }.count
        #expect(unfinished >= 2, "\(unfinished) of 4 unfinished when the other server's file arrived")
        for t in queued { t.cancel() }
        for t in queued { _ = try? await t.result }
    }

    @Test func statUsesHEAD() async throws {
        try TestData.file(files.file("s.bin"), size: 12345)
        let e = try await fs(nginx.url("/")).stat("/s.bin")
        #expect(e.size == 12345)
        #expect(e.kind == .file)
        #expect(e.modified?.zone == .utc)
        do {
            let e = await #expect(throws: FerryError.self) { try await fs(nginx.url("/")).stat("/nope") }
            #expect(e?.code == .notFound, "\(String(describing: e))")
        }
        do {
            let e = await #expect(throws: FerryError.self) { try await fs(nginx.url("/")).delete("/s.bin") }
            #expect(e?.code == .unsupportedOperation, "\(String(describing: e))")
        }
    }

    @Test func fullDiskFailsClearlyAndKeepsThePart() async throws {
        try TestData.file(files.file("big.bin"), size: 3_000_000)
        let mount = try TempDir(prefix: "tmpfs")
        let m = try TestProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mount.path])
        try #require(m.status == 0, "mounting a tmpfs is not permitted here: \(m.stderr)")
        defer { _ = try? TestProcess.run("/bin/umount", [mount.path]) }
        let dest = mount.file("big.bin")
        if let e = await #expect(
            throws: FerryError.self,
            performing: {
                _ = try await download(nginx.url("/big.bin"), to: dest).result
            })
        {
            #expect(e.code == .diskFull && e.description.contains("big.bin.part"), "\(e)")
        }
        #expect(!FileManager.default.fileExists(atPath: dest))
        #expect(FileManager.default.fileExists(atPath: dest + ".part"))
    }
}
