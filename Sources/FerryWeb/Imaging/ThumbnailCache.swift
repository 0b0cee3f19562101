import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Thumbnails kept in memory (least recently used go first) and in a folder,
/// so a second visit and a restarted server both skip the decoding.
///
/// Keys name the source and the file's version (size, modification time), so
/// a changed photo gets a new thumbnail. Thread-safe: the memory part is
/// behind a `Mutex`; disk writes go to a temporary name and are renamed.
///
/// The folder is bounded by ``diskLimit``: when a write takes it past the bound,
/// the least recently used files go until it holds 90% of it. A file's time is
/// its last use (set on every hit), so the order survives a restart; the folder
/// is measured at start and again at each trim (another `ferry serve` may share it).
final class ThumbnailCache: Sendable {
    private struct Memory {
        var items: [String: (data: [UInt8], used: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    private struct Disk {
        /// File name → (bytes, last use in seconds since 1970).
        var files: [String: (size: Int64, used: Double)] = [:]
        var bytes: Int64 = 0
        var lastUse: Double = 0
    }

    private let memory = Mutex(Memory())
    private let disk = Mutex(Disk())
    private let memoryLimit: Int
    /// The most bytes the folder holds.
    let diskLimit: Int64
    /// The folder, or nil for memory only.
    let folder: String?

    /// Creates a cache.
    ///
    /// - Parameters:
    ///   - folder: Where thumbnails are stored on disk; created when missing. `nil` = memory only.
    ///   - memoryLimit: Bytes of thumbnails kept in memory.
    ///   - diskLimit: Bytes the folder may hold.
    init(folder: String?, memoryLimit: Int = 48 << 20, diskLimit: Int64 = 256 << 20) {
        self.memoryLimit = memoryLimit
        self.diskLimit = max(0, diskLimit)
        if let folder,
            (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil
        {
            self.folder = folder
            disk.withLock { d in
                Self.measure(folder, into: &d)
                if d.bytes > self.diskLimit { trim(&d) }
            }
        } else {
            self.folder = nil
        }
    }

    /// Bytes of the cache's files on disk, as last measured or written.
    var diskBytes: Int64 { disk.withLock { $0.bytes } }

    /// The thumbnail stored for `key`, from memory or from disk.
    func get(_ key: String) -> [UInt8]? {
        let hit = memory.withLock { m -> [UInt8]? in
            guard let item = m.items[key] else { return nil }
            m.clock += 1
            m.items[key] = (item.data, m.clock)
            return item.data
        }
        if let hit {
            touch(key)
            return hit
        }
        guard let path = path(for: key), let data = FileManager.default.contents(atPath: path) else { return nil }
        let bytes = [UInt8](data)
        remember(key, bytes)
        touch(key)
        return bytes
    }

    /// Stores a thumbnail in memory and on disk.
    func put(_ key: String, _ bytes: [UInt8]) {
        remember(key, bytes)
        guard let path = path(for: key) else { return }
        let temporary = path + ".\(getpid()).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) else { return }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            return
        }
        disk.withLock { d in
            let name = Self.fileName(key)
            d.bytes += Int64(bytes.count) - (d.files[name]?.size ?? 0)
            d.files[name] = (Int64(bytes.count), Self.nextUse(&d))
            if d.bytes > diskLimit { trim(&d) }
        }
    }

    /// Marks the file of `key` as used now, in the index and in its time on disk.
    private func touch(_ key: String) {
        guard let path = path(for: key) else { return }
        let name = Self.fileName(key)
        let known = disk.withLock { d -> Bool in
            guard let item = d.files[name] else { return false }
            d.files[name] = (item.size, Self.nextUse(&d))
            return true
        }
        if known { utimensat(AT_FDCWD, path, nil, 0) }
    }

    /// Now, or just after the last use (so uses in one microsecond keep their order).
    private static func nextUse(_ d: inout Disk) -> Double {
        d.lastUse = max(Date().timeIntervalSince1970, d.lastUse + 0.000_001)
        return d.lastUse
    }

    /// Reads the folder: every cache file's size and time; removes temporary
    /// files of processes that run no more.
    private static func measure(_ folder: String, into d: inout Disk) {
        var files: [String: (size: Int64, used: Double)] = [:]
        var bytes: Int64 = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            let path = folder + "/" + name
            if name.hasSuffix(".tmp") {
                // NAME.jpg.PID.tmp: a write cut short by a kill.
                let parts = name.split(separator: ".")
                if parts.count >= 3, let pid = Int32(parts[parts.count - 2]), pid != getpid(),
                    access("/proc/\(pid)", F_OK) != 0
                {
                    unlink(path)
                }
                continue
            }
            var st = stat()
            guard name.hasSuffix(".jpg"), lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            // A use this run keeps its own (finer) order.
            let used = d.files[name]?.used ?? (Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9)
            files[name] = (Int64(st.st_size), used)
            bytes += Int64(st.st_size)
        }
        d.files = files
        d.bytes = bytes
    }

    /// Measures the folder again, then deletes the least recently used files
    /// until it holds at most 90% of ``diskLimit``.
    private func trim(_ d: inout Disk) {
        guard let folder else { return }
        Self.measure(folder, into: &d)
        guard d.bytes > diskLimit else { return }
        let target = diskLimit / 10 * 9
        for (name, item) in d.files.sorted(by: { $0.value.used < $1.value.used }) where d.bytes > target {
            unlink(folder + "/" + name)
            d.files[name] = nil
            d.bytes -= item.size
        }
    }

    private func remember(_ key: String, _ bytes: [UInt8]) {
        memory.withLock { m in
            m.clock += 1
            if let old = m.items[key] { m.bytes -= old.data.count }
            m.items[key] = (bytes, m.clock)
            m.bytes += bytes.count
            while m.bytes > memoryLimit, m.items.count > 1 {
                // Evict the least recently used quarter at once, so eviction stays rare.
                let sorted = m.items.sorted { $0.value.used < $1.value.used }
                for (k, v) in sorted.prefix(max(1, sorted.count / 4)) {
                    m.items[k] = nil
                    m.bytes -= v.data.count
                }
            }
        }
    }

    private func path(for key: String) -> String? {
        folder.map { $0 + "/" + Self.fileName(key) }
    }

    private static func fileName(_ key: String) -> String { StableHash.hex(key) + ".jpg" }
}
