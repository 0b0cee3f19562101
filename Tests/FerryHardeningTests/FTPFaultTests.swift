import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// FTP through `FTPChaosProxy` in front of pyftpdlib: data connections reset,
/// truncated, stalled or cut mid-upload, control connections reset now and then,
/// half the sessions pushed from EPSV to PASV. Same contract as the HTTP and card
/// runs: byte-identical, or an error with nothing under the final name and a
/// `.part` that a fault-free run resumes; uploads never leave a wrong file under
/// the final name on the server.
extension FaultTests {
    static func ftpSettings(seed: UInt64) -> FTPChaosProxy.Settings {
        var s = FTPChaosProxy.Settings(seed: seed, maxOffset: 600_000)
        s.controlResetOdds = 60
        s.refuseEPSVEvery = 2
        s.stall = .seconds(8)
        return s
    }

    /// Ferry's file system on the proxy (`port`) or the server, nothing cached
    /// from an earlier server or proxy that had the same port.
    static func ftpFileSystem(_ server: FTPTestServer, port: Int) throws -> FTPFileSystem {
        let url = try RemoteURL(
            parsing: server.url("/").replacingOccurrences(of: ":\(server.port)/", with: ":\(port)/"))
        FTPServerInfoCache.shared.forget(hostKey: url.hostKey)
        return FTPFileSystem(url: url)
    }

    /// Half the downloads with the usual retries, where faults should only cost
    /// retries; the other half with none, where every fault that strikes is an
    /// error and must leave nothing under the final name and a `.part` that a rerun
    /// resumes.
    @Test func ftpDownloadsThroughFaults() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        let dir = try TempDir(prefix: "faults-ftp")
        try FileManager.default.createDirectory(atPath: dir.file("out/pub"), withIntermediateDirectories: true)
        var expected: [String: Data] = [:]
        let names = try Self.sizes(Self.downloads, seed: 17).enumerated().map { i, size in
            let name = "pub/f\(i).bin"
            expected[name] = try TestData.file(server.local(name), size: size, seed: UInt64(900 + i))
            return name
        }
        let proxy = try FTPChaosProxy(upstreamPort: server.port, settings: Self.ftpSettings(seed: 19))
        defer { proxy.stop() }
        let through = try Self.ftpFileSystem(server, port: proxy.port)
        let half = names.count / 2
        var (retried, retriedFailures) = await Self.download(
            Array(names[..<half]), expected: expected, through: through, into: dir.file("out"), parallel: 8)
        let retriedCounts = proxy.counts
        var once = Self.downloadOptions
        once.maxRetries = 0
        var (single, singleFailures) = await Self.download(
            Array(names[half...]), expected: expected, through: through, into: dir.file("out"), parallel: 8,
            options: once)
        let singleCounts = proxy.counts.since(retriedCounts)

        // The reruns go through the same proxy with its faults off: a `.part` resumes
        // only from the URL it came from, and the point is that they resume.
        proxy.calm()
        try await Self.resume(
            retriedFailures, expected: expected, from: through, into: dir.file("out"), tally: &retried,
            expectResume: true)
        try await Self.resume(
            singleFailures, expected: expected, from: through, into: dir.file("out"), tally: &single,
            expectResume: true)
        #expect(proxy.stop(), "proxy threads still running")
        Self.report("FTP (pyftpdlib), \(half) downloads, 12 retries, \(retriedCounts): \(retried)")
        Self.report("FTP (pyftpdlib), \(names.count - half) downloads, no retries, \(singleCounts): \(single)")
        #expect(retried.ok + retried.resumedLater == half)
        #expect(single.ok + single.resumedLater == names.count - half)
        // The faults did happen: the run proves nothing otherwise.
        let struck = retriedCounts.downloads.merging(singleCounts.downloads, uniquingKeysWith: +)
            .filter { $0.key != .none }.values.reduce(0, +)
        #expect(struck > 0)
        if Self.full { #expect(singleFailures.count > 0 && single.failedWithPart > 0) }
        #expect(retriedCounts.rewritten227 > 0 && retriedCounts.rewritten229 > 0)
    }

    /// Uploads through the proxy, one at a time, the first half with the usual
    /// retries and the second with none (every fault that strikes is an error).
    /// Each ends byte-identical on the server, or fails with an error and nothing
    /// under its name; a fault-free run then completes the failures, going on with
    /// `APPE` from what the server kept under the temporary name.
    @Test func ftpUploadsThroughFaults() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        let dir = try TempDir(prefix: "faults-ftp-up")
        try FileManager.default.createDirectory(atPath: dir.file("local"), withIntermediateDirectories: true)
        let proxy = try FTPChaosProxy(upstreamPort: server.port, settings: Self.ftpSettings(seed: 71))
        defer { proxy.stop() }
        let through = try Self.ftpFileSystem(server, port: proxy.port)
        let direct = try Self.ftpFileSystem(server, port: server.port)
        var options = UploadOptions()
        options.overwrite = .overwrite
        options.maxRetries = 12
        options.retryDelay = .milliseconds(20)
        options.stallTimeout = .seconds(1)
        var once = options
        once.maxRetries = 0

        struct Phase {
            var ok = 0
            var retries = 0
            var failed: [String: Int] = [:]
            var failures: [String] = []
            var withTemporary = 0
            var resumed = 0
            var slowest = Duration.zero
            var counts = FTPChaosProxy.Counts()
        }
        var phases = [Phase(), Phase()]
        var data: [String: Data] = [:]
        let half = Self.uploads / 2
        for (i, size) in Self.sizes(Self.uploads, seed: 29).enumerated() {
            let p = i < half ? 0 : 1
            if i == half { phases[0].counts = proxy.counts }
            let name = "UP_\(i).bin"
            let local = dir.file("local/" + name)
            data[name] = try TestData.file(local, size: size, seed: UInt64(700 + i))
            let started = ContinuousClock.now
            do {
                let r = try await through.upload(local, to: "/pub/" + name, options: p == 0 ? options : once).result
                #expect(FileManager.default.contents(atPath: server.local("/pub/" + name)) == data[name], "\(name)")
                phases[p].ok += 1
                phases[p].retries += r.retries
            } catch {
                let stored = FileManager.default.contents(atPath: server.local("/pub/" + name))
                #expect(stored == nil || stored == data[name], "\(name) failed and left a wrong file: \(error)")
                phases[p].failed["\(error.code)", default: 0] += 1
                phases[p].failures.append(name)
                let temporary = server.local("/pub/." + name + ".ferry-part")
                if LocalFile.size(atPath: temporary) ?? 0 > 0 { phases[p].withTemporary += 1 }
            }
            phases[p].slowest = max(phases[p].slowest, .now - started)
        }
        phases[1].counts = proxy.counts.since(phases[0].counts)
        #expect(proxy.stop(), "proxy threads still running")

        for p in phases.indices {
            for name in phases[p].failures {
                let kept = LocalFile.size(atPath: server.local("/pub/." + name + ".ferry-part")) ?? 0
                let r = try await direct.upload(dir.file("local/" + name), to: "/pub/" + name, options: options)
                    .result
                #expect(FileManager.default.contents(atPath: server.local("/pub/" + name)) == data[name], "\(name)")
                if r.resumedFrom > 0 { phases[p].resumed += 1 }
                #expect(kept == 0 || r.resumedFrom > 0, "\(name): started over instead of going on from \(kept) bytes")
            }
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: server.local("/pub"))
            .filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "temporary files left on the server: \(leftovers)")
        for (p, phase) in phases.enumerated() {
            let count = p == 0 ? half : Self.uploads - half
            let slowest = phase.slowest.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))
            Self.report(
                "FTP (pyftpdlib), \(count) uploads, \(p == 0 ? "12 retries" : "no retries"), \(phase.counts): "
                    + "\(phase.ok) byte-identical, \(phase.failures.count) failed "
                    + "\(phase.failed.sorted { $0.key < $1.key }) (\(phase.withTemporary) with a temporary file), "
                    + "\(phase.retries) retries, all \(phase.failures.count) completed by a fault-free run "
                    + "(\(phase.resumed) resumed with APPE), slowest \(slowest)")
        }
        let struck = phases[0].counts.uploads.merging(phases[1].counts.uploads, uniquingKeysWith: +)
            .filter { $0.key != .none }.values.reduce(0, +)
        #expect(struck > 0)
        if Self.full { #expect(phases[1].failures.count > 0) }
    }

    /// One control connection reset at each step of an upload (the reply to the
    /// Nth command with that verb is lost; the server did act on it): the upload
    /// retries and ends byte-identical, with no temporary file left. Once, a reset
    /// anywhere but the transfer failed the whole upload ("stat
    /// ftp://…/.NAME.ferry-part: Recv failure: Connection reset by peer").
    @Test(arguments: [
        ("MLST", 1),  // the destination's overwrite check
        ("MLST", 2),  // the leftover temporary file's size (resume)
        ("MLST", 3),  // the size check after STOR
        ("STOR", 1),  // the transfer's 150
        ("RNFR", 1),
        ("RNTO", 1),  // the rename did happen; only its 250 was lost
    ])
    func ftpUploadSurvivesAControlReset(verb: String, occurrence: Int) async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        let dir = try TempDir(prefix: "ftp-reset")
        var settings = FTPChaosProxy.Settings(seed: 1, maxOffset: 1)
        settings.dataFaults = false
        settings.scriptedResets = [.init(verb: verb, occurrence: occurrence)]
        let proxy = try FTPChaosProxy(upstreamPort: server.port, settings: settings)
        defer { proxy.stop() }
        let fs = try Self.ftpFileSystem(server, port: proxy.port)
        let data = try TestData.file(dir.file("up.bin"), size: 300_000, seed: 5)
        var options = UploadOptions()
        options.retryDelay = .milliseconds(20)
        options.stallTimeout = .seconds(1)
        let r = try await fs.upload(dir.file("up.bin"), to: "/pub/up.bin", options: options).result
        #expect(proxy.counts.controlResets == 1, "the reset did not happen")
        #expect(FileManager.default.contents(atPath: server.local("/pub/up.bin")) == data)
        #expect(r.size == 300_000)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: server.local("/pub")).filter {
            $0.hasPrefix(".")
        }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// An upload whose data connection stalls after libcurl handed it every byte
    /// (a file that fits in the socket buffers) waits for the server's "226" in a
    /// blocking call, where the low-speed check does not run: it gave up only after
    /// libcurl's 60 s, and every other transfer on the engine stood still for that
    /// minute. Now the wait ends with the stall timeout, and the upload retries.
    @Test func ftpUploadStalledAfterItsLastByteDoesNotHoldUpTheEngine() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        let dir = try TempDir(prefix: "ftp-stall")
        var settings = FTPChaosProxy.Settings(seed: 1, maxOffset: 1)
        settings.dataFaults = false
        settings.stall = .seconds(30)
        settings.scriptedDataFaults = [.init(fault: .stall, offset: 50_000)]
        let proxy = try FTPChaosProxy(upstreamPort: server.port, settings: settings)
        defer { proxy.stop() }
        let through = try Self.ftpFileSystem(server, port: proxy.port)
        let direct = try Self.ftpFileSystem(server, port: server.port)
        let data = try TestData.file(dir.file("up.bin"), size: 100_000, seed: 5)
        let big = try TestData.file(server.local("/pub/big.bin"), size: 5_000_000, seed: 6)
        var options = UploadOptions()
        options.retryDelay = .milliseconds(20)
        options.stallTimeout = .seconds(1)
        let started = ContinuousClock.now
        let upload = through.upload(dir.file("up.bin"), to: "/pub/up.bin", options: options)
        // Another transfer on the same engine while the upload waits for its reply.
        try await Task.sleep(for: .milliseconds(300))
        let downloadStarted = ContinuousClock.now
        var downloadOptions = DownloadOptions()
        downloadOptions.stallTimeout = .seconds(1)
        _ = try await direct.download("/pub/big.bin", to: dir.file("big.bin"), options: downloadOptions).result
        let downloadTook = ContinuousClock.now - downloadStarted
        let r = try await upload.result
        let uploadTook = ContinuousClock.now - started
        #expect(proxy.counts.uploads[.stall] == 1, "the stall did not happen")
        #expect(r.retries >= 1)
        #expect(FileManager.default.contents(atPath: server.local("/pub/up.bin")) == data)
        #expect(FileManager.default.contents(atPath: dir.file("big.bin")) == big)
        // 60 s each before; a few stall timeouts now.
        #expect(uploadTook < .seconds(15), "upload took \(uploadTook)")
        #expect(downloadTook < .seconds(15), "the download beside it took \(downloadTook)")
    }
}
