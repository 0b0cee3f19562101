import FerryKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Local copies of remote files, so the page gets `Range`, `sendfile` and
/// thumbnails for every backend: the first request downloads the whole file
/// (through FerryKit's usual `.part`-and-rename path), later ones are served
/// from disk. Concurrent requests for one file share one download.
///
/// Keys include the file's version (size and time from its listing), so a
/// changed file is fetched again. The folder is trimmed to ``limit`` bytes,
/// least recently used first.
///
/// Each process has its own folder, `files-PID`, holding a `.lock` that the
/// process keeps locked (`flock`) while it runs. A folder left by a killed
/// process is removed by the next ``removeLeftovers(in:)``: its PID runs no more,
/// or runs (a reused PID) without holding the folder's lock.
actor RemoteFileCache {
    private let folder: String
    private let limit: Int64
    private var running: [String: (task: Task<String, any Error>, transfer: Transfer)] = [:]
    private var known: [String: (size: Int64, used: UInt64)] = [:]
    private var clock: UInt64 = 0

    /// The default bound: 1 GiB of copies.
    static let defaultLimit: Int64 = 1 << 30

    init(folder: String, limit: Int64 = RemoteFileCache.defaultLimit) {
        self.folder = folder
        self.limit = limit
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    /// The folder's name for the process `pid`.
    static func folderName(pid: Int32) -> String { "files-\(pid)" }

    /// Marks `folder` as the running process's: a `.lock` inside it, locked
    /// before it gets its name (so no other process ever sees it unlocked).
    ///
    /// - Returns: The lock's descriptor, to keep open while the process runs; nil when it could not be made.
    static func holdLock(on folder: String) -> Int32? {
        let staging = folder + "/.lock.\(getpid()).new"
        let fd = open(staging, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0, rename(staging, folder + "/.lock") == 0 else {
            close(fd)
            unlink(staging)
            return nil
        }
        return fd
    }

    /// Removes the `files-PID` folders of processes that run no more in `cache`.
    ///
    /// A folder is left alone when its PID runs and either holds its lock or it has
    /// none (a process that has not locked it yet, or one of an older Ferry).
    ///
    /// - Returns: The names of the folders removed.
    @discardableResult
    static func removeLeftovers(in cache: String) -> [String] {
        var removed: [String] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? [] {
            guard name.hasPrefix("files-"), let pid = Int32(name.dropFirst("files-".count)), pid > 0,
                pid != getpid()
            else { continue }
            let folder = cache + "/" + name
            if isLeftover(folder, pid: pid) {
                try? FileManager.default.removeItem(atPath: folder)
                removed.append(name)
            }
        }
        return removed
    }

    private static func isLeftover(_ folder: String, pid: Int32) -> Bool {
        let running = access("/proc/\(pid)", F_OK) == 0
        let fd = open(folder + "/.lock", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return !running }
        defer { close(fd) }
        // A lock nobody holds: its process is gone, whatever now runs under its PID.
        return flock(fd, LOCK_EX | LOCK_NB) == 0
    }

    /// A local file holding the remote file `path` of `fs`.
    ///
    /// The download runs at the asking request's priority (``TransferPriority/current``): on a
    /// one-connection source the engine stops a prefetch's download for the page's requests, and
    /// it resumes with `Range` after them. A request that asks for a file being fetched waits for
    /// that download, raised to its own priority when that is higher
    /// (``Transfer/raisePriority(to:)``): the photo opened while its prefetch runs
    /// is no longer stopped for the grid's thumbnails, nor queued behind them.
    ///
    /// - Parameters:
    ///   - fs: The backend.
    ///   - path: The backend path.
    ///   - version: Text that changes when the file does (size, time).
    /// - Returns: The local path.
    /// - Throws: The download's `FerryError`.
    func localCopy(
        of path: String, in fs: any RemoteFileSystem, version: String
    ) async throws -> String {
        let key = StableHash.hex(fs.url.hostKey + "\n" + path + "\n" + version)
        let local = folder + "/" + key + "." + MediaType.fileExtension(path)
        clock += 1
        if let item = known[key] {
            known[key] = (item.size, clock)
            return local
        }
        if let (task, transfer) = running[key] {
            transfer.raisePriority(to: TransferPriority.current)
            return try await task.value
        }
        var options = DownloadOptions()
        options.overwrite = .overwrite
        options.resume = true
        // Started here, in the asking request's task: the engine reports its waits to that request,
        // and the download has its priority.
        let transfer = fs.download(path, to: local, options: options)
        let task = Task<String, any Error> {
            _ = try await transfer.result
            return local
        }
        running[key] = (task, transfer)
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
