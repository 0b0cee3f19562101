import FerryTestSupport
import Foundation
import Testing

/// `ferry ls`, `get -r` and `sync` of http:// folders, run as a process against
/// real servers' index pages (nginx autoindex, Apache, lighttpd).
@Suite(.serialized)
struct HTTPFolderCommandTests {
    let files: TempDir
    let work: TempDir
    let ferry = TestProcess.ferryExecutable()
    var data: [String: Data] = [:]
    static let names = ["R&D #1.txt", "100%.jpg", "café.jpg", "sub dir/inner.bin", "sub dir/more/deep.bin"]

    init() throws {
        files = try TempDir(prefix: "www")
        work = try TempDir(prefix: "cli")
        for (i, name) in Self.names.enumerated() {
            let path = files.file("photos/" + name)
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            data[name] = try TestData.file(path, size: 1_000 + 70_000 * i, seed: UInt64(i))
        }
        try FileManager.default.createDirectory(atPath: files.file("site"), withIntermediateDirectories: true)
        try "<html><title>Welcome</title><a href=\"a.html\">a</a></html>".write(
            toFile: files.file("site/index.html"), atomically: true, encoding: .utf8)
    }

    func run(_ args: String...) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: work.path)
    }

    func checkDownloaded(_ folder: String) throws {
        for (name, bytes) in data {
            #expect(try Data(contentsOf: URL(fileURLWithPath: work.file(folder + "/" + name))) == bytes, "\(name)")
        }
    }

    @Test func lsReadsTheIndexPage() throws {
        let nginx = try NginxServer(root: files.path)
        let out = try run("ls", nginx.url("/index/photos/"))
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(out.stdout)")
        #expect(lines[0].hasPrefix("d ") && lines[0].hasSuffix("  sub dir/"))
        #expect(lines.contains { $0.hasPrefix("-         1000 ") && $0.hasSuffix("  R&D #1.txt") }, "\(out.stdout)")
        #expect(out.stderr.contains("4 items"))

        let json = try run("ls", nginx.url("/index-json/photos/"), "--json")
        #expect(json.status == 0, "\(json.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let cafe = try #require(rows.first { $0["name"] as? String == "café.jpg" })
        #expect(cafe["size"] as? Int == 141_000)
        #expect(cafe["path"] as? String == "/index-json/photos/café.jpg")
        #expect(cafe["modified"] is String)
    }

    @Test func lsOfAPageThatIsNoIndex() throws {
        let nginx = try NginxServer(root: files.path)
        let out = try run("ls", nginx.url("/site/"))
        #expect(out.status == 1)
        #expect(out.stderr.contains("not a folder listing"), "\(out.stderr)")
        #expect(out.stdout.isEmpty)
    }

    @Test func getRecursiveFromApacheAndLighttpd() throws {
        let apache = try ApacheServer(root: files.path)
        let a = try run("get", "-r", apache.url("/fancy/photos/"), "-o", "from-apache", "--quiet")
        #expect(a.status == 0, "\(a.stderr)")
        try checkDownloaded("from-apache")

        // Without the slash: the server redirects to the folder's page.
        let lighttpd = try LighttpdServer(root: files.path)
        let l = try run("get", "-r", lighttpd.url("/photos"), "--quiet")
        #expect(l.status == 0, "\(l.stderr)")
        try checkDownloaded("photos")
    }

    @Test func aFolderURLWithoutRecursiveIsRefused() throws {
        let nginx = try NginxServer(root: files.path)
        let out = try run("get", nginx.url("/index/photos/"))
        #expect(out.status == 2, "\(out.stderr)")
        #expect(out.stderr.contains("photos is a folder; use -r"), "\(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.file("index.html")))
        // A site's own page at a URL ending in / is still saved as index.html.
        let page = try run("get", nginx.url("/site/"), "--quiet")
        #expect(page.status == 0, "\(page.stderr)")
        #expect(FileManager.default.fileExists(atPath: work.file("index.html")))
    }

    /// File requests (not folder pages) in an access log line list.
    static func fileRequests(_ log: ArraySlice<String>) -> [String] {
        log.filter { !$0.contains("/ status=") }
    }

    @Test func aSecondGetRecursiveMovesNoFileByte() throws {
        let nginx = try NginxServer(root: files.path)
        let first = try run("get", "-r", nginx.url("/index/photos/"), "-o", "copy")
        #expect(first.status == 0, "\(first.stderr)")
        let before = nginx.accessLog.count
        let again = try run("get", "-r", nginx.url("/index/photos/"), "-o", "copy")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("0 downloaded") && again.stderr.contains("5 already here"), "\(again.stderr)")
        // nginx's page gives exact sizes: only the five folder pages were asked for.
        #expect(Self.fileRequests(nginx.accessLog.dropFirst(before)).isEmpty, "\(nginx.accessLog.dropFirst(before))")

        // A file that changed at the source is kept and reported.
        try TestData.file(files.file("photos/café.jpg"), size: 5_000, seed: 99)
        let changed = try run("get", "-r", nginx.url("/index/photos/"), "-o", "copy")
        #expect(changed.status == 1)
        #expect(changed.stderr.contains("1 differs (kept)"), "\(changed.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("copy/café.jpg"))) == data["café.jpg"])
    }

    @Test func roundedSizesAreAskedForOnlyOnARerun() throws {
        let apache = try ApacheServer(root: files.path)
        let first = try run("get", "-r", apache.url("/fancy/photos/"), "-o", "copy")
        #expect(first.status == 0, "\(first.stderr)")
        // A first run asks nothing but the pages and the files.
        #expect(!apache.accessLog.contains { $0.hasPrefix("HEAD ") }, "\(apache.accessLog)")
        let before = apache.accessLog.count
        let again = try run("get", "-r", apache.url("/fancy/photos/"), "-o", "copy")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("5 already here"), "\(again.stderr)")
        // 71,000 B and up show as 69K...: those sizes come from a HEAD each; no GET of a file.
        let asked = Self.fileRequests(apache.accessLog.dropFirst(before))
        #expect(!asked.isEmpty && asked.allSatisfy { $0.hasPrefix("HEAD ") }, "\(asked)")
    }

    @Test func syncFromAnHTTPFolder() throws {
        let nginx = try NginxServer(root: files.path)
        let out = try run("sync", nginx.url("/index/photos/"), "mirror", "--quiet")
        #expect(out.status == 0, "\(out.stderr)")
        try checkDownloaded("mirror")
        // Nothing new: the second pass downloads no file.
        let before = nginx.accessLog.filter { !$0.hasPrefix("GET /index/photos/ ") && !$0.contains("/ status=") }
        let again = try run("sync", nginx.url("/index/photos/"), "mirror", "--quiet")
        #expect(again.status == 0, "\(again.stderr)")
        let after = nginx.accessLog.filter { !$0.hasPrefix("GET /index/photos/ ") && !$0.contains("/ status=") }
        #expect(after.count == before.count, "\(after.dropFirst(before.count))")
    }
}
