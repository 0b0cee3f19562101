import Foundation
import Testing

@testable import FerryKit

/// The folder-page parser over pages saved from real servers (Resources/HTTPIndex):
/// nginx 1.22 autoindex (html, json, xml, and html with `autoindex_exact_size off`),
/// Apache 2.4 mod_autoindex (plain, FancyIndexing, HTMLTable), lighttpd 1.4.69,
/// Python 3.11 http.server. Caddy is not in Debian: caddy.html is its browse
/// template rendered by hand for the same folder. Every page lists `/photos/`
/// holding names with spaces, `&`, `#`, `%`, `:`, non-ASCII letters, a name too
/// long for nginx's html column, a folder and a 2,100,000-byte file.
struct HTTPIndexParserTests {
    static let allNames: Set<String> = [
        "My Photos", "#1.jpg", "100%.txt", "R&D.txt", "a b.txt", "big.bin", "café.jpg", "日本.txt", "a:b.txt",
        "a very long file name that nginx cuts short in its html listing.txt",
    ]
    static let page = try! RemoteURL(parsing: "http://127.0.0.1:8080/photos/")
    static let whenSaved = RemoteTimestamp(year: 2024, month: 3, day: 5, hour: 14, minute: 7, second: 9, zone: .utc)!
    /// `05-Mar-2024 14:07` / `2024-03-05 14:07` as nginx's and Apache's pages show it.
    static let toTheMinute = RemoteTimestamp(
        year: 2024, month: 3, day: 5, hour: 14, minute: 7, zone: .floating, precision: .minute)!

    static func fixture(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: "Resources/HTTPIndex/" + name, withExtension: nil))
        return Array(try Data(contentsOf: url))
    }

    static func parse(_ name: String, type: String? = "text/html") throws -> (
        format: HTTPIndexParser.Format, entries: [String: HTTPIndexEntry]
    ) {
        let parsed = try #require(HTTPIndexParser.parse(try fixture(name), contentType: type, page: page))
        var byName: [String: HTTPIndexEntry] = [:]
        for e in parsed.entries {
            #expect(byName[e.name] == nil, "\(e.name) listed twice")
            byName[e.name] = e
        }
        return (parsed.format, byName)
    }

    @Test(arguments: [
        ("nginx.html", HTTPIndexParser.Format.nginx), ("nginx-localtime.html", .nginx),
        ("apache-plain.html", .apache), ("apache-fancy.html", .apache), ("apache-table.html", .apache),
        ("lighttpd.html", .lighttpd), ("python.html", .python),
    ])
    func everyNameOfEveryServer(file: String, format: HTTPIndexParser.Format) throws {
        let (found, entries) = try Self.parse(file)
        #expect(found == format)
        // No parent link, sort link (?C=N;O=D), icon or header link is an entry.
        #expect(Set(entries.keys) == Self.allNames)
        #expect(entries["My Photos"]?.isDirectory == true)
        #expect(entries.values.filter(\.isDirectory).count == 1)
    }

    @Test func nginxHTMLHasExactSizesAndTimesToTheMinute() throws {
        for file in ["nginx.html", "nginx-localtime.html"] {
            let e = try Self.parse(file).entries
            #expect(e["a b.txt"]?.size == 3)
            #expect(e["My Photos"]?.size == nil)
            // 05-Mar-2024 14:07 is kept, with the precision it has (issue 29 item 3).
            for name in Self.allNames {
                #expect(e[name]?.modified == Self.toTheMinute, "\(file): \(name)")
                #expect(e[name]?.modified?.precision == .minute, "\(file): \(name)")
                #expect(e[name]?.modified?.zone == .floating, "\(file): \(name)")
            }
        }
        #expect(try Self.parse("nginx.html").entries["big.bin"]?.size == 2_100_000)
    }

    @Test func apacheFancyAndTableTimesAreToTheMinute() throws {
        for file in ["apache-fancy.html", "apache-table.html"] {
            let e = try Self.parse(file).entries
            for name in Self.allNames {
                #expect(e[name]?.modified == Self.toTheMinute, "\(file): \(name)")
                #expect(e[name]?.modified?.precision == .minute, "\(file): \(name)")
            }
        }
    }

    @Test func roundedSizesAreUnknown() throws {
        // nginx `autoindex_exact_size off` prints 2M; below 1 KB it prints bytes.
        let n = try Self.parse("nginx-localtime.html").entries
        #expect(n["big.bin"]?.size == nil)
        #expect(n["a b.txt"]?.size == 3)
        for file in ["apache-fancy.html", "apache-table.html"] {
            let a = try Self.parse(file).entries
            #expect(a["big.bin"]?.size == nil, "2.0M is rounded")
            #expect(a["a b.txt"]?.size == 3, "Apache prints bytes below 1 KB")
            #expect(a["R&D.txt"]?.size == 2)
        }
        let plain = try Self.parse("apache-plain.html").entries
        #expect(plain.values.allSatisfy { $0.size == nil && $0.modified == nil })
        let py = try Self.parse("python.html").entries
        #expect(py.values.allSatisfy { $0.size == nil && $0.modified == nil })
    }

    @Test func lighttpdHasSecondsInServerTimeAndRoundedSizes() throws {
        let e = try Self.parse("lighttpd.html").entries
        #expect(e.values.allSatisfy { $0.size == nil }, "0.1K and 2.0M are rounded")
        var floating = Self.whenSaved
        floating.zone = .floating
        #expect(e["big.bin"]?.modified == floating)
        #expect(e["My Photos"]?.modified == floating)
        #expect(e.values.allSatisfy { $0.modified?.precision == .second })
    }

    @Test func nginxJSONAndXMLAreExact() throws {
        for (file, format) in [("nginx.json", HTTPIndexParser.Format.nginxJSON), ("nginx.xml", .nginxXML)] {
            let (found, e) = try Self.parse(file, type: file.hasSuffix("json") ? "application/json" : "text/xml")
            #expect(found == format)
            #expect(Set(e.keys) == Self.allNames)
            #expect(e["My Photos"]?.isDirectory == true)
            #expect(e["big.bin"]?.size == 2_100_000)
            #expect(e["R&D.txt"]?.size == 2)
            #expect(e["日本.txt"]?.modified == Self.whenSaved)
            #expect(e["My Photos"]?.size == nil)
        }
    }

    @Test func caddyBrowsePage() throws {
        let (found, e) = try Self.parse("caddy.html")
        #expect(found == .caddy)
        // Breadcrumbs, layout (javascript:), sort (?sort=) and the footer's link are left out.
        #expect(Set(e.keys) == ["My Photos", "#1.jpg", "100%.txt", "R&D.txt", "a b.txt", "big.bin", "café.jpg"])
        #expect(e["My Photos"]?.isDirectory == true)
        #expect(e["My Photos"]?.modified == Self.whenSaved)
        #expect(e["big.bin"]?.size == 2_100_000)
        #expect(e["big.bin"]?.modified == Self.whenSaved)
    }

    @Test func caddyJSON() throws {
        let json = """
            [{"name":"sub/","size":4096,"url":"./sub/","mod_time":"2024-03-05T14:07:09Z","mode":2147484141,"is_dir":true,"is_symlink":false},
             {"name":"a&b #1.txt","size":12,"url":"./a&b%20%231.txt","mod_time":"2024-03-05T14:07:09.5+01:00","mode":420,"is_dir":false,"is_symlink":false}]
            """
        let parsed = try #require(
            HTTPIndexParser.parse(Array(json.utf8), contentType: "application/json", page: Self.page))
        #expect(parsed.format == .caddyJSON)
        #expect(parsed.entries.map(\.name) == ["sub", "a&b #1.txt"])
        #expect(parsed.entries[0].isDirectory && parsed.entries[0].size == nil)
        #expect(parsed.entries[1].size == 12)
        #expect(
            parsed.entries[1].modified
                == RemoteTimestamp(year: 2024, month: 3, day: 5, hour: 13, minute: 7, second: 9, zone: .utc))
    }

    @Test func linksThatLeaveTheFolderAreNotEntries() throws {
        let html = """
            <html><head><title>Index of /photos/</title></head><body><h1>Index of /photos/</h1><pre>
            <a href="../">../</a>
            <a href="/">root</a>
            <a href="/photos/">this folder</a>
            <a href="/other/x.txt">elsewhere</a>
            <a href="http://other.invalid/photos/y.txt">other host</a>
            <a href="http://127.0.0.1:9999/photos/z.txt">other port</a>
            <a href="http://127.0.0.1:8080/photos/same%20host.txt">same host</a>
            <a HREF='/photos/inside%26.txt'>absolute path</a>
            <a href="//127.0.0.1:8080/photos/scheme-relative.txt">scheme-relative</a>
            <a href="sub/deeper.txt">deeper</a>
            <a href="?C=S;O=A">Size</a>
            <a href="dot.txt?download=1">query</a>
            <a href="#top">top</a>
            <a href="mailto:someone@other.invalid">mail</a>
            <a href="javascript:void(0)">js</a>
            <a href="./dot.txt">dot</a>
            <a href="frag.txt#part">fragment</a>
            <a href="bad%zzescape.txt">bad escape</a>
            <a href="slash%2Fin%2Fname.txt">escaped slash</a>
            <a href="%2E%2E/">escaped parent</a>
            <a name="anchor">no href</a>
            <abbr href="x.txt">not a link</abbr>
            </pre></body></html>
            """
        let parsed = try #require(HTTPIndexParser.parse(Array(html.utf8), contentType: "text/html", page: Self.page))
        #expect(
            parsed.entries.map(\.name) == [
                "same host.txt", "inside&.txt", "scheme-relative.txt", "dot.txt", "frag.txt",
            ])
    }

    @Test func theRootFolder() throws {
        let html = """
            <title>Index of /</title><a href="../">../</a><a href="/a.txt">a</a><a href="b/">b/</a>
            """
        let root = try RemoteURL(parsing: "http://127.0.0.1:8080/")
        let parsed = try #require(HTTPIndexParser.parse(Array(html.utf8), contentType: nil, page: root))
        #expect(parsed.entries.map(\.name) == ["a.txt", "b"])
        #expect(parsed.entries.map(\.isDirectory) == [false, true])
    }

    @Test(arguments: [
        "<html><head><title>Welcome to nginx!</title></head><body><a href=\"a.txt\">a</a><a href=\"b/\">b</a></body></html>",
        "<!DOCTYPE html><title>Photos</title><ul><li><a href=\"IMG_1.JPG\">one</a></li></ul>",
        "just some text with no tags",
        "{\"name\": \"an object, not a list\"}",
        "[1, 2, 3]",
        "<?xml version=\"1.0\"?><rss><item>x</item></rss>",
        "",
    ])
    func pagesThatAreNoIndex(page: String) {
        #expect(HTTPIndexParser.parse(Array(page.utf8), contentType: nil, page: Self.page) == nil)
    }

    @Test func apacheXHTMLStartsLikeXML() throws {
        // IndexOptions XHTML: an XML declaration, then the same page as XHTML.
        let page = """
            <?xml version="1.0" encoding="ISO-8859-1"?>
            <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
            <html xmlns="http://www.w3.org/1999/xhtml">
             <head>
              <title>Index of /photos</title>
             </head>
             <body>
            <h1>Index of /photos</h1>
            <ul><li><a href="/"> Parent Directory</a></li>
            <li><a href="a%20b.txt"> a b.txt</a></li>
            <li><a href="sub/"> sub/</a></li>
            </ul>
            </body></html>
            """
        let parsed = try #require(HTTPIndexParser.parse(Array(page.utf8), contentType: "text/html", page: Self.page))
        #expect(parsed.format == .apache)
        #expect(parsed.entries.map(\.name) == ["a b.txt", "sub"])
    }

    @Test func anEmptyFolderIsAnIndex() throws {
        let html =
            "<html><head><title>Index of /empty/</title></head><body><pre><a href=\"../\">../</a>\n</pre></body></html>"
        let parsed = try #require(HTTPIndexParser.parse(Array(html.utf8), contentType: "text/html", page: Self.page))
        #expect(parsed.entries.isEmpty)
    }

    @Test func entitiesAndDates() {
        #expect(
            HTTPIndexParser.decodeEntities("R&amp;D &#x26; &#38; &lt;x&gt; &bogus; a&b") == "R&D & & <x> &bogus; a&b")
        #expect(HTTPIndexParser.dayMonthYear("05-Mar-2024").map { [$0.year, $0.month, $0.day] } == [2024, 3, 5])
        #expect(HTTPIndexParser.dayMonthYear("2024-Mar-05").map { [$0.year, $0.month, $0.day] } == [2024, 3, 5])
        #expect(HTTPIndexParser.dayMonthYear("2024-03-05").map { [$0.year, $0.month, $0.day] } == [2024, 3, 5])
        #expect(HTTPIndexParser.dayMonthYear("2.0M") == nil)
        #expect(HTTPIndexParser.details(" 2024-02-30 10:00:00  5").modified == nil, "no such day")
        #expect(HTTPIndexParser.details("  05-Mar-2024 14:07   12345").size == 12345)
        #expect(HTTPIndexParser.details("  05-Mar-2024 14:07   1.2K").size == nil)
        #expect(HTTPIndexParser.details("12345").size == nil, "a number with no date is no size")
    }
}
