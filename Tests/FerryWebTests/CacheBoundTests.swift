import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

#if canImport(Glibc)
    import Glibc
#endif

/// The disk caches of `ferry serve` (issue 25, item 9): the `files-PID` folders
/// of killed processes go at the next start, and every cache stays under its bound,
/// least recently used first.
@Suite(.serialized)
struct CacheBoundTests {
    /// A PID that ran a moment ago and runs no more.
    static func deadPID() throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        return p.processIdentifier
    }

    /// Bytes of the regular files in `folder`.
    static func bytes(_ folder: String) -> Int64 {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.reduce(0) { total, name in
            let size = (try? FileManager.default.attributesOfItem(atPath: folder + "/" + name))?[.size] as? Int64
            return total + (size ?? 0)
        }
    }

    static func makeFolder(_ path: String, copyBytes: Int = 100_000) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Data(count: copyBytes).write(to: URL(fileURLWithPath: path + "/copy.jpg"))
    }

    @Test func leftoverCopiesOfDeadProcessesGoAtStartLiveOnesStay() async throws {
        let cache = try TempDir(prefix: "cache-leftovers")
        let source = try TempDir(prefix: "cache-leftovers-source")
        let dead = try Self.deadPID()
        let deadFolder = cache.file("files-\(dead)")
        try Self.makeFolder(deadFolder)
        try Data().write(to: URL(fileURLWithPath: deadFolder + "/.lock"))
        // A live process holding its folder's lock (as a running ferry serve does).
        let lockedFolder = cache.file("files-pending")
        try Self.makeFolder(lockedFolder)
        let holder = try ServerProcess(
            "/bin/sh", ["-c", "exec 9<>\"$0\" && flock 9 && exec sleep 60", lockedFolder + "/.lock"],
            logPath: source.file("flock.log"))
        defer { holder.stop() }
        // Wait for flock to hold the lock, then give the folder its PID.
        let deadline = Date().addingTimeInterval(10)
        var held = false
        while !held && Date() < deadline {
            let fd = open(lockedFolder + "/.lock", O_RDWR)
            held = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0
            if fd >= 0 { close(fd) }
            if !held { usleep(20_000) }
        }
        try #require(held, "flock did not take the lock")
        let live = cache.file("files-\(holder.process.processIdentifier)")
        try FileManager.default.moveItem(atPath: lockedFolder, toPath: live)
        // A live PID whose folder's lock nobody holds: a reused PID of a killed ferry serve.
        let sleeper = try ServerProcess("/bin/sleep", ["60"], logPath: source.file("sleep.log"))
        defer { sleeper.stop() }
        let reused = cache.file("files-\(sleeper.process.processIdentifier)")
        try Self.makeFolder(reused)
        try Data().write(to: URL(fileURLWithPath: reused + "/.lock"))
        // A live PID without a lock (a process between making its folder and locking it): kept.
        let unlocked = cache.file("files-\(getppid())")
        try Self.makeFolder(unlocked)
        // Something else in the cache folder is never touched.
        try Self.makeFolder(cache.file("thumbnails"))

        var configuration = WebConfiguration(source: try RemoteURL(parsing: source.path))
        configuration.cacheDirectory = cache.path
        let api = try WebAPI(configuration: configuration)
        let fm = FileManager.default
        #expect(!fm.fileExists(atPath: deadFolder), "the folder of a dead PID is removed")
        #expect(!fm.fileExists(atPath: reused), "the folder of a reused PID with a free lock is removed")
        #expect(fm.fileExists(atPath: live + "/copy.jpg"), "a live process's copies stay")
        #expect(fm.fileExists(atPath: unlocked + "/copy.jpg"))
        #expect(fm.fileExists(atPath: cache.file("thumbnails/copy.jpg")))
        // This process's own folder is locked, so the next start leaves it alone.
        let mine = cache.file("files-\(getpid())")
        #expect(fm.fileExists(atPath: mine + "/.lock"))
        #expect(RemoteFileCache.removeLeftovers(in: cache.path).isEmpty)
        #expect(fm.fileExists(atPath: mine))
        api.cleanUp()
        #expect(!fm.fileExists(atPath: mine))
    }

    @Test func thumbnailFolderStaysUnderItsBoundLeastRecentlyUsedGoFirst() throws {
        let folder = try TempDir(prefix: "cache-bound-thumbs")
        let limit: Int64 = 100_000
        let cache = ThumbnailCache(folder: folder.path, memoryLimit: 1 << 20, diskLimit: limit)
        let item = [UInt8](repeating: 7, count: 10_000)
        for i in 0..<10 { cache.put("k\(i)", item) }
        #expect(Self.bytes(folder.path) == 100_000)
        // k0 is used again: it is now the most recently used.
        #expect(cache.get("k0") == item)
        var peak: Int64 = 0
        for i in 10..<40 {
            cache.put("k\(i)", item)
            peak = max(peak, Self.bytes(folder.path))
        }
        #expect(peak <= limit, "filled with 400 KB past a bound of 100 KB, the folder peaked at \(peak)")
        #expect(cache.diskBytes == Self.bytes(folder.path))
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        func onDisk(_ key: String) -> Bool { names.contains(StableHash.hex(key) + ".jpg") }
        #expect(onDisk("k39") && onDisk("k38"), "the newest stay")
        #expect(!onDisk("k1") && !onDisk("k2"), "the least recently used went")
        // A restart with a smaller bound trims at once, by the files' last use (their
        // times on disk, which a file system may keep to a few milliseconds: wait).
        #expect(onDisk("k35"))
        usleep(50_000)
        #expect(cache.get("k35") == item)
        let smaller = ThumbnailCache(folder: folder.path, memoryLimit: 1 << 20, diskLimit: 30_000)
        #expect(Self.bytes(folder.path) <= 27_000)
        #expect(smaller.get("k35") == item, "the most recently used file stays")
    }

    @Test func copiesOfRemoteFilesStayUnderTheirBound() async throws {
        let source = try TempDir(prefix: "cache-bound-source")
        let folder = try TempDir(prefix: "cache-bound-files")
        for i in 0..<6 { try Data(count: 100_000).write(to: URL(fileURLWithPath: source.file("f\(i).bin"))) }
        let fs = try Ferry.fileSystem(for: try RemoteURL(parsing: source.path))
        let cache = RemoteFileCache(folder: folder.path, limit: 250_000)
        var copies: [Int: String] = [:]
        for i in [0, 1, 0, 2, 3] {
            copies[i] = try await cache.localCopy(of: source.file("f\(i).bin"), in: fs, version: "1")
            #expect(Self.bytes(folder.path) <= 250_000)
        }
        let fm = FileManager.default
        // f0 was used after f1: f1 went first, then f0 made room for f3.
        #expect(!fm.fileExists(atPath: copies[1]!) && !fm.fileExists(atPath: copies[0]!))
        #expect(fm.fileExists(atPath: copies[2]!))
        #expect(fm.fileExists(atPath: copies[3]!))
    }

    @Test func sizesAreReadAsTheOptionTakesThem() {
        #expect(WebConfiguration.byteCount("512M") == 512 << 20)
        #expect(WebConfiguration.byteCount("2g") == 2 << 30)
        #expect(WebConfiguration.byteCount("1.5KiB") == 1536)
        #expect(WebConfiguration.byteCount("1048576") == 1_048_576)
        #expect(WebConfiguration.byteCount("300MB") == 300 << 20)
        #expect(WebConfiguration.byteCount("lots") == nil && WebConfiguration.byteCount("-1M") == nil)
        #expect(WebConfiguration().resolvedImageCacheLimit == 512 << 20 || getenv("FERRY_CACHE_SIZE") != nil)
    }
}
