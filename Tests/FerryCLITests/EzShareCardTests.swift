import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ferry card --kind ezshare` and Ferry's `ezshare://` client, end to end
/// through the binary, and other clients' ways of asking the emulator (curl,
/// Python's urllib): raw backslashes in `dir`, following the absolute file
/// links. Everything stays on 127.0.0.1.
@Suite(.serialized)
struct EzShareCardTests {
    let root: TempDir
    let work: TempDir
    let ferry = TestProcess.ferryExecutable()
    let photo: Data
    let long: Data
    let cjk: Data

    init() throws {
        root = try TempDir(prefix: "ez-card")
        work = try TempDir(prefix: "ez-work")
        let fm = FileManager.default
        for folder in ["DCIM/100CANON", "DCIM/旅行照片", "DCIM/EMPTY", "MISC"] {
            try fm.createDirectory(atPath: root.file(folder), withIntermediateDirectories: true)
        }
        photo = try TestData.file(root.file("DCIM/100CANON/IMG_0001.JPG"), size: 300_000, seed: 1)
        long = try TestData.file(root.file("DCIM/100CANON/holiday at the beach.jpeg"), size: 5_000, seed: 2)
        cjk = try TestData.file(root.file("DCIM/旅行照片/长城.jpg"), size: 2_048, seed: 3)
    }

    func run(_ args: String...) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: work.path)
    }

    func card(_ extra: [String] = []) throws -> FerryCardProcess {
        try FerryCardProcess(folder: root.path, arguments: ["--kind", "ezshare"] + extra)
    }

    func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    @Test func listsLongAndCJKNamesWithoutSizes() throws {
        let card = try card()
        defer { card.stop() }
        #expect(card.log.contains("as an ez Share card at http://127.0.0.1:"), "\(card.log)")
        let top = try run("ls", card.ezShareURL("/DCIM"))
        #expect(top.status == 0, "\(top.stderr)")
        #expect(top.stdout.contains("100CANON/") && top.stdout.contains("旅行照片/") && top.stdout.contains("EMPTY/"))
        #expect(!top.stdout.contains(" ./") && !top.stdout.contains("../"), "\(top.stdout)")
        let json = try run("ls", card.ezShareURL("/DCIM/100CANON"), "--json")
        #expect(json.status == 0, "\(json.stderr)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(Set(entries.compactMap { $0["name"] as? String }) == ["IMG_0001.JPG", "holiday at the beach.jpeg"])
        // KB rounded up is no size: none is claimed.
        #expect(entries.allSatisfy { $0["size"] is NSNull }, "\(json.stdout)")
        #expect(entries.allSatisfy { ($0["modified"] as? String)?.count == 19 }, "\(json.stdout)")
        let inCJK = try run("ls", card.ezShareURL("/DCIM/旅行照片"))
        #expect(inCJK.status == 0 && inCJK.stdout.contains("长城.jpg"), "\(inCJK.stdout)\(inCJK.stderr)")
        let empty = try run("ls", card.ezShareURL("/DCIM/EMPTY"), "--json")
        #expect(empty.status == 0 && empty.stdout.filter { !$0.isWhitespace } == "[]", "\(empty.stdout)")
        let missing = try run("ls", card.ezShareURL("/DCIM/NOPE"))
        #expect(missing.status == 1 && missing.stderr.contains("not found"), "\(missing.stderr)")
        let info = try run("info", card.ezShareURL())
        #expect(info.status == 0 && info.stdout.contains("firmware:    LZ1801EDPG:1.0.0"), "\(info.stdout)")
    }

    @Test func getsOneFileAndAFolderTree() throws {
        let card = try card()
        defer { card.stop() }
        let one = try run("get", card.ezShareURL("/DCIM/100CANON/holiday at the beach.jpeg"))
        #expect(one.status == 0, "\(one.stderr)")
        #expect(contents(work.file("holiday at the beach.jpeg")) == long)
        let tree = try run("get", "-r", card.ezShareURL("/DCIM"), "-o", "tree")
        #expect(tree.status == 0, "\(tree.stderr)")
        #expect(contents(work.file("tree/100CANON/IMG_0001.JPG")) == photo)
        #expect(contents(work.file("tree/100CANON/holiday at the beach.jpeg")) == long)
        #expect(contents(work.file("tree/旅行照片/长城.jpg")) == cjk)
        // The second run finds every file here: the download took the card's time.
        let again = try run("get", "-r", card.ezShareURL("/DCIM"), "-o", "tree")
        #expect(again.status == 0 && again.stderr.contains("0 downloaded"), "\(again.stderr)")
        #expect(again.stderr.contains("3 already here"), "\(again.stderr)")
        let rm = try run("rm", card.ezShareURL("/DCIM/100CANON/IMG_0001.JPG"))
        #expect(rm.status == 1 && rm.stderr.contains("read-only"), "\(rm.stderr)")
        #expect(FileManager.default.fileExists(atPath: root.file("DCIM/100CANON/IMG_0001.JPG")))
    }

    @Test func anInterruptedDownloadResumesWithRange() throws {
        let big = try TestData.file(root.file("DCIM/100CANON/MVI_0002.MOV"), size: 1_500_000, seed: 4)
        let card = try card(["--rate", "400000"])
        defer { card.stop() }
        let url = card.ezShareURL("/DCIM/100CANON/MVI_0002.MOV")
        let get = try ServerProcess(ferry, ["get", url], cwd: work.path, logPath: work.file("get.log"))
        let part = work.file("MVI_0002.MOV.part")
        let deadline = Date().addingTimeInterval(15)
        while (size(part) ?? 0) < 400_000 && Date() < deadline { usleep(20_000) }
        get.signal(SIGINT)
        get.process.waitWithoutRunLoop()
        #expect(get.process.terminationStatus == 130, "\(get.log)")
        let kept = try #require(size(part))
        #expect(kept >= 400_000 && kept < 1_500_000)
        let resumed = try run("get", url, "--json")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let result = try #require(
            resumed.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.last { $0["type"] as? String == "result" })
        #expect((result["resumedFrom"] as? Int ?? 0) >= 400_000, "\(resumed.stdout)")
        #expect(contents(work.file("MVI_0002.MOV")) == big)
        #expect(!FileManager.default.fileExists(atPath: part))
    }

    @Test func syncImportsOnce() throws {
        let card = try card()
        defer { card.stop() }
        let first = try run("sync", card.ezShareURL("/DCIM"), "photos")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("imported 3 files") || first.stderr.contains("imported 3 files"), "\(first)")
        #expect(contents(work.file("photos/100CANON/IMG_0001.JPG")) == photo)
        let second = try run("sync", card.ezShareURL("/DCIM"), "photos")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(
            second.stdout.contains("imported 0 files") || second.stderr.contains("imported 0 files"), "\(second)")
        #expect(second.stdout.contains("3 imported before") || second.stderr.contains("3 imported before"))
        let delete = try run("sync", card.ezShareURL("/DCIM"), "photos", "--delete-after")
        #expect(delete.status == 2 && delete.stderr.contains("read-only over Wi-Fi"), "\(delete.stderr)")
    }

    // MARK: Other clients

    /// curl with raw backslashes in `dir`, a `Host` the links must name, and
    /// paths that try to leave the card.
    @Test func rawBackslashesAndTheHostHeader() throws {
        let card = try card()
        defer { card.stop() }
        let curl = TestProcess.which("curl") ?? "/usr/bin/curl"
        let raw = try TestProcess.run(curl, ["-sS", "--globoff", "\(card.httpURL("/dir"))?dir=A:\\DCIM\\100CANON"])
        let encoded = try TestProcess.run(curl, ["-sS", "\(card.httpURL("/dir"))?dir=A:%5CDCIM%5C100CANON"])
        #expect(raw.status == 0 && raw.stdout.contains("IMG_0001.JPG</a>"), "\(raw.stdout)")
        #expect(raw.stdout == encoded.stdout)
        // The absolute link names the address the card was reached at, and the alias.
        #expect(
            raw.stdout.contains(
                "<a href=\"http://127.0.0.1:\(card.port)/download?file=DCIM%5C100CANON%5CHOLIDA~1.JPE\"> holiday at the beach.jpeg</a>"
            ), "\(raw.stdout)")
        #expect(!raw.stdout.contains("192.168.4.1"))
        let named = try TestProcess.run(
            curl, ["-sS", "-H", "Host: card.example:8080", "\(card.httpURL("/dir"))?dir=A:%5CDCIM%5C100CANON"])
        #expect(named.stdout.contains("href=\"http://card.example:8080/download?file=DCIM%5C100CANON%5CIMG_0001.JPG\""))
        for escape in ["A:%5C..%5C..", "A:%5CDCIM%5C..", "..%2F..%2Fetc"] {
            let code = try TestProcess.run(
                curl, ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "\(card.httpURL("/dir"))?dir=\(escape)"])
            #expect(code.stdout == "403", "\(escape): \(code.stdout)")
        }
        let download = try TestProcess.run(
            curl,
            [
                "-sS", "-D", "-", "-o", "/dev/null", "--globoff",
                "\(card.httpURL("/download"))?file=DCIM\\100CANON\\IMG_0001.JPG",
            ])
        for header in ["Content-Length: 300000", "Accept-Ranges: bytes", "Last-Modified: ", "ETag: "] {
            #expect(download.stdout.contains(header), "\(header): \(download.stdout)")
        }
    }

    /// Python's urllib walks the card as ez Share scripts do: raw backslashes in
    /// `dir`, every link followed as written (relative folders, absolute files).
    @Test func urllibFollowsTheLinksAndStaysOnTheEmulator() throws {
        let card = try card()
        defer { card.stop() }
        let python = try #require(TestProcess.which("python3"), "python3")
        let script = #"""
            import hashlib, re, sys, urllib.parse, urllib.request
            base = sys.argv[1]
            seen, files, todo = set(), {}, [base + "dir?dir=A:\\DCIM"]
            while todo:
                page = todo.pop()
                if page in seen: continue
                seen.add(page)
                html = urllib.request.urlopen(page).read().decode("gb2312")
                for href, name in re.findall(r'<a href="([^"]+)"> ([^<]*)</a>', html):
                    if name in (".", ".."): continue
                    link = urllib.parse.urljoin(page, href)
                    if not link.startswith(base): sys.exit("left the emulator: " + link)
                    if "/dir?" in link: todo.append(link)
                    else: files[name] = hashlib.sha256(urllib.request.urlopen(link).read()).hexdigest()
            for name in sorted(files): print(name, files[name])
            """#
        let out = try TestProcess.run(python, ["-c", script, card.httpURL("/")])
        #expect(out.status == 0, "\(out.stderr)")
        func sha(_ d: Data) throws -> String {
            let file = work.file("sha-input")
            try d.write(to: URL(fileURLWithPath: file))
            return try TestProcess.run("/usr/bin/sha256sum", [file]).stdout.split(separator: " ").first.map(String.init)
                ?? ""
        }
        #expect(out.stdout.contains("IMG_0001.JPG \(try sha(photo))"), "\(out.stdout)")
        #expect(out.stdout.contains("holiday at the beach.jpeg \(try sha(long))"), "\(out.stdout)")
        #expect(out.stdout.contains("长城.jpg \(try sha(cjk))"), "\(out.stdout)")
    }

    @Test func usageErrors() throws {
        let bad = try run("card", root.path, "--kind", "ezshare", "--no-upload", "--port", "0")
        #expect(bad.status == 2 && bad.stderr.contains("--no-upload is for --kind flashair"), "\(bad.stderr)")
        let kind = try run("card", root.path, "--kind", "sandisk", "--port", "0")
        #expect(kind.status == 2, "\(kind.stderr)")
    }

    func size(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }
}
