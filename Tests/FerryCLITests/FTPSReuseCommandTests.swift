import FerryTestSupport
import Foundation
import Testing

/// `ferry get -r` and `ferry put -r` with four connections against FTPS servers
/// that, as packaged, require every data connection to resume the TLS session of
/// its own control connection: vsftpd (`require_ssl_reuse=YES`) and proftpd's
/// mod_tls, explicit and implicit (issue 14, item 1). With one session cache for
/// every control connection, the data connections of one got the session of
/// another: "522 SSL connection failed: session reuse required".
///
/// pure-ftpd with TLS required too. Each case repeats the pair of commands:
/// vsftpd over explicit TLS, the main server, 50 times (`FERRY_FTPS_LOOPS`
/// changes that), the others 5 times.
@Suite(.serialized)
struct FTPSReuseCommandTests {
    let ferry = TestProcess.ferryExecutable()

    static let cases: [(FTPServerKind, FTPTestTLS)] = [
        (.vsftpd, .explicit), (.vsftpd, .implicit), (.proftpd, .explicit), (.proftpd, .implicit),
    ]

    /// The tree both commands copy: nested folders, an empty one, blanks and a
    /// leading dot in names, sizes from 0 to several data buffers.
    static let tree: [(path: String, size: Int)] = [
        ("a.txt", 1_000), ("b c.bin", 200_000), (".y z.txt", 10), ("zero.bin", 0),
        ("sub/d.bin", 70_000), ("sub/e.txt", 3), ("sub/deeper/f.bin", 1_300_000), ("sub/deeper/g.txt", 20),
        ("other/h.bin", 5_000), ("other/i.bin", 6_000),
    ]

    static func makeTree(at root: String) throws {
        for (i, f) in tree.enumerated() {
            let path = root + "/" + f.path
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try TestData.file(path, size: f.size, seed: UInt64(i + 1))
        }
        try FileManager.default.createDirectory(atPath: root + "/empty", withIntermediateDirectories: true)
    }

    /// The tree's files that `copy` lacks or holds with other bytes than
    /// `original`, and the empty folder when missing. vsftpd lists no dot files
    /// (LIST without -a, its packaged default): `withHidden` false leaves them out.
    static func differences(_ original: String, _ copy: String, withHidden: Bool = true) -> [String] {
        var wrong: [String] = []
        for f in tree where withHidden || !f.path.hasPrefix(".") {
            let a = FileManager.default.contents(atPath: original + "/" + f.path)
            let b = FileManager.default.contents(atPath: copy + "/" + f.path)
            if a == nil || a != b { wrong.append(f.path) }
        }
        var isDir: ObjCBool = false
        if !FileManager.default.fileExists(atPath: copy + "/empty", isDirectory: &isDir) || !isDir.boolValue {
            wrong.append("empty/")
        }
        return wrong
    }

    /// A server under test, whichever program runs it.
    struct Target {
        var name: String
        var url: (String) -> String
        var local: (String) -> String
        var makeFolder: (String) throws -> Void
        var log: () -> String
        /// Keeps the server running.
        var server: AnyObject
    }

    @Test(arguments: cases)
    func recursiveCopiesWithFourConnections(kind: FTPServerKind, tls: FTPTestTLS) async throws {
        let server = try await FTPTestServer(kind, options: .init(tls: tls))
        let target = Target(
            name: "\(kind) \(tls)", url: { server.url($0) }, local: server.local, makeFolder: server.makeFolder,
            log: { server.log },
            server: server)
        try copyTreesBothWays(target, loops: kind == .vsftpd && tls == .explicit ? 50 : 5, withHidden: kind != .vsftpd)
    }

    /// pure-ftpd with TLS required (its dot files are not listed either).
    @Test func recursiveCopiesWithFourConnectionsPureFTPD() async throws {
        let server = try await PureFTPDServer()
        let target = Target(
            name: "pure-ftpd explicit", url: server.url, local: server.local, makeFolder: server.makeFolder,
            log: { server.log }, server: server)
        try copyTreesBothWays(target, loops: 5, withHidden: false)
    }

    /// `get -r` of the server's tree and `put -r` of a local one, `loops` times
    /// (`FERRY_FTPS_LOOPS` sets it for the main server and caps it for the others).
    func copyTreesBothWays(_ server: Target, loops wanted: Int, withHidden: Bool) throws {
        let cert = try TestCertificate.shared()
        let work = try TempDir(prefix: "ftps-reuse")
        try server.makeFolder("/pub")
        try server.makeFolder("/pub/tree")
        try Self.makeTree(at: server.local("/pub/tree"))
        try Self.makeTree(at: work.file("up"))
        for folder in ["/pub/tree", "/pub/tree/sub", "/pub/tree/sub/deeper", "/pub/tree/other", "/pub/tree/empty"] {
            try server.makeFolder(folder)
        }
        let loops =
            ProcessInfo.processInfo.environment["FERRY_FTPS_LOOPS"].flatMap(Int.init).map {
                wanted == 50 ? $0 : min($0, wanted)
            }
            ?? wanted
        let started = ContinuousClock.now
        for i in 0..<loops {
            let get = try TestProcess.run(
                ferry,
                ["get", "-r", server.url("/pub/tree"), "-o", "down\(i)", "-j", "4", "--cacert", cert.certificatePath],
                cwd: work.path)
            try #require(get.status == 0, "get -r, run \(i): \(get.stderr)\n\(server.log().suffix(3000))")
            let got = Self.differences(server.local("/pub/tree"), work.file("down\(i)"), withHidden: withHidden)
            #expect(got.isEmpty, "get -r, run \(i): \(got)")

            try server.makeFolder("/pub/up\(i)")
            let put = try TestProcess.run(
                ferry,
                ["put", "-r", "up", server.url("/pub/up\(i)/"), "-j", "4", "--cacert", cert.certificatePath],
                cwd: work.path)
            try #require(put.status == 0, "put -r, run \(i): \(put.stderr)\n\(server.log().suffix(3000))")
            let sent = Self.differences(work.file("up"), server.local("/pub/up\(i)/up"))
            #expect(sent.isEmpty, "put -r, run \(i): \(sent)")
            try? FileManager.default.removeItem(atPath: work.file("down\(i)"))
            try? FileManager.default.removeItem(atPath: server.local("/pub/up\(i)"))
        }
        print("FTPSReuse \(server.name): \(loops) x (get -r + put -r) in \(ContinuousClock.now - started)")
    }
}
