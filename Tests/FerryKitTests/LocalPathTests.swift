import Foundation
import Testing

@testable import FerryKit

/// `LocalPath`, the one place local path strings are taken apart (issue 29 item 1:
/// `NSString.deletingLastPathComponent` crashed for one-character paths).
struct LocalPathTests {
    @Test(arguments: [
        ("a", "."), ("-", "."), ("./a", "."), ("/a", "/"), ("a/", "."), ("", "."), ("/", "/"), ("..", "."),
        ("a//b", "a"), ("a/b/", "a"), ("//a", "/"), ("/x/y/z", "/x/y"), ("../a", ".."), ("~/a", "~"),
        ("日本/語", "日本"),
    ])
    func parent(path: String, expected: String) {
        #expect(LocalPath.parent(path) == expected, "parent of '\(path)'")
    }

    @Test(arguments: [
        ("a", "a"), ("-", "-"), ("./a", "a"), ("/a", "a"), ("a/", "a"), ("", ""), ("/", "/"), ("..", ".."),
        ("a//b", "b"), ("/x/y.jpg", "y.jpg"), ("//", "/"), ("日本/語", "語"),
    ])
    func lastComponent(path: String, expected: String) {
        #expect(LocalPath.lastComponent(path) == expected, "last component of '\(path)'")
    }

    @Test(arguments: [
        ("a", "a"), ("-", "-"), ("./a", "a"), ("/a", "/a"), ("a/", "a"), ("", ""), ("/", "/"), ("..", ".."),
        ("a//b", "a/b"), ("/x/../y", "/y"), ("/..", "/"), ("a/../../b", "../b"), ("./", "."), ("a/./b/.", "a/b"),
    ])
    func standardized(path: String, expected: String) {
        #expect(LocalPath.standardized(path) == expected, "standardized '\(path)'")
    }

    @Test(arguments: [
        ("a", "b", "a/b"), ("a/", "b", "a/b"), ("a", "/b", "a/b"), ("", "b", "b"), ("a", "", "a"), ("/", "b", "/b"),
        ("-", "a", "-/a"), ("a//", "b/c", "a/b/c"),
    ])
    func join(base: String, name: String, expected: String) {
        #expect(LocalPath.join(base, name) == expected, "'\(base)' + '\(name)'")
    }

    @Test func tildeFollowsHOME() throws {
        let home = try #require(ProcessInfo.processInfo.environment["HOME"])
        #expect(LocalPath.expandingTilde("~") == home)
        #expect(LocalPath.expandingTilde("~/Downloads/a") == LocalPath.join(home, "Downloads/a"))
        #expect(LocalPath.expandingTilde("a/~") == "a/~")
        #expect(LocalPath.expandingTilde("") == "")
        #expect(LocalPath.expandingTilde("~no-such-user-here/x") == "~no-such-user-here/x")
        #expect(LocalPath.expandingTilde("~root/x") == "/root/x" || LocalPath.expandingTilde("~root/x").hasSuffix("/x"))
        #expect(LocalPath.standardized("~/a/../b") == LocalPath.join(home, "b"))
    }

    @Test func absoluteIsAgainstTheCurrentFolder() {
        let cwd = FileManager.default.currentDirectoryPath
        #expect(LocalPath.absolute("a") == LocalPath.standardized(cwd + "/a"))
        #expect(LocalPath.absolute("/x/./y") == "/x/y")
    }

    /// The rule for a download's missing folders (issue 29 item 4).
    @Test func missingFoldersAreMadeOnlyInsideAnExistingFolderOtherThanRoot() throws {
        let base = FileManager.default.temporaryDirectory.path + "/localpath-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: base) }
        try LocalDestination.makeFolders(base + "/x/y/", operation: "download")
        var isDir: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: base + "/x/y", isDirectory: &isDir) && isDir.boolValue)

        let top = "/ferry-missing-\(UUID().uuidString)"
        #expect(throws: FerryError.self) { try LocalDestination.makeFolders(top + "/dir", operation: "download") }
        do {
            try LocalDestination.makeFolders(top + "/dir", operation: "download")
        } catch {
            #expect(error.code == .notFound)
            #expect(error.target == top, "the topmost missing folder is named")
        }
        #expect(!FileManager.default.fileExists(atPath: top))

        do {
            try LocalDestination.makeReady(top + "/dir/x.jpg", DownloadOptions())
            Issue.record("a folder under / was made")
        } catch {
            #expect(error.target == top + "/dir/x.jpg")
            #expect(error.detail?.contains("no such folder \(top);") == true, "\(error)")
        }

        // A file where a folder should be.
        try Data("x".utf8).write(to: URL(fileURLWithPath: base + "/file"))
        do {
            try LocalDestination.makeFolders(base + "/file/sub", operation: "download")
            Issue.record("a file as a folder was accepted")
        } catch {
            #expect(error.target == base + "/file")
        }
    }

    /// An empty destination is refused before anything is written.
    @Test func anEmptyDestinationIsRefused() {
        #expect(throws: FerryError.self) { try LocalDestination.makeReady("", DownloadOptions()) }
    }
}
