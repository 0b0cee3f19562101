import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Thin, error-mapping wrappers for the POSIX file calls the transfer code needs.
enum LocalFile {
    /// Opens (creating) a file for writing; returns the descriptor.
    static func openForWriting(_ path: String, truncate: Bool = false) throws(FerryError) -> Int32 {
        var flags = O_WRONLY | O_CREAT | O_CLOEXEC
        if truncate { flags |= O_TRUNC }
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else { throw FerryError.posix(errno, operation: "open", path: path) }
        return fd
    }

    /// Opens an unnamed file for writing in the folder that will hold `path`
    /// (`O_TMPFILE`); nil where the file system cannot (the caller then uses a
    /// named file).
    static func openUnnamed(inFolderOf path: String) throws(FerryError) -> Int32? {
        guard OS.unnamedFilesWork else { return nil }
        let folder = LocalFile.folder(of: path)
        let simulated = LocalFile.unnamedFilesFailWith
        let fd = simulated == nil ? OS.openUnnamed(inDirectory: folder, mode: 0o644) : -1
        if fd >= 0 { return fd }
        let e = simulated ?? errno
        if e == EOPNOTSUPP || e == EISDIR || e == EINVAL || e == ENOSYS { return nil }
        throw FerryError.posix(e, operation: "open", path: path + ".part")
    }

    /// Test seam: the `errno` that opening an unnamed file fails with, as on a
    /// file system without `O_TMPFILE` (`EOPNOTSUPP`: NFS, FUSE, vfat; `EISDIR`:
    /// kernels before 3.11), so that tests can drive the named-`.part` fallback
    /// on a machine whose file systems all have it. Task-local: it changes only
    /// the downloads started by the task that binds it (a transfer's task
    /// inherits it). Nil, the only value outside tests, opens for real.
    @TaskLocal static var unnamedFilesFailWith: Int32?

    /// The folder part of a path ("." for a bare name, "/" for "/name").
    static func folder(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        if slash == path.utf8.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// Gives an open (unnamed) file the name `path`; never replaces an existing one.
    static func link(_ fd: Int32, to path: String) throws(FerryError) {
        guard OS.link(fd, to: path) == 0 else {
            let e = errno
            if e == EEXIST {
                throw FerryError(.destinationExists, operation: "link", target: path)
            }
            throw FerryError.posix(e, operation: "link", path: path)
        }
    }

    /// Opens a file for reading.
    static func openForReading(_ path: String) throws(FerryError) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FerryError.posix(errno, operation: "open", path: path) }
        return fd
    }

    /// The first `length` bytes of a file, fewer when it is shorter: what the
    /// readers of a file's head take (``EXIFThumbnail``, ``CaptureDate``).
    static func prefix(ofFileAt path: String, length: Int) throws(FerryError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FerryError.posix(errno, operation: "read", path: path) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: length)
        var filled = 0
        while filled < bytes.count {
            let n = bytes.withUnsafeMutableBytes { raw in
                read(fd, raw.baseAddress! + filled, raw.count - filled)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw FerryError.posix(errno, operation: "read", path: path)
            }
            if n == 0 { break }
            filled += n
        }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }

    /// Size of an open file.
    static func size(_ fd: Int32) -> Int64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return 0 }
        return Int64(st.st_size)
    }

    /// Size of a file by path, nil when it does not exist.
    static func size(atPath path: String) -> Int64? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int64(st.st_size)
    }

    /// Whether anything exists at `path` (a dangling symlink counts).
    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// What is at `path`, in one `lstat` when nothing is (a symbolic link is
    /// followed to tell a folder; a dangling one counts as a file).
    static func kind(_ path: String) -> PathKind {
        var st = stat()
        guard lstat(path, &st) == 0 else { return .missing }
        switch st.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFLNK: return isDirectory(path) ? .directory : .file
        default: return .file
        }
    }

    enum PathKind { case missing, file, directory }

    /// Whether `path` is a directory.
    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Writes all of `buffer` at the descriptor's position, retrying short writes.
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws(FerryError) {
        var offset = 0
        while offset < buffer.count {
            let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw FerryError.posix(errno, operation: "write", path: path)
            }
            offset += n
        }
    }

    /// Truncates an open file and moves its position to the new end.
    static func truncate(_ fd: Int32, to length: Int64, path: String) throws(FerryError) {
        guard ftruncate(fd, off_t(length)) == 0 else {
            throw FerryError.posix(errno, operation: "truncate", path: path)
        }
        lseek(fd, off_t(length), SEEK_SET)
    }

    /// Flushes file data to the disk.
    static func syncData(_ fd: Int32, path: String) throws(FerryError) {
        guard OS.syncData(fd) == 0 else { throw FerryError.posix(errno, operation: "sync", path: path) }
    }

    /// Renames atomically without replacing an existing file, and makes it durable.
    static func renameNoReplace(_ from: String, to: String) throws(FerryError) {
        guard OS.renameNoReplace(from, to) == 0 else {
            let e = errno
            if e == EEXIST {
                throw FerryError(
                    .destinationExists, operation: "rename", target: to,
                    detail: "appeared while downloading", recovery: .replaceOrKeep)
            }
            throw FerryError.posix(e, operation: "rename", path: to)
        }
    }

    /// Renames atomically (replacing `to`).
    static func rename(_ from: String, to: String) throws(FerryError) {
        guard OS.rename(from, to) == 0 else {
            throw FerryError.posix(errno, operation: "rename", path: to)
        }
    }

    /// Removes a file, ignoring "does not exist".
    static func remove(_ path: String) {
        unlink(path)
    }

    /// Replaces `path` with `data` atomically: temporary file, then rename. Not
    /// fsync'd: a reader that finds it torn or missing after a power loss treats
    /// it as absent, which is always safe for the journals written this way.
    static func writeAtomically(_ data: Data, to path: String) throws(FerryError) {
        let tmp = path + ".tmp"
        let fd = try openForWriting(tmp, truncate: true)
        defer { close(fd) }
        do throws(FerryError) {
            let failure: FerryError? = data.withUnsafeBytes { b in
                do throws(FerryError) {
                    try writeAll(fd, b, path: tmp)
                    return nil
                } catch { return error }
            }
            if let failure { throw failure }
        } catch {
            unlink(tmp)
            throw error
        }
        guard OS.rename(tmp, path) == 0 else {
            let e = errno
            unlink(tmp)
            throw FerryError.posix(e, operation: "rename", path: path)
        }
    }

    /// Sets a file's modification time.
    static func setModificationTime(_ path: String, _ date: Date) {
        let (seconds, nanoseconds) = timespec(date)
        _ = OS.setModificationTime(path, seconds: seconds, nanoseconds: nanoseconds)
    }

    /// Sets an open file's modification time (no path lookup).
    static func setModificationTime(_ fd: Int32, _ date: Date) {
        let (seconds, nanoseconds) = timespec(date)
        _ = OS.setModificationTime(fd, seconds: seconds, nanoseconds: nanoseconds)
    }

    /// `date` as whole seconds since 1970 (rounded down) and the nanoseconds past them.
    private static func timespec(_ date: Date) -> (seconds: Int64, nanoseconds: Int64) {
        let t = date.timeIntervalSince1970
        let seconds = t.rounded(.down)
        return (Int64(seconds), Int64((t - seconds) * 1e9))
    }
}

/// Runs blocking file work (fsync, rename) on a dispatch thread instead of the
/// small cooperative pool, so concurrent transfers keep moving meanwhile.
func blockingIO<T: Sendable>(_ work: @escaping @Sendable () throws(FerryError) -> T) async throws(FerryError) -> T {
    let result: Result<T, FerryError> = await withCheckedContinuation { c in
        DispatchQueue.global().async {
            do throws(FerryError) {
                c.resume(returning: .success(try work()))
            } catch {
                c.resume(returning: .failure(error))
            }
        }
    }
    return try result.get()
}
