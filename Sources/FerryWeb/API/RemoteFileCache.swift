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
    private var transfers: [String: Transfer] = [:]
    private var known: [String: (size: Int64, used: UInt64)] = [:]
    private var clock: UInt64 = 0

    init(folder: String, limit: Int64 = 1 << 30) {
        self.folder = folder
        self.limit = limit
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    /// A local file holding the remote file `path` of `fs`.
    ///
    /// On a shared one-connection source the download is registered with `share` at the asking
    /// request's priority (``ConnectionShare/current``): a prefetch's download yields to the page's
    /// requests. A request of higher priority that asks for a file being fetched raises the download's.
    ///
    /// - Parameters:
    ///   - fs: The backend.
    ///   - path: The backend path.
    ///   - version: Text that changes when the file does (size, time).
    ///   - share: The source's connection share.
    /// - Returns: The local path.
    /// - Throws: The download's `FerryError`.
    func localCopy(
        of path: String, in fs: any RemoteFileSystem, version: String, share: ConnectionShare? = nil
    ) async throws -> String {
        let key = StableHash.hex(fs.url.hostKey + "\n" + path + "\n" + version)
        let local = folder + "/" + key + "." + MediaType.fileExtension(path)
        let priority = ConnectionShare.current ?? .interactive
        clock += 1
        if let item = known[key] {
            known[key] = (item.size, clock)
            return local
        }
        if let task = running[key] {
            if let share, let transfer = transfers[key] { share.promote(transfer, to: priority) }
            return try await task.value
        }
        var options = DownloadOptions()
        options.overwrite = .overwrite
        options.resume = true
        // Started here, in the asking request's task: the engine reports its waits to that request.
        let transfer = fs.download(path, to: local, options: options)
        share?.add(transfer, priority: priority)
        let task = Task<String, any Error> {
            defer { share?.remove(transfer) }
            _ = try await transfer.result
            return local
        }
        running[key] = task
        transfers[key] = transfer
        defer {
            running[key] = nil
            transfers[key] = nil
        }
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
