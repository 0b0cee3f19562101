import Testing

@testable import FerryKit

/// `RemotePath`: the path rules FTP, SFTP, SMB and WebDAV share, and the cards', the
/// camera's and the page's (no server root).
@Suite struct RemotePathTests {
    @Test func aRenameTargetIsAPathOrANameBesideTheFile() {
        #expect(RemotePath.renameTarget("b.jpg", from: "/DCIM/100/a.jpg") == "/DCIM/100/b.jpg")
        #expect(RemotePath.renameTarget("b.jpg", from: "/a.jpg") == "/b.jpg")
        #expect(RemotePath.renameTarget("/other/b.jpg", from: "/DCIM/a.jpg") == "/other/b.jpg")
        #expect(RemotePath.renameTarget("other/b.jpg", from: "/DCIM/a.jpg") == "/other/b.jpg")
        #expect(RemotePath.renameTarget("/new/", from: "/old") == "/new")
        #expect(RemotePath.renameTarget("New Folder", from: "/photos/Old Folder") == "/photos/New Folder")
    }

    @Test func parentsNamesAndTheServersOwnRoot() {
        #expect(RemotePath.normalize("a/b/") == "/a/b")
        #expect(RemotePath.normalize("//") == "//")
        #expect(RemotePath.parent(of: "/a") == "/")
        #expect(RemotePath.parent(of: "/a/b/c") == "/a/b")
        #expect(RemotePath.name(of: "/a/b/c.jpg") == "c.jpg")
        #expect(RemotePath.name(of: "/") == "/")
    }

    @Test func aCardsPathsHaveNoServerRoot() {
        // The rules FlashAirListing.normalize had, for the cards, the camera and the page.
        for (input, expected) in [
            ("", "/"), ("/", "/"), ("//", "/"), ("///", "/"), ("DCIM", "/DCIM"), ("/DCIM/", "/DCIM"),
            ("DCIM//", "/DCIM"), ("/DCIM/100", "/DCIM/100"), ("//x", "//x"),
        ] {
            #expect(RemotePath.normalize(input, keepingServerRoot: false) == expected, "\(input)")
        }
        #expect(RemotePath.normalize("///") == "//")
    }

    @Test func aLeadingSlashIsAByteEvenBeforeACombiningMark() {
        // "/\u{301}x".hasPrefix("/") is false in Swift: the slash must not be doubled.
        #expect(RemotePath.normalize("/\u{301}x") == "/\u{301}x")
        #expect(RemotePath.normalize("/\u{301}x", keepingServerRoot: false) == "/\u{301}x")
        #expect(RemotePath.normalize("\u{301}x").utf8.first == UInt8(ascii: "/"))
    }

    @Test func joinAndSplitAreEachOthersInverse() {
        #expect(RemotePath.join("/", "a.jpg") == "/a.jpg")
        #expect(RemotePath.join("/DCIM", "a.jpg") == "/DCIM/a.jpg")
        #expect(RemotePath.split("/A/B/c.jpg") == ("/A/B", "c.jpg"))
        #expect(RemotePath.split("/c.jpg") == ("/", "c.jpg"))
        #expect(RemotePath.split("c.jpg/") == ("/", "c.jpg"))
        #expect(RemotePath.split("/") == ("/", ""))
        for path in ["/a", "/a/b", "/DCIM/100__TSB/IMG_0001.JPG"] {
            let (folder, name) = RemotePath.split(path)
            #expect(RemotePath.join(folder, name) == path)
        }
    }

    @Test func aFileSystemsOwnURLKeepsItsQueryOtherPathsHaveNone() throws {
        let url = try RemoteURL(parsing: "http://h/get%20it.jpg?token=a%2Fb")
        #expect(url.file(at: url.path) == url)
        #expect(url.file(at: url.path).wireURL() == url.wireURL())
        let other = url.file(at: "/other.jpg")
        #expect(other.path == "/other.jpg" && other.query == nil)
        #expect(url.file(at: "other.jpg").path == "/other.jpg")
    }
}
