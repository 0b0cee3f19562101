import FerryKit
import Foundation

/// Local copies of remote files, so the page gets `Range`, `sendfile` and
/// thumbnails for every backend: the first request downloads the whole file
/// (through FerryKit's usual `.part`-and-rename path), later ones are served
/// from disk. Concurrent requests for one file share one download.
///
/// Keys include the file's version (size and time from its listing), so a
/// changed file is fetched again. The folder is trimmed to ``limit`` bytes,
/// oldest first.
actor RemoteFileCache {
    private let folder: String
    private let limit: Int64
    private var running: [String: Task<String, any Error>] = [:]
    private var known: [String: (size: Int64, used: UInt64)] = [:]
    private var clock: UInt64 = 0

    init(folder: String, limit: Int64 = 1 << 30) {
        self.folder = folder
        self.limit = limit
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    /// A local file holding the remote file `path` of `fs`.
    ///
    /// - Parameters:
    ///   - fs: The backend.
    ///   - path: The backend path.
    ///   - version: Text that changes when the file does (size, time).
    /// - Returns: The local path.
    /// - Throws: The download's `FerryError`.
    func localCopy(of path: String, in fs: any RemoteFileSystem, version: String) async throws -> String {
        let key = StableHash.hex(fs.url.hostKey + "\n" + path + "\n" + version)
        let local = folder + "/" + key + "." + MediaType.fileExtension(path)
        clock += 1
        if let item = known[key] {
            known[key] = (item.size, clock)
            return local
        }
        if let task = running[key] { return try await task.value }
        let task = Task<String, any Error> {
            var options = DownloadOptions()
            options.overwrite = .overwrite
            options.resume = true
            _ = try await fs.download(path, to: local, options: options).result
            return local
        }
        running[key] = task
        defer { running[key] = nil }
        let result = try await task.value
        let size = (try? FileManager.default.attributesOfItem(atPath: local)[.size] as? Int64) ?? 0
        known[key] = (size, clock)
        trim()
        return result
    }

    /// Deletes the least recently used copies until the total fits the limit.
    private func trim() {
        var total = known.values.reduce(0) { $0 + $1.size }
        guard total > limit else { return }
        for (key, item) in known.sorted(by: { $0.value.used < $1.value.used }) where total > limit {
            for path in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where path.hasPrefix(key) {
                unlink(folder + "/" + path)
            }
            known[key] = nil
            total -= item.size
        }
    }
}
