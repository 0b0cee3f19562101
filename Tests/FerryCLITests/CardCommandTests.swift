import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ferry card` and `ferry info` run as processes, and the remote commands
/// (`ls`, `get -r`, `put`, `rm`, `mkdir`, `rmdir`, `mv`) on `flashair://` URLs.
@Suite(.serialized)
struct CardCommandTests {
    let root: TempDir
    let work: TempDir
    let ferry = TestProcess.ferryExecutable()

    init() throws {
        root = try TempDir(prefix: "cardcli")
        work = try TempDir(prefix: "cardcli-work")
        let fm = FileManager.default
        try fm.createDirectory(atPath: root.file("DCIM/100__TSB"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root.file("SD_WLAN"), withIntermediateDirectories: true)
        try TestData.file(root.file("DCIM/100__TSB/IMG_0001.JPG"), size: 120_000, seed: 1)
        try TestData.file(root.file("DCIM/100__TSB/IMG_0002.JPG"), size: 80_000, seed: 2)
        try TestData.file(root.file("DCIM/100__TSB/.trash"), size: 3, seed: 3)
        try TestData.file(root.file("SD_WLAN/CONFIG"), size: 30, seed: 4)
    }

    func run(_ args: [String]) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: work.path)
    }

    @Test func printsTheURLItServesAndStopsOnSIGTERM() throws {
        let card = try FerryCardProcess(folder: root.path)
        let line = card.log.split(separator: "\n").first.map(String.init) ?? ""
        #expect(line.hasPrefix("ferry card: serving "))
        #expect(
            line.contains("as a FlashAir card at http://127.0.0.1:\(card.port)/ (flashair://127.0.0.1:\(card.port)/)"))
        #expect(card.terminate() == 0)
    }

    @Test func badUsage() throws {
        #expect(try run(["card"]).status == 2)
        #expect(try run(["card", root.path, "--port", "70000"]).status == 2)
        #expect(try run(["card", root.path, "--cid", "xyz"]).status == 2)
        let missing = try run(["card", root.file("nope")])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("nope"))
        #expect(try run(["info", "ftp://127.0.0.1/"]).status == 2)
        let help = try run(["help", "card"])
        #expect(help.status == 0 && help.stdout.contains("--max-connections"))
    }

    @Test func infoAsTextAndJSON() throws {
        let card = try FerryCardProcess(folder: root.path, arguments: ["--firmware", "F19BAW3AW3.00.01"])
        let text = try run(["info", card.url()])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("firmware:    F19BAW3AW3.00.01 (W-03)"))
        #expect(text.stdout.contains("upload:      enabled"))
        #expect(text.stdout.contains("WebDAV:      off"), "\(text.stdout)")
        #expect(text.stdout.contains("Wi-Fi:       access point"), "\(text.stdout)")
        #expect(!text.stdout.contains("op="))
        #expect(text.stdout.contains("free of"))
        let json = try run(["info", "--json", card.url()])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["firmware"] as? String == "F19BAW3AW3.00.01")
        #expect(object["generation"] as? String == "W-03")
        #expect((object["cid"] as? String)?.count == 32)
        #expect(object["uploadEnabled"] as? Bool == true)
        #expect((object["unsupportedOperations"] as? [Int]) == [])
        // Nothing listens: exit 1 and "card not answering".
        card.stop()
        let gone = try run(["info", card.url()])
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("card not answering"))
    }

    @Test func lsHidesSystemAndHiddenEntriesUnlessAll() throws {
        let card = try FerryCardProcess(folder: root.path)
        let plain = try run(["ls", card.url("/"), "--json"])
        #expect(plain.status == 0, "\(plain.stderr)")
        let names = try #require(try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [[String: Any]])
            .compactMap { $0["name"] as? String }
        #expect(names == ["DCIM"])
        let all = try run(["ls", "--all", card.url("/")])
        #expect(all.stdout.contains("SD_WLAN/"))
        let photos = try run(["ls", "--json", card.url("/DCIM/100__TSB")])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(photos.stdout.utf8)) as? [[String: Any]])
        #expect(rows.compactMap { $0["name"] as? String } == ["IMG_0001.JPG", "IMG_0002.JPG"])
        #expect(rows.first?["size"] as? Int == 120_000)
        #expect(rows.first?["type"] as? String == "file")
        #expect((rows.first?["modified"] as? String)?.hasSuffix("Z") == false)
    }

    @Test func getPutRmMkdirRmdirMv() throws {
        let card = try FerryCardProcess(folder: root.path, arguments: ["--max-connections", "1"])
        let got = try run(["get", "-r", card.url("/DCIM"), "-o", "copy", "--quiet"])
        #expect(got.status == 0, "\(got.stderr)")
        for name in ["IMG_0001.JPG", "IMG_0002.JPG"] {
            #expect(
                FileManager.default.contentsEqual(
                    atPath: work.file("copy/100__TSB/" + name), andPath: root.file("DCIM/100__TSB/" + name)))
        }

        try TestData.file(work.file("up.bin"), size: 64_000, seed: 7)
        #expect(try run(["mkdir", "-p", card.url("/NEW/SUB")]).status == 0)
        let put = try run(["put", work.file("up.bin"), card.url("/NEW/SUB/"), "--quiet"])
        #expect(put.status == 0, "\(put.stderr)")
        #expect(FileManager.default.contentsEqual(atPath: root.file("NEW/SUB/up.bin"), andPath: work.file("up.bin")))
        // The same file again is already there; another one of that name differs and is kept.
        let again = try run(["put", work.file("up.bin"), card.url("/NEW/SUB/"), "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("\"state\":\"already-here\""), "\(again.stdout)")
        try FileManager.default.createDirectory(atPath: work.file("other"), withIntermediateDirectories: true)
        try TestData.file(work.file("other/up.bin"), size: 1000, seed: 8)
        let differs = try run(["put", work.file("other/up.bin"), card.url("/NEW/SUB/")])
        #expect(differs.status == 1)
        #expect(differs.stderr.contains("differs") && differs.stderr.contains("--skip-existing"), "\(differs.stderr)")
        #expect(FileManager.default.contentsEqual(atPath: root.file("NEW/SUB/up.bin"), andPath: work.file("up.bin")))

        let rmdirFull = try run(["rmdir", card.url("/NEW/SUB")])
        #expect(rmdirFull.status == 1)
        #expect(try run(["rm", card.url("/NEW/SUB/up.bin")]).status == 0)
        let rmdir = try run(["rmdir", card.url("/NEW/SUB")])
        #expect(rmdir.status == 0)
        #expect(rmdir.stderr.contains("removed folder"), "\(rmdir.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root.file("NEW/SUB")))

        let mv = try run(["mv", card.url("/DCIM/100__TSB/IMG_0001.JPG"), "X.JPG"])
        #expect(mv.status == 1)
        #expect(mv.stderr.contains("cannot rename"))
    }
}
