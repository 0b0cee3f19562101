import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ferry` on `dav://` URLs, run as a process against Apache `mod_dav`, nginx
/// `dav_ext` and `rclone serve webdav` started by the test.
@Suite(.serialized)
struct WebDAVCommandTests {
    let work: TempDir
    let home: TempDir
    let ferry = TestProcess.ferryExecutable()

    init() throws {
        work = try TempDir(prefix: "dav-cli")
        home = try TempDir(prefix: "dav-home")
    }

    var env: [String: String] { ["HOME": home.path, "NETRC": home.file("no-netrc"), "FERRY_PASSWORD": ""] }

    func run(_ args: [String], env extra: [String: String] = [:]) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: work.path, environment: env.merging(extra) { $1 })
    }

    /// kill -9 in the middle of a file, then the same command: it asks only for
    /// the rest (nginx's log shows the Range and the bytes it sent).
    @Test func killNineThenTheSameCommandResumes() throws {
        let server = try NginxDAVServer()
        defer { server.stop() }
        let data = try TestData.file(server.local("big.bin"), size: 8_000_000, seed: 9)
        let url = server.base + "slow/big.bin"
        let first = try ServerProcess(
            ferry, ["get", url, "--quiet"], cwd: work.path, logPath: work.file("first.log"), environment: env)
        let part = work.file("big.bin.part")
        let deadline = Date().addingTimeInterval(20)
        while (size(part) < 3_000_000 || !FileManager.default.fileExists(atPath: part + ".journal"))
            && Date() < deadline
        {
            usleep(20_000)
        }
        first.signal(SIGKILL)
        first.stop()
        let partSize = size(part)
        #expect(partSize >= 3_000_000 && partSize < 8_000_000)
        #expect(!FileManager.default.fileExists(atPath: work.file("big.bin")))

        let again = try run(["get", url, "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("big.bin"))) == data)
        #expect(!FileManager.default.fileExists(atPath: part))
        let ranged = server.accessLog.filter { $0.hasPrefix("GET /slow/big.bin") && $0.contains("range=\"bytes=") }
        #expect(ranged.count == 1, "\(ranged)")
        let line = ranged.first ?? ""
        #expect(line.contains("range=\"bytes=\(partSize)-\"") && line.contains("status=206"), "\(line)")
        #expect(line.contains("sent=\(8_000_000 - partSize)"), "\(line)")
    }

    /// put -r, ls --json, get -r, mv, rm, mkdir -p and rmdir with the password
    /// from FERRY_PASSWORD (Apache, basic auth); a wrong one fails with exit 1,
    /// says which user, and shows no password.
    /// kill -9 in the middle of an upload to Apache (which writes a ranged PUT
    /// at its offset), then the same command: the pieces the server holds stay,
    /// and only the rest is sent (a counting relay in front of Apache, paced at
    /// 8 MB/s so the kill lands mid-file, counts the bytes).
    @Test func killNineMidUploadThenTheSameCommandSendsOnlyTheRest() throws {
        let server = try ApacheDAVServer()
        defer { server.stop() }
        server.allowWrites()
        let relay = try CountingRelay(upstreamPort: server.port, upBytesPerSecond: 8_000_000)
        defer { relay.stop() }
        let total = 40_000_000
        let data = try TestData.file(work.file("big.bin"), size: total, seed: 31)
        let url = "dav://127.0.0.1:\(relay.port)/dav/big.bin"
        let first = try ServerProcess(
            ferry, ["put", work.file("big.bin"), url, "--quiet"], cwd: work.path, logPath: work.file("put1.log"),
            environment: env)
        let temp = server.local(".big.bin.ferry-part")
        // Killed once the server holds the first piece (16 MiB) and the next is on its way.
        let deadline = Date().addingTimeInterval(30)
        while (size(temp) < 16 << 20 || relay.bytesUp < (16 << 20) + 2_000_000) && Date() < deadline {
            usleep(20_000)
        }
        first.signal(SIGKILL)
        first.stop()
        // What the relay still held from the killed run reaches Apache first:
        // counted and written before the second run starts.
        var quiet = Date()
        var last = relay.bytesUp
        while Date().timeIntervalSince(quiet) < 1, Date() < deadline {
            usleep(50_000)
            if relay.bytesUp != last { (last, quiet) = (relay.bytesUp, Date()) }
        }
        usleep(300_000)
        let kept = Int(size(temp))
        #expect(kept >= 16 << 20 && kept < total, "kept \(kept)")
        #expect(!FileManager.default.fileExists(atPath: server.local("big.bin")))

        let upBefore = relay.bytesUp
        let again = try run(["put", work.file("big.bin"), url, "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(FileManager.default.contents(atPath: server.local("big.bin")) == data)
        #expect(!FileManager.default.fileExists(atPath: temp))
        // The rest of the file and the requests' own bytes; never the kept pieces again.
        let sent = relay.bytesUp - upBefore
        #expect(sent >= total - kept && sent < total - kept + 100_000, "sent \(sent), kept \(kept)")
        #expect(again.stdout.contains("\"resumedFrom\":\(kept),"), "\(again.stdout.suffix(400))")
    }

    @Test func everyCommandWithAPasswordAndAWrongOne() throws {
        let server = try ApacheDAVServer(basicAuth: ("anna", "right-pass"))
        defer { server.stop() }
        let base = server.base.replacingOccurrences(of: "dav://", with: "dav://anna@")
        try FileManager.default.createDirectory(atPath: work.file("album/sub"), withIntermediateDirectories: true)
        let a = try TestData.file(work.file("album/a #1 %.jpg"), size: 200_000, seed: 1)
        let b = try TestData.file(work.file("album/sub/ünï b.jpg"), size: 3_000, seed: 2)
        let password = ["FERRY_PASSWORD": "right-pass"]

        let put = try run(["put", "-r", "album", base + "backup/"], env: password)
        #expect(put.status == 0, "\(put.stdout) \(put.stderr)")
        #expect(FileManager.default.contents(atPath: server.local("backup/album/a #1 %.jpg")) == a)
        #expect(FileManager.default.contents(atPath: server.local("backup/album/sub/ünï b.jpg")) == b)
        // The same again: nothing sent, nothing replaced.
        let putsBefore = server.accessLog.filter { $0.hasPrefix("PUT ") }.count
        let rerun = try run(["put", "-r", "album", base + "backup/", "--json"], env: password)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(server.accessLog.filter { $0.hasPrefix("PUT ") }.count == putsBefore, "\(server.accessLog)")
        // A different local file under the same name is not sent over the server's copy.
        try TestData.file(work.file("album/a #1 %.jpg"), size: 1_000, seed: 5)
        let changed = try run(["put", "-r", "album", base + "backup/"], env: password)
        #expect(changed.status != 0, "\(changed)")
        #expect(FileManager.default.contents(atPath: server.local("backup/album/a #1 %.jpg")) == a)

        let ls = try run(["ls", base + "backup/album", "--json"], env: password)
        #expect(ls.status == 0 && ls.stdout.contains("a #1 %.jpg") && ls.stdout.contains("200000"), "\(ls)")

        let get = try run(["get", "-r", base + "backup/album", "-o", "copy"], env: password)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(FileManager.default.contents(atPath: work.file("copy/sub/ünï b.jpg")) == b)
        // Again: PROPFIND's sizes and times say both files are here; no GET.
        let getsBefore = server.accessLog.filter { $0.hasPrefix("GET ") }.count
        let again = try run(["get", "-r", base + "backup/album", "-o", "copy"], env: password)
        #expect(again.status == 0 && (again.stdout + again.stderr).contains("2 already here"), "\(again)")
        #expect(server.accessLog.filter { $0.hasPrefix("GET ") }.count == getsBefore)

        #expect(try run(["mkdir", "-p", base + "x/y/z"], env: password).status == 0)
        // In a URL, `#` and `%` are escaped (`#` would start a fragment).
        let mv = try run(["mv", base + "backup/album/a%20%231%20%25.jpg", "renamed.jpg"], env: password)
        #expect(mv.status == 0, "\(mv)")
        #expect(FileManager.default.fileExists(atPath: server.local("backup/album/renamed.jpg")))
        #expect(try run(["rm", base + "backup/album/renamed.jpg"], env: password).status == 0)
        #expect(try run(["rmdir", base + "x/y/z"], env: password).status == 0)
        #expect(!FileManager.default.fileExists(atPath: server.local("x/y/z")))

        let wrong = try run(["ls", base + "backup/", "--json"], env: ["FERRY_PASSWORD": "wrong-secret"])
        #expect(wrong.status == 1, "\(wrong)")
        #expect(!(wrong.stdout + wrong.stderr).contains("wrong-secret"))
        #expect((wrong.stdout + wrong.stderr).contains("anna"), "\(wrong)")
        let inURL = try run(["ls", base.replacingOccurrences(of: "anna@", with: "anna:url-secret@") + "backup/"])
        #expect(inURL.status == 1 && !(inURL.stdout + inURL.stderr).contains("url-secret"), "\(inURL)")
    }

    /// sync from rclone twice: the second run imports nothing.
    @Test func syncTwiceImportsOnce() throws {
        let server = try RcloneDAVServer()
        defer { server.stop() }
        try FileManager.default.createDirectory(atPath: server.local("DCIM/100"), withIntermediateDirectories: true)
        for i in 1...3 {
            try Data(SampleJPEG.withThumbnail()).write(to: URL(fileURLWithPath: server.local("DCIM/100/IMG_\(i).JPG")))
        }
        let first = try run(["sync", server.base + "DCIM", "photos"])
        #expect(first.status == 0 && (first.stdout + first.stderr).contains("imported 3 files"), "\(first)")
        let second = try run(["sync", server.base + "DCIM", "photos"])
        #expect(second.status == 0 && (second.stdout + second.stderr).contains("imported 0 files"), "\(second)")
    }

    private func size(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? nil) ?? 0
    }
}
