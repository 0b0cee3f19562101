import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// What a cancel leaves behind (issue 15, 3), against real servers: by default
/// the partial data stays for a resume; with `discardingPartialData` nothing
/// stays, locally or on an FTP server.
@Suite(.serialized) struct CancelCleanupTests {
    /// Waits until the transfer moved at least `bytes`.
    static func waitFor(_ transfer: Transfer, bytes: Int64) async throws {
        for await p in transfer.progress where p.bytesDone >= bytes { return }
        throw FerryError(.verificationFailed, detail: "the transfer ended before \(bytes) bytes")
    }

    static func files(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    @Test func cancelledDownloadWithDiscardLeavesNothing() async throws {
        let root = try TempDir(prefix: "cancel-src")
        let out = try TempDir(prefix: "cancel-out")
        try Data(repeating: 7, count: 8 << 20).write(to: URL(fileURLWithPath: root.file("big.bin")))
        let nginx = try NginxServer(root: root.path, slowRate: 1_000_000)
        let fs = try Ferry.fileSystem(for: RemoteURL(parsing: nginx.url("/")))

        // Past the journal threshold (1 MiB): a .part and its journal exist.
        let t = fs.download("/slow/big.bin", to: out.file("big.bin"), options: DownloadOptions())
        try await Self.waitFor(t, bytes: 1_500_000)
        #expect(Self.files(in: out.path).contains("big.bin.part"))
        t.cancel(discardingPartialData: true)
        await #expect(throws: FerryError.self) { try await t.result }
        #expect(t.state == .cancelled)
        #expect(Self.files(in: out.path).isEmpty, "\(Self.files(in: out.path))")

        // The default keeps both for a resume; discardPartialDownload removes them.
        let kept = fs.download("/slow/big.bin", to: out.file("big.bin"), options: DownloadOptions())
        try await Self.waitFor(kept, bytes: 1_500_000)
        kept.cancel()
        await #expect(throws: FerryError.self) { try await kept.result }
        #expect(Self.files(in: out.path) == ["big.bin.part", "big.bin.part.journal"])
        #expect(try Ferry.discardPartialDownload(at: out.file("big.bin")))
        #expect(Self.files(in: out.path).isEmpty)
        #expect(try Ferry.discardPartialDownload(at: out.file("big.bin")) == false)
    }

    @Test func cancelledFTPUploadWithDiscardRemovesItsTemporaryFile() async throws {
        let local = try TempDir(prefix: "cancel-up")
        try Data(repeating: 3, count: 6 << 20).write(to: URL(fileURLWithPath: local.file("up.bin")))
        // 1 MB/s: the upload runs for seconds.
        let server = try await FTPTestServer(.pyftpdlib, options: FTPTestServerOptions(throttle: 1_000_000))
        defer { server.stop() }
        let fs = try Ferry.fileSystem(for: RemoteURL(parsing: server.url("/")))
        var options = UploadOptions()
        options.overwrite = .overwrite

        let kept = fs.upload(local.file("up.bin"), to: "/pub/up.bin", options: options)
        try await Self.waitFor(kept, bytes: 1_000_000)
        kept.cancel()
        await #expect(throws: FerryError.self) { try await kept.result }
        #expect(Self.files(in: server.local("/pub")) == [".up.bin.ferry-part"], "kept for a resume")

        let discarded = fs.upload(local.file("up.bin"), to: "/pub/up.bin", options: options)
        try await Self.waitFor(discarded, bytes: 2_000_000)
        discarded.cancel(discardingPartialData: true)
        await #expect(throws: FerryError.self) { try await discarded.result }
        #expect(Self.files(in: server.local("/pub")).isEmpty, "\(Self.files(in: server.local("/pub")))")
    }
}
