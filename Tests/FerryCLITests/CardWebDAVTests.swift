import FerryTestSupport
import Foundation
import Testing

/// `ferry card --webdav`: a FlashAir in drive mode answers command.cgi and
/// WebDAV on one port; `ferry info` says which it offers, and the folder is
/// reachable both as flashair:// and as dav://.
@Suite(.serialized)
struct CardWebDAVTests {
    let root: TempDir
    let work: TempDir
    let ferry = TestProcess.ferryExecutable()

    init() throws {
        root = try TempDir(prefix: "carddav")
        work = try TempDir(prefix: "carddav-work")
        try FileManager.default.createDirectory(atPath: root.file("DCIM/100__TSB"), withIntermediateDirectories: true)
        try TestData.file(root.file("DCIM/100__TSB/IMG_0001.JPG"), size: 150_000, seed: 1)
        try TestData.file(root.file("DCIM/100__TSB/a b#%é.JPG"), size: 4_000, seed: 2)
    }

    func run(_ args: [String]) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: work.path)
    }

    func dav(_ card: FerryCardProcess, _ path: String = "/") -> String { "dav://127.0.0.1:\(card.port)\(path)" }

    func infoJSON(_ card: FerryCardProcess) throws -> [String: Any] {
        let json = try run(["info", "--json", card.url()])
        #expect(json.status == 0, "\(json.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    }

    @Test func infoSaysNoWebDAVByDefault() throws {
        let card = try FerryCardProcess(folder: root.path)
        let text = try run(["info", card.url()])
        #expect(text.stdout.contains("WebDAV:      off\n"), "\(text.stdout)")
        let object = try infoJSON(card)
        #expect(object["webDAVLevel"] as? Int == 0)
        #expect(object["webDAVURL"] is NSNull)
        #expect(object["webDAVReadOnly"] is NSNull)
        // Without drive mode the card is no WebDAV server.
        let ls = try run(["ls", dav(card, "/DCIM/")])
        #expect(ls.status == 1)
    }

    @Test func readWriteDriveModeBothWays() throws {
        let card = try FerryCardProcess(folder: root.path, arguments: ["--webdav", "2", "--max-connections", "1"])
        let text = try run(["info", card.url()])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("WebDAV:      read and write at \(dav(card))\n"), "\(text.stdout)")
        let object = try infoJSON(card)
        #expect(object["webDAVLevel"] as? Int == 2)
        #expect(object["webDAVURL"] as? String == dav(card))
        #expect(object["webDAVReadOnly"] as? Bool == false)

        // The same files both ways.
        let viaCard = try run(["ls", "--json", card.url("/DCIM/100__TSB")])
        let viaDAV = try run(["ls", "--json", dav(card, "/DCIM/100__TSB/")])
        #expect(viaDAV.status == 0, "\(viaDAV.stderr)")
        func namesAndSizes(_ out: TestProcess.Output) throws -> [String] {
            try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
                .map { "\($0["name"] ?? "")=\($0["size"] ?? "")" }.sorted()
        }
        #expect(try namesAndSizes(viaDAV) == ["IMG_0001.JPG=150000", "a b#%é.JPG=4000"])
        #expect(try namesAndSizes(viaCard) == namesAndSizes(viaDAV))

        let got = try run(["get", "-r", dav(card, "/DCIM/"), "-o", "copy", "--quiet"])
        #expect(got.status == 0, "\(got.stderr)")
        for name in ["IMG_0001.JPG", "a b#%é.JPG"] {
            #expect(
                FileManager.default.contentsEqual(
                    atPath: work.file("copy/100__TSB/" + name), andPath: root.file("DCIM/100__TSB/" + name)))
        }

        // Writes through WebDAV show through command.cgi, and the other way round.
        try TestData.file(work.file("up.bin"), size: 70_000, seed: 7)
        // A missing folder is the server's 409 in words, at once: not "the
        // server holds 0 bytes" after six tries.
        let started = ContinuousClock.now
        let missing = try run(["put", work.file("up.bin"), dav(card, "/NEW/SUB/")])
        #expect(missing.status == 1)
        #expect(
            missing.stderr.contains("409") && missing.stderr.contains("parent folder is missing"), "\(missing.stderr)")
        #expect(ContinuousClock.now - started < .seconds(3))
        #expect(try run(["mkdir", "-p", dav(card, "/NEW/SUB")]).status == 0)
        let put = try run(["put", work.file("up.bin"), dav(card, "/NEW/SUB/"), "--quiet"])
        #expect(put.status == 0, "\(put.stderr)")
        #expect(FileManager.default.contentsEqual(atPath: root.file("NEW/SUB/up.bin"), andPath: work.file("up.bin")))
        let listed = try run(["ls", card.url("/NEW/SUB")])
        #expect(listed.stdout.contains("up.bin"), "\(listed.stdout)")
        let mv = try run(["mv", dav(card, "/NEW/SUB/up.bin"), "moved.bin"])
        #expect(mv.status == 0, "\(mv.stderr)")
        #expect(FileManager.default.fileExists(atPath: root.file("NEW/SUB/moved.bin")))
        #expect(try run(["rm", dav(card, "/NEW/SUB/moved.bin")]).status == 0)
        #expect(try run(["rmdir", dav(card, "/NEW/SUB")]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: root.file("NEW/SUB")))
        // op=102's change flag and op=121 saw the WebDAV writes.
        let after = try infoJSON(card)
        #expect((after["lastWriteMilliseconds"] as? Int ?? 0) > 0, "\(after)")
    }

    @Test func readOnlyDriveModeRefusesWrites() throws {
        let card = try FerryCardProcess(folder: root.path, arguments: ["--webdav", "1"])
        let text = try run(["info", card.url()])
        #expect(text.stdout.contains("WebDAV:      read-only at \(dav(card))\n"), "\(text.stdout)")
        #expect(try infoJSON(card)["webDAVReadOnly"] as? Bool == true)
        let ls = try run(["ls", dav(card, "/DCIM/100__TSB/")])
        #expect(ls.status == 0 && ls.stdout.contains("IMG_0001.JPG"), "\(ls.stderr)")
        let mkdir = try run(["mkdir", dav(card, "/NEW")])
        #expect(mkdir.status == 1)
        #expect(mkdir.stderr.contains("403") || mkdir.stderr.lowercased().contains("denied"), "\(mkdir.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root.file("NEW")))
        #expect(try run(["rm", dav(card, "/DCIM/100__TSB/IMG_0001.JPG")]).status == 1)
        #expect(FileManager.default.fileExists(atPath: root.file("DCIM/100__TSB/IMG_0001.JPG")))
    }

    @Test func webDAVNeedsAFirmwareWithDriveMode() throws {
        let old = try run(["card", root.path, "--port", "0", "--firmware", "F19BAW3AW2.00.02", "--webdav", "1"])
        #expect(old.status == 2)
        #expect(old.stderr.contains("3.00.00"), "\(old.stderr)")
        let ez = try run(["card", root.path, "--port", "0", "--kind", "ezshare", "--webdav", "1"])
        #expect(ez.status == 2)
    }
}
