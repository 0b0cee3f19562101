import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// The `dav://` backend against real servers the tests start on loopback:
/// Apache `mod_dav_fs`, nginx `dav_ext` and `rclone serve webdav`
/// (installed by scripts/setup.sh).
@Suite(.serialized)
struct WebDAVTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case apache, nginx, rclone, sabre
        var testDescription: String { rawValue }

        func start() throws -> any WebDAVTestServer {
            switch self {
            case .apache: try ApacheDAVServer()
            case .nginx: try NginxDAVServer()
            case .rclone: try RcloneDAVServer()
            case .sabre: try SabreDAVServer()
            }
        }
    }

    let work: TempDir

    init() throws { work = try TempDir(prefix: "dav-work") }

    func fs(_ server: any WebDAVTestServer, _ options: ConnectionOptions = .init()) throws -> WebDAVFileSystem {
        WebDAVFileSystem(url: try RemoteURL(parsing: server.base), options: options)
    }

    /// The server path of `name` under the served folder.
    func path(_ server: any WebDAVTestServer, _ name: String) -> String {
        let base = (try? RemoteURL(parsing: server.base).path) ?? "/"
        return (base.hasSuffix("/") ? base : base + "/") + name
    }

    /// ls, stat, get, in-memory reads, put (temporary name, then MOVE), a re-run
    /// that is refused or skipped, mkdir -p, mv (refusing to replace), rm, rmdir
    /// (refusing a folder with files), with names that need escaping.
    @Test(arguments: Kind.allCases)
    func everyOperation(_ kind: Kind) async throws {
        let server = try kind.start()
        defer { server.stop() }
        let names = ["with space.jpg", "hash #1.jpg", "100% sure.txt", "ünïcødé 日本.txt"]
        for (i, name) in names.enumerated() {
            try TestData.file(server.local(name), size: 1000 + i, seed: UInt64(i))
        }
        try FileManager.default.createDirectory(atPath: server.local("a folder"), withIntermediateDirectories: true)
        server.allowWrites()
        let fs = try fs(server)
        let root = path(server, "")

        // ls: names decoded, sizes and times, the folder itself left out.
        let entries = try await fs.list(root)
        #expect(Set(entries.map(\.name)) == Set(names + ["a folder"]), "\(server.name): \(entries.map(\.name))")
        for (i, name) in names.enumerated() {
            let e = try #require(entries.first { $0.name == name })
            let expected = path(server, name)
            #expect(e.kind == .file && e.size == Int64(1000 + i) && e.path == expected, "\(e)")
            #expect(e.modified != nil)
        }
        #expect(entries.first { $0.name == "a folder" }?.kind == .directory)

        // stat of a file, a folder, nothing.
        let st = try await fs.stat(path(server, names[1]))
        #expect(st.kind == .file && st.size == 1001 && st.name == names[1])
        #expect(try await fs.stat(path(server, "a folder")).kind == .directory)
        do {
            _ = try await fs.stat(path(server, "nothing"))
            Issue.record("stat of a missing file succeeded")
        } catch {
            #expect(error.code == .notFound, "\(error)")
        }

        // get: the bytes, through HTTP's download (a .part, then renamed).
        for name in names {
            let r = try await fs.download(path(server, name), to: work.file(name), options: .init()).result
            #expect(r.bytesTransferred > 0)
            #expect(
                FileManager.default.contents(atPath: work.file(name))
                    == FileManager.default.contents(
                        atPath: server.local(name)))
        }
        // In-memory reads: a range, the whole file, over the limit.
        let all = try #require(FileManager.default.contents(atPath: server.local(names[0])))
        #expect(try await fs.data(at: path(server, names[0]), range: 10..<20) == all[10..<20])
        #expect(try await fs.data(at: path(server, names[0])) == all)
        await #expect(throws: FerryError.self) { try await fs.data(at: path(server, names[0]), limit: 10) }

        // put to a new folder made with mkdir -p, then the same again.
        let deep = path(server, "new/deeper/deepest")
        try await fs.makeDirectory(deep, createParents: true)
        try await fs.makeDirectory(deep, createParents: true)  // exists: fine with -p
        #expect(try await fs.stat(deep).isDirectory)
        do {
            try await fs.makeDirectory(deep, createParents: false)
            Issue.record("mkdir of an existing folder succeeded")
        } catch {
            #expect(error.code == .destinationExists, "\(error)")
        }
        let upload = path(server, "new/deeper/deepest/up #1 ü.bin")
        let data = try TestData.file(work.file("up.bin"), size: 300_000, seed: 7)
        let put = try await fs.upload(work.file("up.bin"), to: upload, options: .init()).result
        #expect(put.bytesTransferred == 300_000)
        #expect(FileManager.default.contents(atPath: server.local("new/deeper/deepest/up #1 ü.bin")) == data)
        #expect(
            !FileManager.default.fileExists(atPath: server.local("new/deeper/deepest/.up #1 ü.bin.ferry-part")))
        // A second put: refused by default, skipped when told, replaced when told.
        do {
            _ = try await fs.upload(work.file("up.bin"), to: upload, options: .init()).result
            Issue.record("put over an existing file succeeded")
        } catch {
            #expect(error.code == .destinationExists, "\(error)")
        }
        var skip = UploadOptions()
        skip.overwrite = .skip
        #expect(try await fs.upload(work.file("up.bin"), to: upload, options: skip).result.skipped)
        let other = try TestData.file(work.file("other.bin"), size: 1234, seed: 8)
        var replace = UploadOptions()
        replace.overwrite = .overwrite
        _ = try await fs.upload(work.file("other.bin"), to: upload, options: replace).result
        #expect(FileManager.default.contents(atPath: server.local("new/deeper/deepest/up #1 ü.bin")) == other)

        // mv: never over an existing name unless told.
        let moved = path(server, "moved %.txt")
        try await fs.rename(path(server, names[2]), to: moved)
        #expect(FileManager.default.fileExists(atPath: server.local("moved %.txt")))
        do {
            try await fs.rename(moved, to: path(server, names[3]))
            Issue.record("mv over an existing file succeeded")
        } catch {
            #expect(error.code == .destinationExists, "\(error)")
        }
        #expect(FileManager.default.contents(atPath: server.local(names[3]))?.count == 1003)
        try await fs.rename(moved, to: path(server, names[3]), replacing: true)
        #expect(FileManager.default.contents(atPath: server.local(names[3]))?.count == 1002)

        // mv of a folder (nginx wants both URLs with their trailing /).
        try await fs.rename(path(server, "a folder"), to: path(server, "renamed folder"))
        #expect(FileManager.default.fileExists(atPath: server.local("renamed folder")))
        #expect(!FileManager.default.fileExists(atPath: server.local("a folder")))

        // rm of a file; of a folder refused (WebDAV's DELETE would take it all).
        try await fs.delete(path(server, names[0]))
        #expect(!FileManager.default.fileExists(atPath: server.local(names[0])))
        await #expect(throws: FerryError.self) { try await fs.delete(path(server, "new")) }
        #expect(FileManager.default.fileExists(atPath: server.local("new/deeper/deepest/up #1 ü.bin")))
        // rmdir: refused while the folder has files, then done.
        do {
            try await fs.removeDirectory(deep)
            Issue.record("rmdir of a folder with a file succeeded")
        } catch {
            #expect(error.code == .directoryNotEmpty, "\(error)")
        }
        try await fs.delete(upload)
        try await fs.removeDirectory(deep)
        #expect(!FileManager.default.fileExists(atPath: server.local("new/deeper/deepest")))
        #expect(FileManager.default.fileExists(atPath: server.local("new/deeper")))
    }

    /// An upload into folders that do not exist: the PUT's 409 makes them
    /// (`createParents`, the default) and the file is sent again.
    @Test(arguments: [Kind.apache, .nginx, .sabre])
    func uploadMakesMissingFolders(_ kind: Kind) async throws {
        let server = try kind.start()
        defer { server.stop() }
        server.allowWrites()
        let data = try TestData.file(work.file("up.bin"), size: 5000, seed: 4)
        let r = try await fs(server).upload(work.file("up.bin"), to: path(server, "a/b/c.bin"), options: .init()).result
        #expect(r.bytesTransferred == 5000)
        #expect(FileManager.default.contents(atPath: server.local("a/b/c.bin")) == data)
    }

    /// A folder of 1,000 files is listed whole, sizes right.
    @Test(arguments: Kind.allCases)
    func aThousandFiles(_ kind: Kind) async throws {
        let server = try kind.start()
        defer { server.stop() }
        try FileManager.default.createDirectory(atPath: server.local("many"), withIntermediateDirectories: true)
        for i in 0..<1000 {
            try Data(count: i).write(to: URL(fileURLWithPath: server.local("many/f\(i).txt")))
        }
        let entries = try await fs(server).list(path(server, "many"))
        #expect(entries.count == 1000)
        #expect(entries.allSatisfy { $0.size == Int64($0.name.dropFirst().dropLast(4))! })
    }

    /// A thumbnail from the first bytes of a JPEG over WebDAV (Range reads).
    @Test func thumbnail() async throws {
        let server = try NginxDAVServer()
        defer { server.stop() }
        try Data(SampleJPEG.withThumbnail()).write(to: URL(fileURLWithPath: server.local("photo.jpg")))
        let thumb = try await fs(server).thumbnail(path(server, "photo.jpg"))
        #expect(thumb != nil)
    }

    /// Wrong password: `authenticationFailed`, status 401, and the password in no message.
    @Test(arguments: [Kind.apache, .rclone])
    func wrongPassword(_ kind: Kind) async throws {
        let server: any WebDAVTestServer =
            kind == .apache
            ? try ApacheDAVServer(basicAuth: ("anna", "right-pass"))
            : try RcloneDAVServer(basicAuth: ("anna", "right-pass"))
        defer { server.stop() }
        try Data("x".utf8).write(to: URL(fileURLWithPath: server.local("a.txt")))
        server.allowWrites()
        var options = ConnectionOptions()
        options.credentials = Credentials(user: "anna", password: "wrong-secret")
        let wrong = try fs(server, options)
        do {
            _ = try await wrong.list(path(server, ""))
            Issue.record("a wrong password listed")
        } catch {
            #expect(error.code == .authenticationFailed && error.serverCode == 401, "\(error)")
            #expect(!error.description.contains("wrong-secret") && error.description.contains("anna"), "\(error)")
        }
        options.credentials = Credentials(user: "anna", password: "right-pass")
        let fs = try fs(server, options)
        #expect(try await fs.list(path(server, "")).map(\.name) == ["a.txt"])
        // After the first 401, Basic goes with every request: the upload works.
        try TestData.file(work.file("up.bin"), size: 100_000)
        _ = try await fs.upload(work.file("up.bin"), to: path(server, "up.bin"), options: .init()).result
        #expect(fileSize(server.local("up.bin")) == 100_000)
    }

    /// `davs://`: HTTPS on the wire, the certificate checked (refused without
    /// the test CA, accepted with it).
    @Test func davsSpeaksHTTPSAndChecksTheCertificate() async throws {
        let certificate = try TestCertificate.shared()
        let server = try NginxDAVServer(tls: certificate)
        defer { server.stop() }
        try Data("over TLS".utf8).write(to: URL(fileURLWithPath: server.local("t.txt")))
        #expect(server.base.hasPrefix("davs://"))
        let untrusted = try fs(server)
        do {
            _ = try await untrusted.list("/")
            Issue.record("an untrusted certificate was accepted")
        } catch {
            #expect(error.code == .tls, "\(error)")
        }
        var options = ConnectionOptions()
        options.caCertificateFile = certificate.certificatePath
        let fs = try fs(server, options)
        #expect(try await fs.list("/").map(\.name) == ["t.txt"])
        #expect(try await fs.data(at: "/t.txt") == Data("over TLS".utf8))
        try Data("up".utf8).write(to: URL(fileURLWithPath: work.file("up.txt")))
        _ = try await fs.upload(work.file("up.txt"), to: "/up.txt", options: .init()).result
        #expect(FileManager.default.contents(atPath: server.local("up.txt")) == Data("up".utf8))
    }

    /// A URL without WebDAV (a plain nginx): the error says so.
    @Test func noWebDAVHere() async throws {
        let dir = try TempDir(prefix: "plain")
        let plain = try NginxServer(root: dir.path)
        defer { plain.stop() }
        let fs = WebDAVFileSystem(url: try RemoteURL(parsing: "dav://127.0.0.1:\(plain.port)/"))
        do {
            _ = try await fs.list("/")
            Issue.record("listed a server without WebDAV")
        } catch {
            #expect(error.code == .unsupportedOperation && error.description.contains("no WebDAV"), "\(error)")
        }
    }

    /// A download killed midway resumes from the part: the second request asks
    /// only for the rest (nginx's access log shows its Range).
    @Test func resumeAsksOnlyForTheRest() async throws {
        let server = try NginxDAVServer()
        defer { server.stop() }
        let data = try TestData.file(server.local("big.bin"), size: 6_000_000, seed: 3)
        let fs = try fs(server)
        let destination = work.file("big.bin")
        let first = fs.download(path(server, "slow/big.bin"), to: destination, options: .init())
        let deadline = Date().addingTimeInterval(20)
        while (fileSize(destination + ".part") ?? 0) < 2_000_000 && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        first.cancel()
        _ = try? await first.result
        let have = try #require(fileSize(destination + ".part"))
        #expect(have > 0 && have < 6_000_000)
        let second = try await fs.download(path(server, "slow/big.bin"), to: destination, options: .init()).result
        #expect(second.resumedFrom == have && second.bytesTransferred == 6_000_000 - have)
        #expect(FileManager.default.contents(atPath: destination) == data)
        let gets = server.accessLog.filter { $0.hasPrefix("GET /slow/big.bin") }
        #expect(gets.last?.contains("range=\"bytes=\(have)-\"") == true, "\(gets)")
    }

    /// A file larger than one piece goes in pieces where the server writes a
    /// ranged PUT at its offset (Apache), and whole, byte for byte, where it
    /// refuses one (nginx and sabre/dav: 501) or ignores it (rclone: the piece
    /// becomes the whole file, which the size check catches).
    @Test(arguments: Kind.allCases)
    func aLargeUploadGoesInPiecesWhereTheServerTakesThem(_ kind: Kind) async throws {
        let server = try kind.start()
        defer { server.stop() }
        server.allowWrites()
        var fs = try fs(server)
        fs.uploadPiece = 256 << 10
        let data = try TestData.file(work.file("up.bin"), size: 1_000_007, seed: 21)
        let r = try await fs.upload(work.file("up.bin"), to: path(server, "up.bin"), options: .init()).result
        #expect(FileManager.default.contents(atPath: server.local("up.bin")) == data, "\(server.name)")
        #expect(!FileManager.default.fileExists(atPath: server.local(".up.bin.ferry-part")))
        let support = fs.rangedPut.support
        switch kind {
        case .apache:
            #expect(support == .yes)
            #expect(r.bytesSent == 1_000_007 && r.retries == 0, "\(r)")
            // Four PUTs of at most 256 KiB each.
            let puts = server.accessLog.filter { $0.hasPrefix("PUT /dav/.up.bin.ferry-part") }
            #expect(puts.count == 4, "\(puts)")
        case .nginx, .sabre:
            #expect(support == .no, "\(server.name)")
            // The first piece refused (before its body, where the server answers
            // Expect: 100-continue), then the whole file, in one retry.
            let sent = r.bytesSent ?? 0
            #expect(sent >= 1_000_007 && sent <= 1_000_007 + (256 << 10), "\(server.name): \(r)")
            #expect(r.retries == 1, "\(server.name): \(r)")
        case .rclone:
            #expect(support == .no)
            // The first piece written as the whole file is right; the second
            // shows the range ignored. Then the whole file, in one retry.
            #expect(r.bytesSent == 1_000_007 + (512 << 10) && r.retries == 1, "\(r)")
        }
        // The server's answer is remembered: the next file goes whole at once, or in pieces.
        let again = try await fs.upload(work.file("up.bin"), to: path(server, "again.bin"), options: .init()).result
        #expect(again.bytesSent == 1_000_007 && again.retries == 0, "\(server.name): \(again)")
        #expect(FileManager.default.contents(atPath: server.local("again.bin")) == data)
    }

    /// A leftover temporary of an earlier run (its bytes the file's own) is
    /// continued where the server takes ranged PUTs: only the rest is sent.
    /// Elsewhere the whole file goes again; a leftover whose last bytes differ
    /// is never continued.
    @Test(arguments: [Kind.apache, .nginx])
    func aLeftoverIsContinuedWhereTheServerTakesRangedPuts(_ kind: Kind) async throws {
        let server = try kind.start()
        defer { server.stop() }
        server.allowWrites()
        let data = try TestData.file(work.file("up.bin"), size: 3_000_000, seed: 22)
        try data.prefix(1_200_000).write(to: URL(fileURLWithPath: server.local(".up.bin.ferry-part")))
        server.allowWrites()
        var fs = try fs(server)
        fs.uploadPiece = 1 << 20
        let r = try await fs.upload(work.file("up.bin"), to: path(server, "up.bin"), options: .init()).result
        #expect(FileManager.default.contents(atPath: server.local("up.bin")) == data, "\(server.name)")
        if kind == .apache {
            #expect(r.resumedFrom == 1_200_000 && r.bytesSent == 1_800_000, "\(r)")
        } else {
            // The ranged PUT refused, the whole file sent: nothing was kept.
            #expect(r.resumedFrom == 0 && r.bytesTransferred == 3_000_000 && (r.bytesSent ?? 0) >= 3_000_000, "\(r)")
        }
        // A leftover that is not this file's start: sent whole, never continued.
        var other = data.prefix(1_200_000)
        other[other.startIndex + 1_199_999] ^= 0xFF
        try other.write(to: URL(fileURLWithPath: server.local(".up2.bin.ferry-part")))
        server.allowWrites()
        let r2 = try await fs.upload(work.file("up.bin"), to: path(server, "up2.bin"), options: .init()).result
        #expect(r2.resumedFrom == 0, "\(r2)")
        if kind == .apache {
            // The first piece went into the leftover, which was then removed: once more from the start.
            #expect(r2.bytesSent == 3_000_000 + (1 << 20) && r2.retries == 1, "\(r2)")
            #expect(fs.rangedPut.support == .yes)
        }
        #expect(FileManager.default.contents(atPath: server.local("up2.bin")) == data)
    }
}

/// The size of a local file, nil when there is none.
private func fileSize(_ path: String) -> Int64? {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? nil
}
