import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// The in-memory source of sync and web tests answers as a backend does:
/// listings, stat, downloads through the same `.part` and overwrite rule, and
/// changes to its tree.
@Suite struct MemoryFileSystemTests {
    @Test func listsStatsAndDownloadsWhatWasPutIn() async throws {
        let fs = try MemoryFileSystem()
        let time = Date(timeIntervalSince1970: 1_600_000_000)
        fs.add("/DCIM/100/IMG_0001.JPG", Data("one".utf8), modified: time)
        fs.add("DCIM/100/.hidden", Data("h".utf8))
        fs.addFolder("/DCIM/empty")
        #expect(try await fs.list("/").map(\.name) == ["DCIM"])
        let folder = try await fs.list("/DCIM/100/")
        #expect(folder.map(\.name) == [".hidden", "IMG_0001.JPG"])
        #expect(folder.map(\.isHidden) == [true, false])
        let entry = try await fs.stat("/DCIM/100/IMG_0001.JPG")
        #expect(entry.size == 3 && entry.kind == .file && entry.modified == RemoteTimestamp(utc: time))
        #expect(try await fs.stat("/DCIM/empty").isDirectory)
        await #expect(throws: FerryError.self) { try await fs.stat("/nothing") }

        let out = try TempDir(prefix: "memory-fs-out")
        let result = try await fs.download("/DCIM/100/IMG_0001.JPG", to: out.file("a.jpg"), options: .init()).result
        #expect(result.size == 3 && result.bytesTransferred == 3)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out.file("a.jpg"))) == Data("one".utf8))
        #expect(!FileManager.default.fileExists(atPath: out.file("a.jpg.part")))

        // A file that differs is kept, as every download keeps it.
        fs.add("/DCIM/100/IMG_0001.JPG", Data("changed".utf8))
        await #expect(throws: FerryError.self) {
            try await fs.download("/DCIM/100/IMG_0001.JPG", to: out.file("a.jpg"), options: .init()).result
        }
        var replace = DownloadOptions()
        replace.overwrite = .overwrite
        _ = try await fs.download("/DCIM/100/IMG_0001.JPG", to: out.file("a.jpg"), options: replace).result
        #expect(try Data(contentsOf: URL(fileURLWithPath: out.file("a.jpg"))) == Data("changed".utf8))
        await #expect(throws: FerryError.self) {
            try await fs.download("/DCIM/100/gone.jpg", to: out.file("gone.jpg"), options: .init()).result
        }
        #expect(fs.calls["download"] == 4)
    }

    @Test func changesTheTree() async throws {
        let fs = try MemoryFileSystem()
        fs.add("/a/b.txt", Data("b".utf8))
        try await fs.rename("/a/b.txt", to: "c.txt", replacing: false)
        #expect(fs.filePaths == ["/a/c.txt"])
        try await fs.rename("/a", to: "/z", replacing: false)
        #expect(fs.filePaths == ["/z/c.txt"])
        await #expect(throws: FerryError.self) { try await fs.removeDirectory("/z") }
        try await fs.delete("/z/c.txt")
        try await fs.removeDirectory("/z")
        try await fs.makeDirectory("/x/y", createParents: true)
        #expect(try await fs.list("/x").map(\.name) == ["y"])
        await #expect(throws: FerryError.self) { try await fs.makeDirectory("/p/q", createParents: false) }
        fs.add("/locked", Data(), readOnly: true)
        await #expect(throws: FerryError.self) { try await fs.delete("/locked") }
    }
}
