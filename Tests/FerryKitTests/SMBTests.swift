import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// The SMB backend against Samba's smbd started by the test (SambaTestServer):
/// a user share, a guest share and a share that requires encryption.
@Suite(.serialized)
struct SMBTests {
    let server: SambaTestServer
    let work: TempDir

    init() async throws {
        server = try await SambaTestServer()
        work = try TempDir(prefix: "smb-work")
    }

    func fs(_ share: String = "user", password: String? = nil, guest: Bool = false) throws -> SMBFileSystem {
        var options = ConnectionOptions()
        if !guest { options.credentials = Credentials(user: server.user, password: password ?? server.password) }
        return SMBFileSystem(url: try RemoteURL(parsing: server.url(share, guest: guest)), options: options)
    }

    @Test func everyOperationWithAwkwardNames() async throws {
        let fs = try fs()
        let names = ["with space.txt", "a#hash%25 100%.txt", "ünïcødé 日本.txt"]
        for (i, name) in names.enumerated() {
            _ = try TestData.file(server.local("user", name), size: 1000 + i, seed: UInt64(i))
        }
        try FileManager.default.createDirectory(
            atPath: server.local("user", "a folder"), withIntermediateDirectories: true)
        let entries = try await fs.list("/user")
        for (i, name) in names.enumerated() {
            let e = try #require(entries.first { $0.name == name }, "\(entries.map(\.name))")
            #expect(e.kind == .file && e.size == Int64(1000 + i) && e.path == "/user/" + name)
        }
        #expect(entries.first { $0.name == "a folder" }?.kind == .directory)

        let st = try await fs.stat("/user/" + names[2])
        let mtime =
            try FileManager.default.attributesOfItem(atPath: server.local("user", names[2]))[.modificationDate]
            as! Date
        #expect(st.kind == .file && st.size == 1002)
        #expect(st.modified.map { Int($0.date().timeIntervalSince1970) } == Int(mtime.timeIntervalSince1970))
        #expect(try await fs.stat("/user/a folder").kind == .directory)
        #expect(try await fs.stat("/user").kind == .directory)
        do {
            _ = try await fs.stat("/user/nothing")
            Issue.record("stat of nothing succeeded")
        } catch {
            #expect(error.code == .notFound && error.serverText == "NT_STATUS_OBJECT_NAME_NOT_FOUND", "\(error)")
        }

        // download: exact bytes and the server's time.
        for name in names {
            let dest = work.file(name)
            let result = try await fs.download("/user/" + name, to: dest, options: .init()).result
            #expect(result.bytesTransferred == result.size)
            #expect(
                FileManager.default.contents(atPath: dest)
                    == FileManager.default.contents(atPath: server.local("user", name)))
            let local = try FileManager.default.attributesOfItem(atPath: dest)[.modificationDate] as! Date
            let remote =
                try FileManager.default.attributesOfItem(atPath: server.local("user", name))[.modificationDate] as! Date
            #expect(abs(local.timeIntervalSince(remote)) < 0.001, "\(local) \(remote)")
        }

        // mkdir -p, upload (time kept), re-upload skipped, rename, delete, rmdir.
        try await fs.makeDirectory("/user/new/deep er/x#%", createParents: true)
        try await fs.makeDirectory("/user/new/deep er/x#%", createParents: true)
        await #expect(throws: FerryError.self) { try await fs.makeDirectory("/user/new", createParents: false) }
        let up = work.file("up ü#.bin")
        _ = try TestData.file(up, size: 300_000, seed: 5)
        let past = Date(timeIntervalSince1970: 1_600_000_000)
        try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: up)
        let remote = "/user/new/deep er/x#%/up ü#.bin"
        let sent = try await fs.upload(up, to: remote, options: .init()).result
        #expect(sent.size == 300_000 && !sent.skipped)
        #expect(
            FileManager.default.contents(atPath: server.local("user", "new/deep er/x#%/up ü#.bin"))
                == FileManager.default.contents(atPath: up))
        let uploaded = try await fs.stat(remote)
        #expect(uploaded.modified.map { Int($0.date().timeIntervalSince1970) } == 1_600_000_000)
        var keep = UploadOptions()
        keep.overwrite = .skip
        let again = try await fs.upload(up, to: remote, options: keep).result
        #expect(again.skipped && again.bytesTransferred == 0)
        // A different file under the name is not replaced unless told.
        _ = try TestData.file(up, size: 1000, seed: 6)
        await #expect(throws: FerryError.self) { _ = try await fs.upload(up, to: remote, options: .init()).result }
        var replace = UploadOptions()
        replace.overwrite = .overwrite
        #expect(try await fs.upload(up, to: remote, options: replace).result.size == 1000)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: server.local("user", "new/deep er/x#%"))
                == ["up ü#.bin"])

        do {
            try await fs.rename("/user/" + names[0], to: "/user/" + names[1], replacing: false)
            Issue.record("rename replaced a file")
        } catch {
            #expect(error.code == .destinationExists && error.recovery == .replace, "\(error)")
        }
        try await fs.rename("/user/" + names[0], to: "renamed.txt", replacing: false)
        #expect(FileManager.default.fileExists(atPath: server.local("user", "renamed.txt")))
        try await fs.delete("/user/renamed.txt")
        #expect(!FileManager.default.fileExists(atPath: server.local("user", "renamed.txt")))
        do {
            try await fs.removeDirectory("/user/new/deep er/x#%")
            Issue.record("rmdir removed a folder that holds a file")
        } catch {
            #expect(error.code == .directoryNotEmpty, "\(error)")
        }
        try await fs.delete(remote)
        try await fs.removeDirectory("/user/new/deep er/x#%")
        #expect(!FileManager.default.fileExists(atPath: server.local("user", "new/deep er/x#%")))
    }

    /// An upload interrupted earlier left `.NAME.ferry-part`: the next upload
    /// goes on from its length when its last bytes are the local file's, and
    /// starts over when they are not.
    /// A listed small file downloads by its listing (no `fstat` after the
    /// open): exact bytes, the listing's time; one that grew or shrank since it
    /// was listed is caught by its length and comes whole, never cut at the
    /// listed size; a large one asks the server as before.
    @Test func aListedFileGoesByItsListingAndAChangedOneComesWhole() async throws {
        let fs = try fs()
        _ = try TestData.file(server.local("user", "same.bin"), size: 70_000, seed: 1)
        _ = try TestData.file(server.local("user", "grows.bin"), size: 50_000, seed: 2)
        _ = try TestData.file(server.local("user", "shrinks.bin"), size: 90_000, seed: 3)
        _ = try TestData.file(server.local("user", "large.bin"), size: 3 << 20, seed: 4)
        let listed = try await fs.list("/user")
        func entry(_ name: String) throws -> RemoteEntry { try #require(listed.first { $0.name == name }) }
        #expect(SMBListedFacts(try entry("same.bin"))?.size == 70_000)
        #expect(SMBListedFacts(try entry("large.bin")) == nil, "a large file asks the server")
        // Changed behind the listing's back.
        _ = try TestData.file(server.local("user", "grows.bin"), size: 2_500_000, seed: 5)
        _ = try TestData.file(server.local("user", "shrinks.bin"), size: 10_000, seed: 6)
        for name in ["same.bin", "grows.bin", "shrinks.bin", "large.bin"] {
            let dest = work.file("listed-" + name)
            let result = try await fs.download(try entry(name), to: dest, options: .init()).result
            let bytes = FileManager.default.contents(atPath: server.local("user", name))
            #expect(FileManager.default.contents(atPath: dest) == bytes, "\(name)")
            #expect(result.size == Int64(bytes?.count ?? -1), "\(name)")
        }
        let local = try FileManager.default.attributesOfItem(atPath: work.file("listed-same.bin"))[.modificationDate]
        let remote = try FileManager.default.attributesOfItem(atPath: server.local("user", "same.bin"))[
            .modificationDate]
        #expect(
            (local as? Date).map { Int($0.timeIntervalSince1970) }
                == (remote as? Date).map { Int($0.timeIntervalSince1970) }, "the listing's time, to the second")
    }

    @Test func anInterruptedUploadResumesFromTheServersPart() async throws {
        let fs = try fs()
        let local = work.file("resume.bin")
        let data = try TestData.file(local, size: 3_000_000, seed: 8)
        let leftover = server.local("user", ".resume.bin.ferry-part")
        try data.prefix(1_000_000).write(to: URL(fileURLWithPath: leftover))
        let resumed = try await fs.upload(local, to: "/user/resume.bin", options: .init()).result
        #expect(resumed.resumedFrom == 1_000_000 && resumed.bytesTransferred == 2_000_000, "\(resumed)")
        #expect(FileManager.default.contents(atPath: server.local("user", "resume.bin")) == data)
        #expect(!FileManager.default.fileExists(atPath: leftover))
        // A leftover of other bytes is not continued.
        try await fs.delete("/user/resume.bin")
        var other = data.prefix(1_000_000)
        other[999_999] ^= 0xFF
        try other.write(to: URL(fileURLWithPath: leftover))
        let fresh = try await fs.upload(local, to: "/user/resume.bin", options: .init()).result
        #expect(fresh.resumedFrom == 0 && fresh.bytesTransferred == 3_000_000, "\(fresh)")
        #expect(FileManager.default.contents(atPath: server.local("user", "resume.bin")) == data)
    }

    @Test func rangedReadsAndThumbnails() async throws {
        let fs = try fs()
        let data = TestData.bytes(200_000, seed: 3)
        try data.write(to: URL(fileURLWithPath: server.local("user", "r.bin")))
        #expect(try await fs.data(at: "/user/r.bin", range: 1000..<1100) == data[1000..<1100])
        #expect(try await fs.data(at: "/user/r.bin", range: 199_990..<300_000) == data[199_990...])
        #expect(try await fs.data(at: "/user/r.bin", range: 500_000..<500_010).isEmpty)
        #expect(try await fs.data(at: "/user/r.bin", limit: 1 << 20) == data)
        try Data(SampleJPEG.withThumbnail(width: 64, height: 48)).write(
            to: URL(fileURLWithPath: server.local("user", "p.jpg")))
        let thumb = try await fs.thumbnail("/user/p.jpg")
        #expect(thumb != nil)
    }

    @Test func wrongPasswordNoSuchShareGuestAndEncryption() async throws {
        let wrong = "Wr0ng-secret-word"
        let refused = try fs(password: wrong)
        do {
            _ = try await refused.list("/user")
            Issue.record("a wrong password listed")
        } catch {
            #expect(error.code == .authenticationFailed && error.serverText == "NT_STATUS_LOGON_FAILURE", "\(error)")
            #expect(error.description.contains("wrong user name or password"), "\(error)")
            #expect(!error.description.contains(wrong))
        }
        let missing = try fs()
        do {
            _ = try await missing.list("/nosuch")
            Issue.record("a missing share listed")
        } catch {
            #expect(error.code == .notFound && error.serverText == "NT_STATUS_BAD_NETWORK_NAME", "\(error)")
            #expect(error.description.contains("no such share \"nosuch\""), "\(error)")
        }
        // Nothing listening: the connection is refused, said so, with what to check.
        let closed = SMBFileSystem(url: try RemoteURL(parsing: "smb://127.0.0.1:\(Loopback.freePort())/user/"))
        do {
            _ = try await closed.list("/user")
            Issue.record("a closed port listed")
        } catch {
            #expect(error.code == .connectionFailed && error.description.contains("nothing answers SMB"), "\(error)")
        }
        // A guest: its own share, but not the user's (access denied, not a login failure).
        try Data("g".utf8).write(to: URL(fileURLWithPath: server.local("guest", "g.txt")))
        #expect(try await fs("guest", guest: true).list("/guest").map(\.name) == ["g.txt"])
        let guest = try fs("user", guest: true)
        do {
            _ = try await guest.list("/user")
            Issue.record("a guest listed the user's share")
        } catch {
            #expect(error.code == .permissionDenied && error.serverText == "NT_STATUS_ACCESS_DENIED", "\(error)")
        }
        // The share that requires encryption: SMB3 with encryption, by default.
        _ = try TestData.file(server.local("enc", "secret.bin"), size: 100_000, seed: 1)
        let enc = try fs("enc")
        #expect(try await enc.list("/enc").map(\.name) == ["secret.bin"])
        _ = try await enc.download("/enc/secret.bin", to: work.file("secret.bin"), options: .init()).result
        #expect(
            FileManager.default.contents(atPath: work.file("secret.bin"))
                == FileManager.default.contents(atPath: server.local("enc", "secret.bin")))
    }

    @Test func aFolderOfAThousandFilesAndATree() async throws {
        let fs = try fs()
        let folder = server.local("user", "many")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for i in 0..<1000 { try Data("\(i)".utf8).write(to: URL(fileURLWithPath: folder + "/f\(i).txt")) }
        let entries = try await fs.list("/user/many")
        #expect(entries.count == 1000)
        #expect(Set(entries.map(\.name)) == Set((0..<1000).map { "f\($0).txt" }))
        #expect(entries.allSatisfy { $0.kind == .file && $0.size == Int64("\($0.name.dropFirst().dropLast(4))".count) })
    }

    /// Many transfers at once over two logins (two pools of contexts, each on
    /// its own threads): libsmbclient is not thread-safe, so this crashed
    /// (talloc abort) before every call took the library's lock.
    @Test func manyTransfersAtOnceOnSeveralContexts() async throws {
        var options = ConnectionOptions()
        options.credentials = Credentials(user: server.user, password: server.password)
        options.maxConnections = 4
        let user = SMBFileSystem(url: try RemoteURL(parsing: server.url("user")), options: options)
        let enc = SMBFileSystem(url: try RemoteURL(parsing: server.url("enc")), options: options)
        var files: [(fs: SMBFileSystem, path: String, data: Data)] = []
        for i in 0..<24 {
            let share = i % 2 == 0 ? "user" : "enc"
            let data = try TestData.file(server.local(share, "c\(i).bin"), size: 200_000 + i * 1000, seed: UInt64(i))
            files.append((i % 2 == 0 ? user : enc, "/\(share)/c\(i).bin", data))
        }
        let work = self.work
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, f) in files.enumerated() {
                group.addTask {
                    let dest = work.file("c\(i).bin")
                    _ = try await f.fs.download(f.path, to: dest, options: .init()).result
                    #expect(FileManager.default.contents(atPath: dest) == f.data)
                    #expect(try await f.fs.list(f.path.hasPrefix("/user") ? "/user" : "/enc").count >= 12)
                }
            }
            try await group.waitForAll()
        }
    }

    /// With Samba's thread hooks in (the default), contexts run their jobs at
    /// the same time: through a relay that paces each connection to 1 MB/s,
    /// four downloads and four uploads on four contexts overlap, and every file
    /// comes and goes whole. (Without the hooks, every job holds the library's
    /// lock alone and none overlap.)
    @Test func contextsRunTheirJobsAtTheSameTime() async throws {
        #expect(SMBContext.threaded, "Samba's thread hooks are installed unless FERRY_SMB_THREADS=0")
        let relay = try CountingRelay(
            upstreamPort: server.port, downBytesPerSecond: 1_000_000, upBytesPerSecond: 1_000_000)
        defer { relay.stop() }
        var options = ConnectionOptions()
        options.credentials = Credentials(user: server.user, password: server.password)
        options.maxConnections = 4
        let fs = SMBFileSystem(url: try RemoteURL(parsing: server.url("user", port: relay.port)), options: options)
        var downloads: [(path: String, data: Data)] = []
        var uploads: [(source: String, data: Data)] = []
        for i in 0..<4 {
            downloads.append(
                (
                    "/user/down\(i).bin",
                    try TestData.file(server.local("user", "down\(i).bin"), size: 300_000 + i, seed: UInt64(i))
                ))
            uploads.append(
                (
                    work.file("up\(i).bin"),
                    try TestData.file(work.file("up\(i).bin"), size: 300_000 + i, seed: UInt64(10 + i))
                ))
        }
        _ = try await fs.list("/user")  // the first context logs in alone
        SMBContext.atOnce.withLock { $0.most = 0 }
        let work = self.work
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, d) in downloads.enumerated() {
                group.addTask {
                    let dest = work.file("got\(i).bin")
                    _ = try await fs.download(d.path, to: dest, options: .init()).result
                    #expect(FileManager.default.contents(atPath: dest) == d.data)
                }
            }
            for (i, u) in uploads.enumerated() {
                group.addTask {
                    _ = try await fs.upload(u.source, to: "/user/up\(i).bin", options: .init()).result
                }
            }
            try await group.waitForAll()
        }
        for (i, u) in uploads.enumerated() {
            #expect(FileManager.default.contents(atPath: server.local("user", "up\(i).bin")) == u.data)
        }
        let most = SMBContext.atOnce.withLock { $0.most }
        #expect(most >= 2, "jobs on several contexts ran one at a time (most at once: \(most))")
    }

    /// A file another client holds open (smbclient's `open`, seen in
    /// `smbstatus -L`) cannot be deleted: NT_STATUS_SHARING_VIOLATION, said so,
    /// and worth trying again.
    @Test func aFileOpenElsewhereIsASharingViolation() async throws {
        let smbclient = try #require(TestProcess.which("smbclient"), "smbclient is installed by scripts/setup.sh")
        let smbstatus = try #require(
            TestProcess.which("smbstatus"), "smbstatus (samba) is installed by scripts/setup.sh")
        try Data("held".utf8).write(to: URL(fileURLWithPath: server.local("user", "held.txt")))
        // smbclient keeps the file open while its standard input stays open (its group is stopped after).
        let holder = try SpawnedProcess(
            "/bin/sh",
            [
                "-c", "(echo 'open held.txt'; sleep 20) | \"$0\" -p \"$1\" //127.0.0.1/user -U \"$2\"", smbclient,
                "\(server.port)", "\(server.user)%\(server.password)",
            ], logPath: work.file("smbclient.log"))
        defer { holder.stop(grace: 0.1) }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline,
            try TestProcess.run(smbstatus, ["-s", server.configFile, "-L"]).stdout.contains("held.txt") == false
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        let fs = try fs()
        do {
            try await fs.delete("/user/held.txt")
            Issue.record("deleted a file another client holds open")
        } catch {
            #expect(error.serverText == "NT_STATUS_SHARING_VIOLATION" && error.isTransient, "\(error)")
            #expect(error.description.contains("another program has the file open"), "\(error)")
        }
        #expect(FileManager.default.fileExists(atPath: server.local("user", "held.txt")))
    }

    /// A download whose connection is cut mid-file (a proxy resets it) goes on
    /// from what arrived, on a new connection, and ends byte-identical.
    @Test func aConnectionCutMidFileResumes() async throws {
        let data = TestData.bytes(20_000_000, seed: 4)
        try data.write(to: URL(fileURLWithPath: server.local("user", "cut.bin")))
        let proxy = try FaultProxy(upstreamPort: server.port, faultyConnections: 1, cutAfter: 6_000_000...6_000_000)
        defer { proxy.stop() }
        var options = ConnectionOptions()
        options.credentials = Credentials(user: server.user, password: server.password)
        let fs = SMBFileSystem(
            url: try RemoteURL(parsing: server.url("user", port: proxy.port)), options: options)
        var download = DownloadOptions()
        download.retryDelay = .milliseconds(50)
        let result = try await fs.download("/user/cut.bin", to: work.file("cut.bin"), options: download).result
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("cut.bin"))) == data)
        #expect(result.retries >= 1, "\(result)")
        // Only what had not arrived came again.
        #expect(result.bytesTransferred < 20_000_000 + 4 * Int64(SMBDownloadAttempt.chunk), "\(result)")
        #expect(proxy.connectionCount >= 2)
    }

    @Test func sharesAreListedAtTheServersRoot() async throws {
        server.stop()
        let listing = try await SambaTestServer(shareList: true)
        var options = ConnectionOptions()
        options.credentials = Credentials(user: listing.user, password: listing.password)
        let fs = SMBFileSystem(url: try RemoteURL(parsing: "smb://127.0.0.1:\(listing.port)/"), options: options)
        let shares = try await fs.list("/")
        #expect(shares.filter { !$0.isHidden }.map(\.name).sorted() == ["enc", "guest", "user"], "\(shares)")
        #expect(shares.allSatisfy { $0.kind == .directory })
    }

    @Test func urls() throws {
        let u = try RemoteURL(parsing: "smb://WORK;ann:pw@nas:1445/photos/a%23b?encrypt=required")
        #expect(u.scheme == .smb && u.user == "WORK;ann" && u.port == 1445 && u.path == "/photos/a#b")
        #expect(u.query == "encrypt=required")
        #expect(!u.redacted.contains("pw"))
        #expect(try RemoteURL(parsing: "smb://nas/x").defaultPort == 445)
    }
}
