import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// FTP uploads end within their retry budget however the server fails, and
/// report what they moved truthfully (issue 14, items 2 and 6).
@Suite(.serialized)
struct FTPUploadBudgetTests {
    /// A server that takes the first bytes of every data connection and then
    /// refuses it with 425, for ever: every try hands bytes to the network and the
    /// server keeps none. Counting handed bytes as progress retried without end
    /// (proftpd refusing TLS data connections, twice a second for 400 s).
    @Test func uploadToAServerThatRefusesDataConnectionsEnds() async throws {
        let server = try await FTPTestServer(.pyftpdlib, options: .init(refuseUploadData: true))
        let dir = try TempDir(prefix: "ftp-refuse")
        try TestData.file(dir.file("up.bin"), size: 300_000, seed: 9)
        let fs = try FaultTests.ftpFileSystem(server, port: server.port)
        var options = UploadOptions()
        options.maxRetries = 3
        options.retryDelay = .milliseconds(20)
        let started = ContinuousClock.now
        let e: FerryError
        do {
            let r = try await fs.upload(dir.file("up.bin"), to: "/pub/up.bin", options: options).result
            Issue.record("the upload to a refusing server succeeded: \(r)")
            return
        } catch {
            e = error
        }
        let took = ContinuousClock.now - started
        #expect(e.serverCode == 425, "\(e)")
        #expect(e.description.contains("425 Unable to build data connection"), "\(e)")
        #expect(e.description.contains("gave up after 4 tries"), "\(e)")
        // Back-off 20 + 40 + 80 ms between four tries: seconds, not minutes.
        #expect(took < .seconds(30), "\(took)")
        let tries = server.log.split(separator: "\n").filter { $0.contains("STOR ") || $0.contains("APPE ") }
        #expect(tries.count <= 4, "\(tries.count) data transfers:\n\(server.log.suffix(2000))")
        #expect(!FileManager.default.fileExists(atPath: server.local("/pub/up.bin")))
    }

    /// Three tries of a 300,000-byte upload, the first two lost in full (the
    /// server got a FIN before any byte and stored nothing, the client believed it
    /// sent them all): 300,000 bytes moved into the file, 900,000 sent.
    @Test func retriedUploadReportsBytesKeptAndSentApart() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        let dir = try TempDir(prefix: "ftp-figures")
        let data = try TestData.file(dir.file("up.bin"), size: 300_000, seed: 10)
        var settings = FTPChaosProxy.Settings(seed: 1, maxOffset: 1)
        settings.dataFaults = false
        settings.scriptedDataFaults = [.init(fault: .truncate, offset: 0), .init(fault: .truncate, offset: 0)]
        let proxy = try FTPChaosProxy(upstreamPort: server.port, settings: settings)
        defer { proxy.stop() }
        let fs = try FaultTests.ftpFileSystem(server, port: proxy.port)
        var options = UploadOptions()
        options.retryDelay = .milliseconds(20)
        let r = try await fs.upload(dir.file("up.bin"), to: "/pub/up.bin", options: options).result
        #expect(FileManager.default.contents(atPath: server.local("/pub/up.bin")) == data)
        #expect(proxy.counts.uploads[.truncate] == 2, "\(proxy.counts)")
        #expect(r.retries == 2, "\(r)")
        #expect(r.size == 300_000)
        #expect(r.bytesTransferred == 300_000, "\(r)")
        #expect(r.resumedFrom == 0)
        #expect(r.bytesSent == 900_000, "\(r)")
    }
}
