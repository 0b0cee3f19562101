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
        s.refuseEPSVOdds = 2
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
        let through = try Self.ftpFileSystem(server, port: proxy.port)
        // The reruns go through the proxy with its faults off: a `.part` resumes only
        // from the URL it came from, and the point is that they resume.
        var counts = proxy.counts
        let tally = try await Self.downloadAll(
            names, expected: expected, through: through, direct: through, into: dir.file("out"), parallel: 8,
            expectResume: true
        ) {
            counts = proxy.counts
            proxy.calm()
        }
        #expect(proxy.stop(), "proxy threads still running")
        Self.report("FTP (pyftpdlib), \(names.count) downloads, \(counts): \(tally)")
        #expect(tally.ok + tally.resumedLater == names.count)
        // The faults did happen: the run proves nothing otherwise.
        #expect(counts.downloads.filter { $0.key != .none }.values.reduce(0, +) > 0)
        #expect(counts.rewritten227 > 0 && counts.rewritten229 > 0)
    }

    @Test func ftpUploadsThroughFaults() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        let dir = try TempDir(prefix: "faults-ftp-up")
        try FileManager.default.createDirectory(atPath: dir.file("local"), withIntermediateDirectories: true)
        let proxy = try FTPChaosProxy(upstreamPort: server.port, settings: Self.ftpSettings(seed: 23))
        let through = try Self.ftpFileSystem(server, port: proxy.port)
        let direct = try Self.ftpFileSystem(server, port: server.port)
        var options = UploadOptions()
        options.overwrite = .overwrite
        options.maxRetries = 12
        options.retryDelay = .milliseconds(20)
        options.stallTimeout = .seconds(1)

        // Each ends byte-identical on the server, or fails with an error and nothing
        // (or, when retried over an earlier good copy, that copy) under its name.
        var ok = 0
        var retries = 0
        var failed: [String: Int] = [:]
        var failures: [String] = []
        var data: [String: Data] = [:]
        for (i, size) in Self.sizes(Self.uploads, seed: 29).enumerated() {
            let name = "UP_\(i).bin"
            let local = dir.file("local/" + name)
            data[name] = try TestData.file(local, size: size, seed: UInt64(700 + i))
            do {
                let r = try await through.upload(local, to: "/pub/" + name, options: options).result
                #expect(FileManager.default.contents(atPath: server.local("/pub/" + name)) == data[name], "\(name)")
                ok += 1
                retries += r.retries
            } catch {
                let stored = FileManager.default.contents(atPath: server.local("/pub/" + name))
                #expect(stored == nil || stored == data[name], "\(name) failed and left a wrong file: \(error)")
                #expect(!"\(error)".isEmpty)
                failed["\(error.code)", default: 0] += 1
                failures.append(name)
            }
        }
        let counts = proxy.counts
        #expect(proxy.stop(), "proxy threads still running")
        var resumed = 0
        for name in failures {
            let r = try await direct.upload(dir.file("local/" + name), to: "/pub/" + name, options: options).result
            #expect(FileManager.default.contents(atPath: server.local("/pub/" + name)) == data[name], "\(name)")
            if r.resumedFrom > 0 { resumed += 1 }
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: server.local("/pub"))
            .filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "temporary files left on the server: \(leftovers)")
        Self.report(
            "FTP (pyftpdlib), \(Self.uploads) uploads, \(counts): \(ok) byte-identical, \(retries) retries, "
                + "\(failures.count) failed \(failed.sorted { $0.key < $1.key }), all \(failures.count) completed "
                + "by a fault-free run (\(resumed) resumed with APPE)")
        #expect(counts.uploads.filter { $0.key != .none }.values.reduce(0, +) > 0)
    }
}
