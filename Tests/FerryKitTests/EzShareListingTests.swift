import Foundation
import Testing

@testable import FerryKit

/// The ez Share folder page read as the card writes it (LZ1801EDPG firmware):
/// GB2312 bytes, 8.3 aliases in the links beside long names in the text,
/// unpadded dates and times, `&lt;DIR&gt;`, `.` and `..`, empty folders,
/// `Total` lines, links naming the card's own 192.168.4.1.
struct EzShareListingTests {
    /// A page with the card's head and `lines` (bytes) in its `<pre>`.
    static func page(_ lines: [[UInt8]]) -> [UInt8] {
        let head = Array(
            """
            <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
            <html xmlns="http://www.w3.org/1999/xhtml">
            <head>
            <meta http-equiv="Content-Type" content="text/html; charset=gb2312">
            <title>Index of A:\\DCIM\\100CANON</title>
            </head>
            <body>
            <h1><a href="photo">back to photo</a></h1>
            <h1>Directory Index of A:\\DCIM\\100CANON</h1>
            <pre>\r\n
            """.utf8)
        return head + lines.flatMap { $0 + Array("\r\n".utf8) } + Array("</pre>\r\n</body>\r\n</html>\r\n".utf8)
    }

    static func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// 旅行照片 and 长城 in GB2312.
    static let travel: [UInt8] = [0xC2, 0xC3, 0xD0, 0xD0, 0xD5, 0xD5, 0xC6, 0xAC]
    static let greatWall: [UInt8] = [0xB3, 0xA4, 0xB3, 0xC7]

    static let cardPage = page([
        ascii(#"   2024- 1- 4    5: 8:56         &lt;DIR&gt;   <a href="dir?dir=A:%5CDCIM%5C100CANON"> .</a>"#),
        ascii(#"   2024- 1- 4    5: 8:56         &lt;DIR&gt;   <a href="dir?dir=A:%5CDCIM"> ..</a>"#),
        ascii(
            #"   2024- 1- 4   10:55:58        5123KB  <a href="http://192.168.4.1/download?file=DCIM%5C100CANON%5CIMG_0001.JPG"> IMG_0001.JPG</a>"#
        ),
        ascii(
            #"   2024-12-31   23:59:58           1KB  <a href="http://192.168.4.1/download?file=DCIM%5C100CANON%5CHOLIDA~1.JPG"> holiday at the beach.jpg</a>"#
        ),
        ascii(#"   2023-10- 9    0: 0: 0         &lt;DIR&gt;   <a href="dir?dir=A:%5CDCIM%5C100CANON%5CC2C3~1"> "#)
            + travel + ascii("</a>"),
        ascii(
            #"   2024- 2-29   12:10: 2           0KB  <a href="http://192.168.4.1/download?file=DCIM%5C100CANON%5CB3A4~1.JPG"> "#
        ) + greatWall + ascii(".jpg</a>"),
        ascii(
            #"   2024- 3- 1    9: 5: 4          22KB  <a href="http://192.168.4.1/download?file=DCIM%5C100CANON%5CR&amp;D~1.TXT"> R&amp;D &lt;notes&gt;.txt</a>"#
        ),
        [],
        ascii("Total Entries: 7"),
        ascii("Total Size: 5168KB"),
    ])

    @Test func readsEveryLineAsTheCardWritesIt() throws {
        let page = EzShareListing.parse(Self.cardPage)
        #expect(page.hasListing)
        #expect(page.skippedLines == 0)
        #expect(page.totalEntries == 7)
        #expect(
            page.entries.map(\.name) == [
                ".", "..", "IMG_0001.JPG", "holiday at the beach.jpg", "旅行照片", "长城.jpg", "R&D <notes>.txt",
            ])
        let photo = page.entries[2]
        #expect(!photo.isDirectory)
        #expect(photo.kilobytes == 5123)
        #expect(
            photo.modified
                == RemoteTimestamp(year: 2024, month: 1, day: 4, hour: 10, minute: 55, second: 58, zone: .floating))
        // The link's parameter only: never its host.
        #expect(photo.link == Self.ascii(#"DCIM\100CANON\IMG_0001.JPG"#))
        // The alias in the link, the long name in the text.
        #expect(page.entries[3].link == Self.ascii(#"DCIM\100CANON\HOLIDA~1.JPG"#))
        #expect(
            page.entries[3].modified
                == RemoteTimestamp(year: 2024, month: 12, day: 31, hour: 23, minute: 59, second: 58, zone: .floating))
        let folder = page.entries[4]
        #expect(folder.isDirectory && folder.kilobytes == nil)
        #expect(folder.link == Self.ascii(#"A:\DCIM\100CANON\C2C3~1"#))
        #expect(
            folder.modified
                == RemoteTimestamp(year: 2023, month: 10, day: 9, hour: 0, minute: 0, second: 0, zone: .floating))
        // Unpadded hour, minute and second: `12:10: 2`, `9: 5: 4`.
        #expect(page.entries[5].kilobytes == 0)
        #expect(page.entries[5].modified?.second == 2)
        #expect(
            page.entries[6].modified
                == RemoteTimestamp(year: 2024, month: 3, day: 1, hour: 9, minute: 5, second: 4, zone: .floating))
        #expect(page.entries[6].link == Self.ascii(#"DCIM\100CANON\R&D~1.TXT"#))
        #expect(page.entries[0].isDotEntry && page.entries[1].isDotEntry && !folder.isDotEntry)
        #expect(page.entries[1].link == Self.ascii(#"A:\DCIM"#))
    }

    @Test func anEmptyFolderHasOnlyDotsAndTotals() {
        let page = EzShareListing.parse(
            Self.page([
                Self.ascii(
                    #"   2026- 1- 5   12: 0: 0         &lt;DIR&gt;   <a href="dir?dir=A:%5CDATALOG%5C20260105"> .</a>"#),
                Self.ascii(#"   2026- 1- 5   12: 0: 0         &lt;DIR&gt;   <a href="dir?dir=A:%5CDATALOG"> ..</a>"#),
                [],
                Self.ascii("Total Entries: 2"),
                Self.ascii("Total Size: 0KB"),
            ]))
        #expect(page.hasListing && page.skippedLines == 0 && page.totalEntries == 2)
        #expect(page.entries.allSatisfy { $0.isDotEntry })
        #expect(page.entries.count == 2)
    }

    @Test func theRootHasNoDotsAndAnImpossibleTimeIsNone() {
        let page = EzShareListing.parse(
            Self.page([
                Self.ascii(
                    #"   2026- 1- 4   10:55:58          64KB  <a href="http://192.168.4.1/download?file=JOURNAL.DAT"> Journal.dat</a>"#
                ),
                Self.ascii(#"   2026-13- 4   10:56:12         &lt;DIR&gt;   <a href="dir?dir=A:%5CDCIM"> DCIM</a>"#),
                [],
                Self.ascii("Total Entries: 2"),
                Self.ascii("Total Size: 64KB"),
            ]))
        #expect(page.entries.map(\.name) == ["Journal.dat", "DCIM"])
        #expect(page.entries[0].link == Self.ascii("JOURNAL.DAT"))
        #expect(page.entries[1].modified == nil)
    }

    /// A short name in GB2312 bytes, escaped or raw in the link, comes back
    /// byte for byte and goes out escaped.
    @Test func aliasBytesThatAreNotASCIIAreKept() {
        let line =
            Self.ascii(
                #"   2024- 1- 4   10:55:58           3KB  <a href="http://192.168.4.1/download?file=DCIM%5C%C2%C3%D0%D0~1.JPG"> "#
            )
            + Self.travel + Self.ascii(".jpg</a>")
        let raw =
            Self.ascii(#"   2024- 1- 4   10:55:58           3KB  <a href="http://192.168.4.1/download?file=DCIM\"#) + [
                0xC2, 0xC3,
            ]
            + Self.ascii(#"~1.JPG"> x.jpg</a>"#)
        let page = EzShareListing.parse(Self.page([line, raw]))
        #expect(page.entries.count == 2)
        #expect(page.entries[0].name == "旅行照片.jpg")
        #expect(page.entries[0].link == Self.ascii("DCIM\\") + [0xC2, 0xC3, 0xD0, 0xD0] + Self.ascii("~1.JPG"))
        #expect(page.entries[1].link == Self.ascii("DCIM\\") + [0xC2, 0xC3] + Self.ascii("~1.JPG"))
        #expect(EzShareListing.encodeParameter(page.entries[0].link) == "DCIM%5C%C2%C3%D0%D0~1.JPG")
        #expect(EzShareListing.encodeParameter(Self.ascii(#"A:\DCIM"#)) == "A:%5CDCIM")
    }

    @Test func aPageThatIsNoListingHasNone() {
        let login = EzShareListing.parse(Self.ascii("<html><body><form>password</form></body></html>"))
        #expect(!login.hasListing && login.entries.isEmpty)
        let junk = EzShareListing.parse(Self.page([Self.ascii("this is ezshare!"), Self.ascii("2024-1 <a>")]))
        #expect(junk.hasListing && junk.entries.isEmpty && junk.skippedLines == 2 && junk.totalEntries == nil)
    }

    @Test func whatTheEmulatorWritesReadsBack() throws {
        let lines = [
            EzShareListing.Line(
                name: "旅行照片", isDirectory: true, size: 0,
                dateTime: FATDateTime(date: 44 << 9 | 1 << 5 | 4, time: 5 << 11 | 8 << 5 | 28),
                href: "dir?dir=A:%5CDCIM%5CADC0~1"),
            EzShareListing.Line(
                name: "a&b.jpg", isDirectory: false, size: 1025,
                dateTime: FATDateTime(date: 44 << 9 | 12 << 5 | 31, time: 23 << 11 | 59 << 5 | 29),
                href: "http://127.0.0.1:1/download?file=DCIM%5CA_B~1.JPG"),
        ]
        let bytes = EzShareListing.render(folder: #"A:\DCIM"#, lines: lines)
        // GB2312 on the wire, the card's column layout.
        #expect(EzShareListing.find(Self.travel, in: bytes[...]) != nil)
        let text = GB18030.decode(bytes)
        #expect(
            text.contains(
                "   2024- 1- 4    5: 8:56         &lt;DIR&gt;   <a href=\"dir?dir=A:%5CDCIM%5CADC0~1\"> 旅行照片</a>\n"))
        #expect(text.contains("   2024-12-31   23:59:58           2KB  <a href="))
        #expect(text.contains("Total Entries: 2\nTotal Size: 2KB\n"))
        let page = EzShareListing.parse(bytes)
        #expect(page.entries.map(\.name) == ["旅行照片", "a&b.jpg"])
        #expect(page.entries[1].kilobytes == 2)
        #expect(page.entries[1].link == Self.ascii(#"DCIM\A_B~1.JPG"#))
        #expect(page.entries[0].modified?.second == 56)
    }

    @Test func kilobytesRoundUp() {
        #expect(EzShareListing.kilobytes(0) == 0)
        #expect(EzShareListing.kilobytes(1) == 1)
        #expect(EzShareListing.kilobytes(1024) == 1)
        #expect(EzShareListing.kilobytes(21_586) == 22)
    }

    @Test func gb18030DecodesAndEncodes() {
        #expect(GB18030.decode(Self.greatWall) == "长城")
        #expect(GB18030.encode("长城") == Self.greatWall)
        #expect(GB18030.decode(Self.ascii("IMG_0001.JPG")) == "IMG_0001.JPG")
        // A lone lead byte in the middle is one replacement, the rest goes on.
        #expect(GB18030.decode([0x41, 0xB3, 0x20, 0x42]) == "A\u{FFFD} B")
        #expect(GB18030.decode([0x41, 0xB3]) == "A\u{FFFD}")
    }

    @Test func ezshareURLs() throws {
        let u = try RemoteURL(parsing: "ezshare://192.168.4.1/DCIM/100CANON")
        #expect(u.scheme == .ezshare && u.host == "192.168.4.1" && u.port == nil && u.path == "/DCIM/100CANON")
        #expect(u.defaultPort == 80)
        #expect(u.hostKey == "ezshare://192.168.4.1:80")
        let short = try RemoteURL(parsing: "ezshare:///DCIM")
        #expect(short.host == RemoteURL.defaultEzShareHost && short.host == "ezshare.card" && short.path == "/DCIM")
        #expect(try RemoteURL(parsing: "ezshare:DCIM").redacted == "ezshare://ezshare.card/DCIM")
        let port = try RemoteURL(parsing: "ezshare://127.0.0.1:8080/")
        #expect(port.port == 8080)
        let fs = try Ferry.fileSystem(for: port)
        #expect(fs is EzShareFileSystem)
        #expect(fs.capabilities.contains(.oneConnection) && fs.capabilities.contains(.cardInfo))
    }

    @Test func theVersionIsReadFromTheCardsXML() {
        let xml = """
            <?xml version="1.0" encoding="gb2312"?>
            <response>
            <device>
            <version>LZ1801EDPG:1.0.0:2016-03-19:72 LZ1801EDRS:1.0.0:2016-03-19:72 SPEED:-H:SPEED</version>
            </device>
            </response>
            """
        #expect(
            EzShareFileSystem.version(in: xml)
                == "LZ1801EDPG:1.0.0:2016-03-19:72 LZ1801EDRS:1.0.0:2016-03-19:72 SPEED:-H:SPEED")
        #expect(EzShareFileSystem.version(in: "<response>\nthis is ezshare!</response>") == nil)
    }

    /// Writing is refused with words, and nothing is sent: the port has no server.
    @Test func writingIsRefusedAsReadOnly() async throws {
        let fs = EzShareFileSystem(url: try RemoteURL(parsing: "ezshare://127.0.0.1:9/"))
        func refused(_ error: FerryError?) {
            #expect(error?.code == .unsupportedOperation)
            #expect(error?.detail?.contains("read-only") == true, "\(String(describing: error))")
        }
        do {
            try await fs.delete("/DCIM/a.jpg")
            Issue.record("delete succeeded")
        } catch { refused(error) }
        do {
            try await fs.makeDirectory("/DCIM/x", createParents: false)
            Issue.record("mkdir succeeded")
        } catch { refused(error) }
        do {
            try await fs.removeDirectory("/DCIM")
            Issue.record("rmdir succeeded")
        } catch { refused(error) }
        do {
            try await fs.rename("/a", to: "/b", replacing: false)
            Issue.record("rename succeeded")
        } catch { refused(error) }
        let upload = fs.upload("/etc/hostname", to: "/DCIM/x", options: .init())
        await #expect(throws: FerryError.self) { try await upload.result }
    }
}
