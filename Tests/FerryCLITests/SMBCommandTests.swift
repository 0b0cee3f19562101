import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ferry` on `smb://` URLs, run as a process with its own HOME, against
/// Samba's smbd started by the test: every command, kill -9 then resume, a
/// wrong password, sync twice.
@Suite(.serialized)
struct SMBCommandTests {
    let server: SambaTestServer
    let work: TempDir
    let home: TempDir
    let ferry = TestProcess.ferryExecutable()

    init() async throws {
        server = try await SambaTestServer()
        work = try TempDir(prefix: "smb-cli")
        home = try TempDir(prefix: "smb-home")
    }

    var env: [String: String] {
        ["HOME": home.path, "NETRC": home.file("no-netrc"), "FERRY_PASSWORD": server.password]
    }

    func run(_ args: [String], env extra: [String: String] = [:]) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: work.path, environment: env.merging(extra) { $1 })
    }

    @Test func everyCommandOnAShare() throws {
        let tree = work.file("album")
        try FileManager.default.createDirectory(atPath: tree + "/sub dir", withIntermediateDirectories: true)
        _ = try TestData.file(tree + "/a #1.jpg", size: 50_000, seed: 1)
        _ = try TestData.file(tree + "/sub dir/b 100%.jpg", size: 70_000, seed: 2)
        let mkdir = try run(["mkdir", "-p", server.url("user", "up/there")])
        #expect(mkdir.status == 0, "\(mkdir.stderr)")
        let put = try run(["put", "-r", tree, server.url("user", "up/there/")])
        #expect(put.status == 0, "\(put.stderr)")
        #expect(
            FileManager.default.contents(atPath: server.local("user", "up/there/album/sub dir/b 100%.jpg"))
                == FileManager.default.contents(atPath: tree + "/sub dir/b 100%.jpg"))
        // Run again: the same size and time (set on upload) is already there.
        let putAgain = try run(["put", "-r", tree, server.url("user", "up/there/")])
        #expect(
            putAgain.status == 0 && (putAgain.stdout + putAgain.stderr).contains("0 uploaded, 2 already here"),
            "\(putAgain)")
        let ls = try run(["ls", "--json", server.url("user", "up/there/album")])
        #expect(ls.status == 0 && ls.stdout.contains("\"a #1.jpg\"") && ls.stdout.contains("50000"), "\(ls)")
        let get = try run(["get", "-r", server.url("user", "up/there/album"), "-o", "back"])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(
            FileManager.default.contents(atPath: work.file("back/sub dir/b 100%.jpg"))
                == FileManager.default.contents(atPath: tree + "/sub dir/b 100%.jpg"))
        // Run again: nothing moves.
        let again = try run(["get", "-r", server.url("user", "up/there/album"), "-o", "back"])
        #expect(again.status == 0 && (again.stdout + again.stderr).contains("0 downloaded, 2 already here"), "\(again)")
        let mv = try run(["mv", server.url("user", "up/there/album/a #1.jpg"), "moved.jpg"])
        #expect(mv.status == 0, "\(mv.stderr)")
        #expect(FileManager.default.fileExists(atPath: server.local("user", "up/there/album/moved.jpg")))
        let rm = try run(["rm", server.url("user", "up/there/album/moved.jpg")])
        #expect(rm.status == 0, "\(rm.stderr)")
        let rmdir = try run(["rmdir", server.url("user", "up/there/album/sub dir")])
        #expect(rmdir.status != 0 && rmdir.stderr.contains("NT_STATUS_DIRECTORY_NOT_EMPTY"), "\(rmdir.stderr)")
        #expect(!(put.stdout + put.stderr + ls.stdout + get.stderr).contains(server.password))
    }

    /// `FERRY_SMB_THREADS=0` leaves Samba's thread hooks out: every libsmbclient
    /// call holds one lock, in turn, and a tree still goes up and comes back whole
    /// with four connections. (Without the variable, the default, the library
    /// tests show the connections working at the same time.)
    @Test func oneCallAtATimeStillMovesATree() throws {
        let tree = work.file("tree")
        try FileManager.default.createDirectory(atPath: tree + "/in", withIntermediateDirectories: true)
        for i in 0..<12 { _ = try TestData.file(tree + "/in/f\(i).bin", size: 40_000 + i * 777, seed: UInt64(i)) }
        let serial = ["FERRY_SMB_THREADS": "0"]
        let put = try run(["put", "-r", tree, server.url("user", ""), "-j", "4"], env: serial)
        #expect(put.status == 0, "\(put.stderr)")
        let get = try run(["get", "-r", server.url("user", "tree"), "-o", "back", "-j", "4"], env: serial)
        #expect(get.status == 0, "\(get.stderr)")
        for i in 0..<12 {
            let original = FileManager.default.contents(atPath: tree + "/in/f\(i).bin")
            #expect(FileManager.default.contents(atPath: server.local("user", "tree/in/f\(i).bin")) == original)
            #expect(FileManager.default.contents(atPath: work.file("back/in/f\(i).bin")) == original)
        }
    }

    @Test func wrongPasswordAndNoSuchShareSayWhatToDo() throws {
        let wrong = "Wr0ng-secret-word"
        let out = try run(["ls", server.url("user")], env: ["FERRY_PASSWORD": wrong])
        #expect(out.status != 0)
        #expect(out.stderr.contains("NT_STATUS_LOGON_FAILURE") && out.stderr.contains("wrong user name or password"))
        #expect(!(out.stdout + out.stderr).contains(wrong))
        let share = try run(["ls", server.url("nosuch")])
        #expect(share.status != 0 && share.stderr.contains("no such share"), "\(share.stderr)")
    }

    /// kill -9 mid-file, then the same command: the second run's transfer starts
    /// from the part's length (its JSON counts only the bytes that had not arrived).
    @Test func killNineThenTheSameCommandResumesByteIdentical() throws {
        let size = 400 << 20
        let big = server.local("user", "big.bin")
        let dd = try TestProcess.run(
            "/bin/dd", ["if=/dev/urandom", "of=" + big, "bs=1M", "count=\(size >> 20)", "status=none"])
        #expect(dd.status == 0)
        let url = server.url("user", "big.bin")
        let first = try ServerProcess(
            ferry, ["get", url, "--quiet"], cwd: work.path, logPath: work.file("first.log"), environment: env)
        let part = work.file("big.bin.part")
        let deadline = Date().addingTimeInterval(30)
        while ((LocalFileSize.of(part) ?? 0) < 2_000_000 || !FileManager.default.fileExists(atPath: part + ".journal"))
            && Date() < deadline
        {
            usleep(2_000)
        }
        first.signal(SIGKILL)
        first.stop()
        let partSize = LocalFileSize.of(part) ?? 0
        #expect(partSize >= 2_000_000 && partSize < Int64(size), "\(partSize)")

        let again = try run(["get", url, "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(FileManager.default.contents(atPath: work.file("big.bin")) == FileManager.default.contents(atPath: big))
        #expect(!FileManager.default.fileExists(atPath: part))
        #expect(again.stdout.contains("\"resumedFrom\":\(partSize)"), "\(again.stdout.prefix(600)) part \(partSize)")
        #expect(again.stdout.contains("\"bytesTransferred\":\(Int64(size) - partSize)"), "\(again.stdout.prefix(600))")
    }

    @Test func syncTwiceImportsOnce() throws {
        let dcim = server.local("user", "DCIM/100CANON")
        try FileManager.default.createDirectory(atPath: dcim, withIntermediateDirectories: true)
        for i in 1...3 { _ = try TestData.file(dcim + "/IMG_000\(i).JPG", size: 30_000 * i, seed: UInt64(i)) }
        let url = server.url("user", "DCIM")
        let first = try run(["sync", url, "photos"])
        #expect(first.status == 0 && (first.stdout + first.stderr).contains("imported 3 files"), "\(first)")
        let second = try run(["sync", url, "photos"])
        #expect(second.status == 0 && (second.stdout + second.stderr).contains("imported 0 files"), "\(second)")
    }
}
