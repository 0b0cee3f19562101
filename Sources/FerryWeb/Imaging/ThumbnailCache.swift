import Foundation
import Synchronization

/// Thumbnails kept in memory (least recently used go first) and in a folder,
/// so a second visit and a restarted server both skip the decoding.
///
/// Keys name the source and the file's version (size, modification time), so
/// a changed photo gets a new thumbnail. Thread-safe: the memory part is
/// behind a `Mutex`; disk writes go to a temporary name and are renamed.
final class ThumbnailCache: Sendable {
    private struct Memory {
        var items: [String: (data: [UInt8], used: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    private let memory = Mutex(Memory())
    private let memoryLimit: Int
    /// The folder, or nil for memory only.
    let folder: String?

    /// Creates a cache.
    ///
    /// - Parameters:
    ///   - folder: Where thumbnails are stored on disk; created when missing. `nil` = memory only.
    ///   - memoryLimit: Bytes of thumbnails kept in memory.
    init(folder: String?, memoryLimit: Int = 48 << 20) {
        self.memoryLimit = memoryLimit
        if let folder,
            (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil
        {
            self.folder = folder
        } else {
            self.folder = nil
        }
    }

    /// The thumbnail stored for `key`, from memory or from disk.
    func get(_ key: String) -> [UInt8]? {
        let hit = memory.withLock { m -> [UInt8]? in
            guard let item = m.items[key] else { return nil }
            m.clock += 1
            m.items[key] = (item.data, m.clock)
            return item.data
        }
        if let hit { return hit }
        guard let path = path(for: key), let data = FileManager.default.contents(atPath: path) else { return nil }
        let bytes = [UInt8](data)
        remember(key, bytes)
        return bytes
    }

    /// Stores a thumbnail in memory and on disk.
    func put(_ key: String, _ bytes: [UInt8]) {
        remember(key, bytes)
        guard let path = path(for: key) else { return }
        let temporary = path + ".\(getpid()).tmp"
        if FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) {
            rename(temporary, path)
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
        folder.map { $0 + "/" + StableHash.hex(key) + ".jpg" }
    }
}
