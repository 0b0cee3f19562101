import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// HTTP folders against real servers on loopback, each reading the same tree
/// from its own index pages: nginx autoindex (html, json, xml), Apache
/// mod_autoindex (plain, FancyIndexing, HTMLTable), lighttpd mod_dirlisting and
/// `python3 -m http.server`. The tree has names with spaces, `&`, `#`, `%`,
/// non-ASCII letters, two levels of folders, and a file big enough that Apache
/// and lighttpd round its size.
@Suite(.serialized)
struct HTTPFolderTests {
    static let files: [String: Int] = [
        "a b.txt": 3_000, "R&D.txt": 10, "#1.jpg": 20, "100%.txt": 30, "café.jpg": 40, "日本.txt": 50,
        "big.bin": 1_500_000, "My Photos/inner.txt": 60, "My Photos/deeper/x&y #2.bin": 70_000,
    ]
    /// 2024-03-05 14:07:09 UTC.
    static let mtime: TimeInterval = 1_709_647_629

    let www: TempDir
    let tree: String
    var data: [String: Data] = [:]

    init() throws {
        www = try TempDir(prefix: "www")
        tree = www.file("tree")
        for (name, size) in Self.files {
            let path = tree + "/" + name
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            data[name] = try TestData.file(path, size: size, seed: UInt64(size))
            var times = [
                timespec(tv_sec: Int(Self.mtime), tv_nsec: 0), timespec(tv_sec: Int(Self.mtime), tv_nsec: 0),
            ]
            utimensat(AT_FDCWD, path, &times, 0)
        }
        // A folder whose page is a site's own index.html, not a listing.
        try FileManager.default.createDirectory(atPath: www.file("site"), withIntermediateDirectories: true)
        try "<html><title>Home</title><body><a href=\"about.html\">About</a> <a href=\"news/\">News</a></body></html>"
            .write(toFile: www.file("site/index.html"), atomically: true, encoding: .utf8)
    }

    func fs(_ url: String) throws -> HTTPFileSystem { HTTPFileSystem(url: try RemoteURL(parsing: url)) }

    /// Lists, walks and downloads the tree at `base` (a URL ending in `/tree/`),
    /// checking every name and every byte.
    func checkTree(_ base: String, exactSizes: Bool) async throws {
        let url = try RemoteURL(parsing: base)
        let fs = try fs(base)
        let top = try await fs.list(url.path)
        #expect(
            Set(top.map(\.name)) == [
                "a b.txt", "R&D.txt", "#1.jpg", "100%.txt", "café.jpg", "日本.txt", "big.bin", "My Photos",
            ],
            "\(base)")
        #expect(top.first { $0.name == "My Photos" }?.kind == .directory)
        #expect(top.first { $0.name == "My Photos" }?.path == url.path + "My Photos")
        let big = try #require(top.first { $0.name == "big.bin" })
        #expect(big.kind == .file)
        #expect(big.size == (exactSizes ? 1_500_000 : nil), "\(base): a size only where the page shows it exactly")

        let walked = try await fs.walk(url.path)
        let relative = walked.files.map { String($0.path.dropFirst(url.path.count)) }
        #expect(Set(relative) == Set(Self.files.keys), "\(base)")
        #expect(Set(walked.folders.map(\.name)) == ["My Photos", "deeper"])

        let out = try TempDir(prefix: "dl")
        for entry in walked.files {
            let name = String(entry.path.dropFirst(url.path.count))
            let dest = out.file(name.replacingOccurrences(of: "/", with: "_"))
            _ = try await fs.download(entry, to: dest, options: .init()).result
            #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data[name], "\(base)\(name)")
        }

        // The folder URL, with and without its slash (servers redirect to it), is a folder.
        #expect(try await fs.stat(url.path).kind == .directory)
        #expect(try await fs.stat(url.path + "My Photos/").kind == .directory)
        #expect(try await fs.stat(url.path + "My Photos").kind == .directory)
        #expect(try await fs.stat(url.path + "My Photos").path == url.path + "My Photos")
        let file = try await fs.stat(url.path + "R&D.txt")
        #expect(file.kind == .file && file.size == 10)
    }

    @Test func nginxAutoindexHTMLJSONAndXML() async throws {
        let nginx = try NginxServer(root: www.path)
        try await checkTree(nginx.url("/index/tree/"), exactSizes: true)
        try await checkTree(nginx.url("/index-json/tree/"), exactSizes: true)
        try await checkTree(nginx.url("/index-xml/tree/"), exactSizes: true)
        // JSON and XML give the time to the second.
        let json = try await fs(nginx.url("/")).list("/index-json/tree/")
        let expected = RemoteTimestamp(utc: Date(timeIntervalSince1970: Self.mtime))
        #expect(json.first { $0.name == "big.bin" }?.modified == expected)
        let xml = try await fs(nginx.url("/")).list("/index-xml/tree/")
        #expect(xml.first { $0.name == "日本.txt" }?.modified == expected)
    }

    @Test func apacheAutoindexPlainFancyAndTable() async throws {
        let apache = try ApacheServer(root: www.path)
        try await checkTree(apache.url("/tree/"), exactSizes: false)
        try await checkTree(apache.url("/fancy/tree/"), exactSizes: false)
        try await checkTree(apache.url("/table/tree/"), exactSizes: false)
        // Below 1 KB Apache's fancy list shows bytes.
        let fancy = try await fs(apache.url("/")).list("/fancy/tree/")
        #expect(fancy.first { $0.name == "R&D.txt" }?.size == 10)
    }

    @Test func lighttpdDirlisting() async throws {
        let lighttpd = try LighttpdServer(root: www.path)
        try await checkTree(lighttpd.url("/tree/"), exactSizes: false)
        // Seconds, in the server's local time (no zone on the page).
        let entries = try await fs(lighttpd.url("/")).list("/tree/")
        let shown = try #require(entries.first { $0.name == "big.bin" }?.modified)
        #expect(shown.zone == .floating)
        #expect(shown.date(floatingIn: .current) == Date(timeIntervalSince1970: Self.mtime))
    }

    @Test func pythonHTTPServer() async throws {
        let python = try PythonHTTPServer(root: www.path)
        try await checkTree(python.url("/tree/"), exactSizes: false)
    }

    @Test func aPageThatIsNoIndexIsNotAFolderListing() async throws {
        let nginx = try NginxServer(root: www.path)
        let fs = try fs(nginx.url("/"))
        do {
            let e = await #expect(throws: FerryError.self) { try await fs.list("/site/") }
            #expect(e?.code == .badListing, "\(String(describing: e))")
            #expect(e?.description.contains("not a folder listing") == true)
            #expect(e?.description.contains(nginx.url("/site/")) == true)
        }
        // stat of that URL describes the page: a file, as before.
        #expect(try await fs.stat("/site/").kind == .file)
        // A folder without autoindex: nginx refuses it (403).
        do {
            let e = await #expect(throws: FerryError.self) {
                try await fs.list("/tree/")
            }
            #expect(e?.code == .permissionDenied, "\(String(describing: e))")
        }
        do {
            let e = await #expect(throws: FerryError.self) {
                try await fs.list("/index/nothing-here/")
            }
            #expect(e?.code == .notFound, "\(String(describing: e))")
        }
        // A file is not a folder.
        do {
            let e = await #expect(throws: FerryError.self) {
                try await fs.list("/index/tree/big.bin")
            }
            #expect(e?.code == .notFound, "\(String(describing: e))")
        }
    }

    @Test func aFolderBehindBasicAuthentication() async throws {
        let nginx = try NginxServer(root: www.path, basicAuth: ("ann", "s3cr#t"))
        let url = "http://ann:s3cr%23t@127.0.0.1:\(nginx.port)/private/tree/"
        let entries = try await fs(url).list("/private/tree/")
        #expect(entries.count == 8)
        let anonymous = nginx.url("/private/tree/")
        do {
            let e = await #expect(throws: FerryError.self) { try await fs(anonymous).list("/private/tree/") }
            #expect(e?.code == .authenticationFailed && e?.description.contains("s3cr") == false)
        }
        let wrong = "http://ann:nope@127.0.0.1:\(nginx.port)/private/tree/"
        do {
            let e = await #expect(throws: FerryError.self) { try await fs(wrong).list("/private/tree/") }
            #expect(e?.code == .authenticationFailed && e?.description.contains("nope") == false)
        }
    }

    @Test func syncFromAnAutoindexFolder() async throws {
        let nginx = try NginxServer(root: www.path)
        let dest = try TempDir(prefix: "sync")
        let engine = try SyncEngine(url: try RemoteURL(parsing: nginx.url("/index/tree/")), directory: dest.path)
        let summary = try await engine.runPass()
        #expect(summary.failures.isEmpty, "\(summary.failures)")
        #expect(summary.imported == Self.files.count)
        for (name, bytes) in data {
            #expect(try Data(contentsOf: URL(fileURLWithPath: dest.file(name))) == bytes, "\(name)")
        }
    }
}
