import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A local folder as a remote file system (`file://` URLs and plain paths), so the
/// browser UI, sync and tests can treat a folder on disk like any other source.
///
/// Paths are absolute within the machine's file system. Copies go through the
/// same `.part`, journal, verify-and-rename path as network downloads.
public struct LocalFileSystem: RemoteFileSystem {
    /// The folder's `file://` URL.
    public let url: RemoteURL

    /// Opens a local folder.
    public init(url: RemoteURL) {
        self.url = url
    }

    /// Lists a folder on disk (`.` and `..` left out).
    public func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        guard let dir = opendir(path) else {
            throw LocalFileSystem.failure(errno, operation: "list", path: path)
        }
        defer { closedir(dir) }
        var entries: [RemoteEntry] = []
        while let ent = readdir(dir) {
            let name = withUnsafeBytes(of: ent.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            if let e = LocalFileSystem.entry(remoteJoin(path, name)) { entries.append(e) }
        }
        return entries
    }

    /// Describes a path without following a final symbolic link.
    public func stat(_ path: String) async throws(FerryError) -> RemoteEntry {
        guard let e = LocalFileSystem.entry(path) else {
            throw FerryError(.notFound, operation: "stat", target: path, serverText: String(cString: strerror(errno)))
        }
        return e
    }

    /// Describes one path without following a final symbolic link.
    static func entry(_ path: String) -> RemoteEntry? {
        var st = OS.FileStatus()
        guard lstat(path, &st) == 0 else { return nil }
        let kind: RemoteEntry.Kind
        var target: String?
        switch st.st_mode & S_IFMT {
        case S_IFDIR: kind = .directory
        case S_IFREG: kind = .file
        case S_IFLNK:
            kind = .symlink
            var buf = [CChar](repeating: 0, count: 4096)
            let n = readlink(path, &buf, buf.count - 1)
            if n >= 0 { target = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        default: kind = .other
        }
        let name = path == "/" ? "/" : String(path.split(separator: "/").last ?? "")
        let modified = Date(timeIntervalSince1970: TimeInterval(OS.modificationTime(st).seconds))
        return RemoteEntry(
            name: name, path: path, kind: kind, size: kind == .file ? Int64(st.st_size) : nil,
            modified: RemoteTimestamp(utc: modified), symlinkTarget: target,
            isHidden: name.hasPrefix(".") && name != "/",
            // The mode bits too: root passes access(W_OK) for a file nobody may write.
            isReadOnly: st.st_mode & 0o222 == 0 || access(path, W_OK) != 0)
    }

    /// Copies a file through the same `.part`, journal and rename as a download.
    public func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
        let destination = LocalDestination.prepare(destination, options)
        return LocalCopy.start(from: path, to: destination, options: options)
    }

    /// Copies a local file into this folder, creating parents when the options say so.
    ///
    /// A failed upload keeps its `.part` (and journal) only when `options.resume`
    /// says the same upload may resume from it; otherwise both are removed, so a
    /// failure (a full disk, a cancel) leaves nothing in the folder.
    public func upload(_ source: String, to path: String, options: UploadOptions) -> Transfer {
        let source = LocalPath.expandingTilde(source)
        if options.createParents {
            try? FileManager.default.createDirectory(
                atPath: remoteParent(path), withIntermediateDirectories: true)
        }
        var copy = DownloadOptions()
        copy.overwrite = options.overwrite
        copy.resume = options.resume
        copy.createParents = false
        let keepPart = options.resume
        let settings = copy
        return Transfer.start(source: source, destination: path) { transfer async throws(FerryError) in
            do throws(FerryError) {
                return try await LocalCopy.run(from: source, to: path, options: settings, transfer: transfer)
            } catch {
                throw LocalCopy.uploadFailed(error, destination: path, keepPart: keepPart)
            }
        }
    }

    /// Deletes a file.
    public func delete(_ path: String) async throws(FerryError) {
        if LocalFile.isDirectory(path) {
            throw FerryError(.localIO, operation: "delete", target: path, detail: "is a folder; use rmdir")
        }
        guard unlink(path) == 0 else { throw LocalFileSystem.failure(errno, operation: "delete", path: path) }
    }

    /// Creates a folder, and its missing parents when `createParents` is true.
    public func makeDirectory(_ path: String, createParents: Bool) async throws(FerryError) {
        if createParents {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                throw FerryError.wrap(error, operation: "mkdir", target: path)
            }
            return
        }
        guard mkdir(path, 0o755) == 0 else { throw LocalFileSystem.failure(errno, operation: "mkdir", path: path) }
    }

    /// Removes an empty folder.
    public func removeDirectory(_ path: String) async throws(FerryError) {
        guard rmdir(path) == 0 else {
            let e = errno
            if e == ENOTEMPTY || e == EEXIST {
                throw FerryError(
                    .directoryNotEmpty, operation: "rmdir", target: path, serverText: String(cString: strerror(e)))
            }
            throw LocalFileSystem.failure(e, operation: "rmdir", path: path)
        }
    }

    /// Renames or moves a file or folder; an existing `newPath` is replaced only
    /// with `replacing` (rename(2)), else refused by the kernel (`RENAME_NOREPLACE`).
    public func rename(_ path: String, to newPath: String, replacing: Bool) async throws(FerryError) {
        guard LocalFileSystem.entry(path) != nil else {
            throw LocalFileSystem.failure(ENOENT, operation: "rename", path: path)
        }
        if replacing {
            try LocalFile.rename(path, to: newPath)
            return
        }
        if LocalFile.exists(newPath) {
            throw FerryError(.destinationExists, operation: "rename", target: newPath, recovery: .replace)
        }
        do {
            try LocalFile.renameNoReplace(path, to: newPath)
        } catch  where error.code == .destinationExists {
            var e = error
            e.recovery = .replace
            throw e
        }
    }

    /// The error for a failed system call on `path`, in the codes every source
    /// uses: a missing path is `notFound`, a refused one `permissionDenied`, a
    /// taken name `destinationExists`; the rest as for any local file (`posix`).
    static func failure(_ code: Int32, operation: String, path: String) -> FerryError {
        let text = String(cString: strerror(code))
        switch code {
        case ENOENT, ENOTDIR: return FerryError(.notFound, operation: operation, target: path, serverText: text)
        case EACCES, EPERM:
            return FerryError(.permissionDenied, operation: operation, target: path, serverText: text)
        case EEXIST: return FerryError(.destinationExists, operation: operation, target: path, serverText: text)
        default: return FerryError.posix(code, operation: operation, path: path)
        }
    }
}

/// Copies one local file to another through a `PartFile`, with progress, pause,
/// resume and cancel like a network transfer.
enum LocalCopy {
    /// An upload's failure: its partial file removed unless `keepPart`, and a
    /// text that speaks of the upload (a copy's speaks of a download resuming).
    static func uploadFailed(_ error: FerryError, destination: String, keepPart: Bool) -> FerryError {
        var error = error
        if !keepPart {
            let part = destination + ".part"
            LocalFile.remove(part)
            LocalFile.remove(DownloadJournal.path(forPart: part))
        }
        if error.operation == "copy" { error.operation = "upload" }
        if error.code == .diskFull {
            error.detail =
                keepPart
                ? "free some space; the partial file is kept and the same upload resumes from it"
                : "free some space and upload it again; nothing of it was kept"
        }
        return error
    }

    static func start(from source: String, to destination: String, options: DownloadOptions) -> Transfer {
        Transfer.start(source: source, destination: destination) { transfer async throws(FerryError) in
            try await run(from: source, to: destination, options: options, transfer: transfer)
        }
    }

    static func run(
        from source: String, to destination: String, options: DownloadOptions, transfer: Transfer
    ) async throws(FerryError) -> TransferResult {
        let overwrite = options.overwrite
        let resume = options.resume
        let started = ContinuousClock.now
        let input = try LocalFile.openForReading(source)
        defer { close(input) }
        let total = LocalFile.size(input)
        try LocalDestination.makeReady(destination, options)
        if options.outputDescriptor == nil && LocalFile.exists(destination),
            let skipped = try OverwriteDecision.check(
                .file(size: LocalFile.size(atPath: destination)), policy: overwrite, operation: "copy", source: source,
                destination: destination, started: started,
                folder: FerryError(.localIO, operation: "copy", target: destination))
        {
            return skipped
        }
        var st = stat()
        fstat(input, &st)
        let mtime = OS.modificationTime(st)
        // The source's time, which the part's finish parses and sets on the copy
        // (as a download's Last-Modified).
        let stamp = SourceTime.stamp(seconds: Int64(mtime.seconds), nanoseconds: Int64(mtime.nanoseconds))
        let part = PartFile.make(destination: destination, source: source, options: options)
        var offset = try part.open(resume: resume)
        if offset > 0 && (part.journal.modified != stamp || part.journal.totalSize != total) { offset = 0 }
        try part.begin(at: offset, etag: nil, modified: stamp, totalSize: total)
        let resumedFrom = offset
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var position = offset
        do throws(FerryError) {
            while position < total {
                if transfer.isPaused || transfer.isCancelled {
                    part.checkpoint()
                    try await transfer.waitWhilePaused()
                }
                let n = buffer.withUnsafeMutableBytes { pread(input, $0.baseAddress, $0.count, off_t(position)) }
                if n < 0 { throw FerryError.posix(errno, operation: "read", path: source) }
                if n == 0 { break }
                let ok = buffer.withUnsafeBytes { part.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                if !ok { throw part.writeError! }
                position += Int64(n)
                transfer.report(bytesDone: position, totalBytes: total, resumedFrom: resumedFrom)
                await Task.yield()
            }
            let size = try await part.finish(expectedSize: total, overwrite: overwrite)
            var result = TransferResult(
                source: source, destination: destination, size: size, bytesTransferred: size - resumedFrom,
                resumedFrom: resumedFrom, duration: .now - started)
            result.sourceModified = part.sourceModified
            result.sha256 = part.sha256
            return result
        } catch {
            part.settle()
            throw error
        }
    }
}
