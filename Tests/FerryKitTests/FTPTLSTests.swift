import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

extension FTPServerTests {
    /// FTPS with a self-signed certificate: explicit (`ftpes://`, AUTH TLS) and
    /// implicit (`ftps://`) on every server. Verification is on by default and
    /// refuses the certificate; `verifyTLS: false` (the CLI's `--insecure`) accepts it.
    struct FTPTLSTests {
        @Test(arguments: FTPServerKind.allCases, [FTPTestTLS.explicit, .implicit])
        func selfSignedCertificateNeedsInsecure(kind: FTPServerKind, tls: FTPTestTLS) async throws {
            let server = try await FTPTestServer(kind, options: .init(tls: tls))
            try server.write(Data("over tls".utf8), at: "/pub/t.txt")

            let strict = try FTPTest.fileSystem(server, verifyTLS: true)
            let e = try #require(await FTPTest.error { _ = try await strict.list("/pub") })
            #expect(e.code == .tls, "\(e)")

            let fs = try FTPTest.fileSystem(server, verifyTLS: false)
            #expect(try await fs.list("/pub").map(\.name).contains("t.txt"))
            let local = try TempDir(prefix: "ftps")
            // Upload then download: the 7.88 + vsftpd + TLS 1.3 bug stored 0-byte files.
            for size in [0, 1, 70_000, 1_500_000] {
                let data = try TestData.file(local.file("up\(size)"), size: size)
                _ = try await fs.upload(local.file("up\(size)"), to: "/pub/up \(size).bin", options: .init()).result
                #expect(FTPTest.same(server.local("/pub/up \(size).bin"), data), "size \(size)")
                _ = try await fs.download("/pub/up \(size).bin", to: local.file("down\(size)"), options: .init()).result
                #expect(FTPTest.same(local.file("down\(size)"), data), "size \(size)")
            }
            #expect(try await fs.stat("/pub/up 70000.bin").size == 70_000)
            // As `get -r` fetches them, by their listed entries: no SIZE, so the data
            // connection is read until the server closes it, which over TLS must end cleanly.
            for entry in try await fs.list("/pub") where entry.name.hasPrefix("up ") {
                let r = try await fs.download(entry, to: local.file("listed " + entry.name), options: .init()).result
                #expect(r.retries == 0, "\(entry.name)")
                #expect(
                    FTPTest.same(
                        local.file("listed " + entry.name),
                        try Data(contentsOf: URL(fileURLWithPath: server.local(entry.path)))))
            }
            try await fs.delete("/pub/t.txt")
            // One login for everything: the shared TLS session cache lets every handle's
            // data connections resume the control connection's session.
            #expect(server.loginCount == 1, "\(server.log)")
        }

        /// Plain `ftp://` to a server that talks only over TLS: the hint follows the
        /// reply (vsftpd "530 ... must use encryption", proftpd "550 SSL/TLS
        /// required ..."), not "check the user and password".
        @Test(arguments: [FTPServerKind.vsftpd, .proftpd])
        func plainFTPToATLSOnlyServerSaysUseFTPES(kind: FTPServerKind) async throws {
            let server = try await FTPTestServer(kind, options: .init(tls: .explicit))
            let plain = try RemoteURL(parsing: server.url("/pub").replacingOccurrences(of: "ftpes://", with: "ftp://"))
            let fs = try Ferry.fileSystem(for: plain)
            let e = try #require(await FTPTest.error { _ = try await fs.list("/pub") })
            #expect(e.code == .tls, "\(e)")
            #expect(e.description.contains("the server wants TLS: use ftpes://"), "\(e)")
            #expect(!e.description.contains("check the user and password"), "\(e)")
            #expect(e.serverCode == (kind == .vsftpd ? 530 : 550), "\(e)")
        }

        /// Plain FTP, then FTPS, in one process: the FTPS jobs must not get the
        /// plain jobs' pooled handles (bug 15 in docs/RELIABILITY.md; under
        /// `scripts/sanitize.sh address` this test alone leaked 920 bytes a handle).
        @Test func ftpsAfterPlainFTPWorksAndLeaksNothing() async throws {
            let plain = try await FTPTestServer(.vsftpd)
            try plain.write(Data("plain".utf8), at: "/pub/p.txt")
            let plainFS = try FTPTest.fileSystem(plain)
            #expect(try await plainFS.list("/pub").map(\.name).contains("p.txt"))
            #expect(try await plainFS.stat("/pub/p.txt").size == 5)

            let secure = try await FTPTestServer(.vsftpd, options: .init(tls: .explicit))
            try secure.write(Data("over tls".utf8), at: "/pub/t.txt")
            let fs = try FTPTest.fileSystem(secure, verifyTLS: false)
            #expect(try await fs.list("/pub").map(\.name).contains("t.txt"))
            #expect(try await fs.stat("/pub/t.txt").size == 8)
            #expect(secure.loginCount == 1, "\(secure.log)")
        }
    }
}
