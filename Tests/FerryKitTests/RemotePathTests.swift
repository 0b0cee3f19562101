import Testing

@testable import FerryKit

/// `RemotePath`: the path rules FTP, SFTP, SMB and WebDAV share.
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
}
