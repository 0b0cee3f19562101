import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Re-runnable `get` and `get -r` (issue 16 item 1): a second run transfers no
/// file byte, proven from the server side, and a changed file is kept and reported.
@Suite(.serialized)
struct RerunTests {
    let root: TempDir
    let work: TempDir
    let ferry = TestProcess.ferryExecutable()
    let fm = FileManager.default

    init() throws {
        root = try TempDir(prefix: "rerun-card")
        work = try TempDir(prefix: "rerun-work")
        try fm.createDirectory(atPath: root.file("DCIM/100FERRY"), withIntermediateDirectories: true)
        for i in 1...3 {
            try TestData.file(root.file("DCIM/100FERRY/IMG_000\(i).JPG"), size: 60_000 * i, seed: UInt64(i))
        }
        try TestData.file(root.file("DCIM/100FERRY/NOTES.TXT"), size: 700, seed: 9)
    }

    func run(_ args: [String]) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: work.path)
    }

    @Test func aSecondGetRFromACardTransfersNoFileByteAndExitsZero() throws {
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        // The card behind a counting proxy: what the card sent is measured on its side of the wire.
        let proxy = try FaultProxy(upstreamPort: card.port)
        defer { proxy.stop() }
        let url = "flashair://127.0.0.1:\(proxy.port)/DCIM"

        let first = try run(["get", "-r", url, "-o", "photos"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("4 downloaded ("), "\(first.stderr)")
        #expect(first.stderr.contains("0 already here, 0 failed"), "\(first.stderr)")
        for name in ["IMG_0001.JPG", "IMG_0002.JPG", "IMG_0003.JPG", "NOTES.TXT"] {
            #expect(
                fm.contentsEqual(
                    atPath: work.file("photos/100FERRY/" + name), andPath: root.file("DCIM/100FERRY/" + name)))
        }
        let afterFirst = proxy.bytesFromServer
        #expect(afterFirst > 360_000)

        let second = try run(["get", "-r", url, "-o", "photos"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("0 downloaded, 4 already here, 0 failed"), "\(second.stderr)")
        let listingBytes = proxy.bytesFromServer - afterFirst
        // Listings only: less than the smallest file (700 B) would need, let alone 360 KB.
        #expect(listingBytes < 3_000, "the card sent \(listingBytes) bytes on the second run")
        print("re-run: the card sent \(listingBytes) bytes (listings) against \(afterFirst) on the first run")

        // A file changed here is kept and reported, with the hint; exit 1.
        try "mine".write(toFile: work.file("photos/100FERRY/NOTES.TXT"), atomically: true, encoding: .utf8)
        let third = try run(["get", "-r", url, "-o", "photos"])
        #expect(third.status == 1)
        #expect(third.stderr.contains("NOTES.TXT differs"), "\(third.stderr)")
        #expect(third.stderr.contains("--overwrite") && third.stderr.contains("--skip-existing"))
        #expect(third.stderr.contains("0 downloaded, 3 already here, 1 differs (kept), 0 failed"), "\(third.stderr)")
        #expect(try String(contentsOfFile: work.file("photos/100FERRY/NOTES.TXT"), encoding: .utf8) == "mine")

        // --json ends with one summary object.
        let json = try run(["get", "-r", url, "-o", "photos", "--json"])
        #expect(json.status == 1)
        let last = try #require(json.stdout.split(separator: "\n").last)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(summary["type"] as? String == "summary")
        #expect(summary["alreadyHere"] as? Int == 3 && summary["differs"] as? Int == 1)
        #expect(summary["transferred"] as? Int == 0 && summary["failed"] as? Int == 0)

        let skip = try run(["get", "-r", url, "-o", "photos", "--skip-existing"])
        #expect(skip.status == 0, "\(skip.stderr)")
        #expect(try String(contentsOfFile: work.file("photos/100FERRY/NOTES.TXT"), encoding: .utf8) == "mine")
        let replace = try run(["get", "-r", url, "-o", "photos", "--overwrite"])
        #expect(replace.status == 0, "\(replace.stderr)")
        #expect(replace.stderr.contains("1 downloaded ("), "\(replace.stderr)")
        #expect(
            fm.contentsEqual(
                atPath: work.file("photos/100FERRY/NOTES.TXT"), andPath: root.file("DCIM/100FERRY/NOTES.TXT")))
    }

    @Test func aSecondGetOfURLsAsksNginxOnlyForHeaders() throws {
        let www = try TempDir(prefix: "rerun-www")
        let nginx = try NginxServer(root: www.path)
        for i in 0..<3 { try TestData.file(www.file("f\(i).bin"), size: 40_000 + i, seed: UInt64(i)) }
        let urls = (0..<3).map { nginx.url("/f\($0).bin") }
        let first = try run(["get"] + urls + ["-o", "dl"])
        #expect(first.status == 0, "\(first.stderr)")
        let before = nginx.accessLog.count
        let second = try run(["get"] + urls + ["-o", "dl"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("0 downloaded, 3 already here, 0 failed"), "\(second.stderr)")
        let requests = nginx.accessLog.dropFirst(before)
        #expect(!requests.isEmpty)
        #expect(requests.allSatisfy { $0.hasPrefix("HEAD ") && $0.contains("sent=0") }, "\(requests)")
    }

    @Test func pathsAsPeopleTypeThem() throws {
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        // A folder without -r.
        let folder = try run(["get", card.url("/DCIM/100FERRY")])
        #expect(folder.status == 2)
        #expect(folder.stderr.contains("100FERRY is a folder; use -r"), "\(folder.stderr)")
        // ls of a file lists that file.
        let file = try run(["ls", card.url("/DCIM/100FERRY/NOTES.TXT")])
        #expect(file.status == 0, "\(file.stderr)")
        #expect(
            file.stdout.hasSuffix("  NOTES.TXT\n") && file.stdout.split(separator: "\n").count == 1, "\(file.stdout)")
        // get URL DIR/ and get URL . save into an existing folder.
        try fm.createDirectory(atPath: work.file("into"), withIntermediateDirectories: true)
        #expect(try run(["get", card.url("/DCIM/100FERRY/NOTES.TXT"), "into/"]).status == 0)
        #expect(fm.fileExists(atPath: work.file("into/NOTES.TXT")))
        #expect(try run(["get", card.url("/DCIM/100FERRY/IMG_0001.JPG"), "."]).status == 0)
        #expect(fm.fileExists(atPath: work.file("IMG_0001.JPG")))
        let notAFolder = try run(["get", card.url("/DCIM/100FERRY/NOTES.TXT"), "nowhere"])
        #expect(notAFolder.status == 2)
        #expect(notAFolder.stderr.contains("-o nowhere"))
        // Patterns are matched against the listing, never sent.
        let listed = try run(["ls", "--json", card.url("/DCIM/100FERRY/IMG_000[12].JPG")])
        #expect(listed.status == 0, "\(listed.stderr)")
        let names = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
            .compactMap { $0["name"] as? String }
        #expect(names == ["IMG_0001.JPG", "IMG_0002.JPG"])
        let got = try run(["get", card.url("/DCIM/100FERRY/*.JPG"), "-o", "jpgs"])
        #expect(got.status == 0, "\(got.stderr)")
        #expect(
            try fm.contentsOfDirectory(atPath: work.file("jpgs")).sorted() == [
                "IMG_0001.JPG", "IMG_0002.JPG", "IMG_0003.JPG",
            ])
        let none = try run(["get", card.url("/DCIM/100FERRY/*.RAW")])
        #expect(none.status == 1)
        #expect(none.stderr.contains("no name matches *.RAW"), "\(none.stderr)")
        // --only on get -r.
        let only = try run(["get", "-r", card.url("/DCIM"), "-o", "texts", "--only", "txt"])
        #expect(only.status == 0, "\(only.stderr)")
        #expect(try fm.contentsOfDirectory(atPath: work.file("texts/100FERRY")) == ["NOTES.TXT"])
        // rm with a pattern.
        let rm = try run(["rm", card.url("/DCIM/100FERRY/IMG_000?.JPG")])
        #expect(rm.status == 0, "\(rm.stderr)")
        #expect(rm.stderr.split(separator: "\n").filter { $0.hasPrefix("deleted ") }.count == 3)
        #expect(try fm.contentsOfDirectory(atPath: root.file("DCIM/100FERRY")) == ["NOTES.TXT"])
    }

    @Test func longListingAlignsColumnsAndPlainListingKeepsItsFormat() throws {
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        let plain = try run(["ls", card.url("/DCIM/100FERRY")])
        #expect(plain.status == 0)
        for line in plain.stdout.split(separator: "\n") {
            // "- " + 12 columns of size + " " + "YYYY-MM-DD HH:MM" + "  " + name.
            #expect(line.count > 33 && line.dropFirst(2).prefix(12).allSatisfy { $0 == " " || $0.isNumber }, "\(line)")
        }
        let long = try run(["ls", "-lh", card.url("/DCIM/100FERRY")])
        #expect(long.status == 0, "\(long.stderr)")
        let lines = long.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines.contains { $0.contains("180 KB") } && lines.contains { $0.contains("700 B") }, "\(lines)")
        // Aligned: every date starts in the same column.
        let columns = Set(
            lines.compactMap {
                $0.range(of: "20[0-9][0-9]-", options: .regularExpression)?.lowerBound.utf16Offset(in: $0)
            })
        #expect(columns.count == 1, "\(lines)")
    }

    @Test func didYouMeanAndInfoOfSomethingElse() throws {
        let command = try run(["lst", "x"])
        #expect(command.status == 2)
        #expect(command.stderr.contains("did you mean 'ls'"))
        let option = try run(["get", "--overwirte", "http://127.0.0.1/x"])
        #expect(option.status == 2)
        #expect(option.stderr.contains("did you mean --overwrite"))
        let www = try TempDir(prefix: "notacard")
        let nginx = try NginxServer(root: www.path)
        let info = try run(["info", nginx.url("/")])
        #expect(info.status == 1)
        #expect(info.stderr.contains("127.0.0.1 is not a FlashAir card (no command.cgi)"), "\(info.stderr)")
        let ls = try run(["ls", "flashair://127.0.0.1:\(nginx.port)/"])
        #expect(ls.status == 1)
        #expect(ls.stderr.contains("is not a FlashAir card"), "\(ls.stderr)")
    }

    @Test func commandsSayWhatTheyDid() throws {
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        let mkdir = try run(["mkdir", card.url("/NEW")])
        #expect(mkdir.status == 0 && mkdir.stderr.contains("created folder"), "\(mkdir.stderr)")
        try TestData.file(work.file("a.bin"), size: 5_000, seed: 3)
        let put = try run(["put", work.file("a.bin"), card.url("/NEW/")])
        #expect(put.status == 0 && put.stderr.contains("uploaded a.bin ("), "\(put.stderr)")
        let quiet = try run(["rm", card.url("/NEW/a.bin"), "--quiet"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty)
        let rmdir = try run(["rmdir", card.url("/NEW")])
        #expect(rmdir.status == 0 && rmdir.stderr.contains("removed folder"), "\(rmdir.stderr)")
    }

    @Test func aSingleGetOnATerminalLeavesOneSavedLine() throws {
        let script = "/usr/bin/script"
        try #require(fm.isExecutableFile(atPath: script), "script (util-linux) gives the command a terminal")
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        let out = try TestProcess.run(
            script, ["-qec", "\(ferry) get \(card.url("/DCIM/100FERRY/IMG_0002.JPG"))", "/dev/null"], cwd: work.path)
        #expect(out.status == 0, "\(out.stdout)")
        #expect(out.stdout.contains("saved IMG_0002.JPG (120 KB in "), "\(out.stdout)")
        let again = try TestProcess.run(
            script, ["-qec", "\(ferry) get \(card.url("/DCIM/100FERRY/IMG_0002.JPG"))", "/dev/null"], cwd: work.path)
        #expect(again.status == 0)
        #expect(again.stdout.contains("IMG_0002.JPG: already here (120 KB)"), "\(again.stdout)")
    }

    @Test func ctrlCKeepsThePartAndExits130() throws {
        try TestData.file(root.file("DCIM/100FERRY/BIG.RAW"), size: 3_000_000, seed: 5)
        let card = try FerryCardProcess(folder: root.path, arguments: ["--rate", "500000"])
        defer { card.stop() }
        let get = try ServerProcess(
            ferry, ["get", card.url("/DCIM/100FERRY/BIG.RAW")], cwd: work.path, logPath: work.file("get.log"))
        let part = work.file("BIG.RAW.part")
        let deadline = Date().addingTimeInterval(15)
        while (localSize(part) ?? 0) < 500_000 && Date() < deadline { usleep(20_000) }
        get.signal(SIGINT)
        get.process.waitWithoutRunLoop()
        #expect(get.process.terminationStatus == 130, "\(get.log)")
        #expect(get.log.contains("run the same command again to resume"), "\(get.log)")
        #expect((localSize(part) ?? 0) >= 500_000)
    }

    func localSize(_ path: String) -> Int64? {
        (try? fm.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }
}
