import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

@Suite struct LocalFileSystemTests {
    let dir: TempDir
    let fs: LocalFileSystem

    init() throws {
        dir = try TempDir(prefix: "local")
        fs = LocalFileSystem(url: try RemoteURL(parsing: dir.path))
    }

    @Test func listsStatsAndHidesNothingItself() async throws {
        try TestData.file(dir.file("a b#1%.bin"), size: 1234)
        try FileManager.default.createDirectory(atPath: dir.file("sub"), withIntermediateDirectories: true)
        try "x".write(toFile: dir.file(".hidden"), atomically: true, encoding: .utf8)
        let entries = try await fs.list(dir.path).sorted { $0.name < $1.name }
        #expect(entries.map(\.name) == [".hidden", "a b#1%.bin", "sub"])
        #expect(entries[0].isHidden)
        #expect(entries[1].size == 1234 && entries[1].kind == .file && entries[1].path == dir.file("a b#1%.bin"))
        #expect(entries[2].kind == .directory && entries[2].size == nil)
        let missing = await #expect(throws: FerryError.self) { try await fs.stat(dir.file("nope")) }
        #expect(missing?.code == .notFound)
    }

    @Test func copiesThroughAPartFileAndRefusesToClobber() async throws {
        let data = try TestData.file(dir.file("src.bin"), size: 3_000_000)
        // The copy carries the source's time to the nanosecond, as its result says (issue 27 item 3).
        var times = [
            timespec(tv_sec: 1_700_000_000, tv_nsec: 123_456_789),
            timespec(tv_sec: 1_700_000_000, tv_nsec: 123_456_789),
        ]
        #expect(utimensat(AT_FDCWD, dir.file("src.bin"), &times, 0) == 0)
        let r = try await fs.download(dir.file("src.bin"), to: dir.file("dst.bin"), options: .init()).result
        #expect(r.size == 3_000_000)
        let expected = Date(timeIntervalSince1970: 1_700_000_000.123456789)
        #expect(
            abs((r.sourceModified ?? .distantPast).timeIntervalSince(expected)) < 1e-5,
            "\(String(describing: r.sourceModified))")
        var st = stat()
        #expect(lstat(dir.file("dst.bin"), &st) == 0)
        #expect(st.st_mtim.tv_sec == 1_700_000_000 && abs(Int(st.st_mtim.tv_nsec) - 123_456_789) < 1_000)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("dst.bin"))) == data)
        let exists = await #expect(throws: FerryError.self) {
            _ = try await fs.download(dir.file("src.bin"), to: dir.file("dst.bin"), options: .init()).result
        }
        #expect(exists?.code == .destinationExists)
    }

    @Test func folderOperations() async throws {
        try await fs.makeDirectory(dir.file("x/y/z"), createParents: true)
        let noParent = await #expect(throws: FerryError.self) {
            try await fs.makeDirectory(dir.file("p/q"), createParents: false)
        }
        #expect(noParent?.code == .notFound)
        try TestData.file(dir.file("x/y/z/f"), size: 10)
        let full = await #expect(throws: FerryError.self) { try await fs.removeDirectory(dir.file("x/y/z")) }
        #expect(full?.code == .directoryNotEmpty)
        try await fs.rename(dir.file("x/y/z/f"), to: dir.file("x/g"))
        // A taken name is refused unless replacing is asked for.
        try TestData.file(dir.file("x/h"), size: 7)
        let taken = await #expect(throws: FerryError.self) { try await fs.rename(dir.file("x/g"), to: dir.file("x/h")) }
        #expect(taken?.code == .destinationExists && taken?.recovery == .replace)
        #expect(LocalFile.size(atPath: dir.file("x/h")) == 7)
        try await fs.rename(dir.file("x/h"), to: dir.file("x/g"), replacing: true)
        #expect(LocalFile.size(atPath: dir.file("x/g")) == 7)
        try await fs.removeDirectory(dir.file("x/y/z"))
        try await fs.delete(dir.file("x/g"))
        let (folders, files) = try await fs.walk(dir.file("x"))
        #expect(folders.map(\.name) == ["y"])
        #expect(files.isEmpty)
    }
}
