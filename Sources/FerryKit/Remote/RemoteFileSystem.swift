import Foundation

/// What to do when the destination of a transfer already exists.
public enum OverwritePolicy: String, Sendable, Hashable, CaseIterable {
    /// Refuse with `FerryError.destinationExists` (the default).
    case fail
    /// Replace the existing file.
    case overwrite
    /// Leave the existing file and report the transfer as skipped.
    case skip
}

/// One remote storage: a FlashAir card, an FTP server, an HTTP server, a local folder.
///
/// Every operation is `async throws`. A backend that cannot do an operation throws
/// `FerryError.unsupportedOperation`; it never pretends. Paths are absolute and
/// decoded (`/DCIM/100__TSB/IMG 1.JPG`).
public protocol RemoteFileSystem: Sendable {
    /// The URL this file system was opened with (its root or starting folder).
    var url: RemoteURL { get }

    /// Lists one folder. `.` and `..` never appear.
    func list(_ path: String) async throws -> [RemoteEntry]

    /// Describes one file or folder.
    func stat(_ path: String) async throws -> RemoteEntry

    /// Starts downloading `path` to the local file `destination`.
    ///
    /// The returned transfer is already running; await `result` for the outcome.
    func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer

    /// Starts downloading a file this file system listed (`list`, `walk`). A backend
    /// may take the listing's size and time instead of asking the server again for
    /// each file (FTP: no `SIZE` and `MDTM`, two round trips fewer per file); the
    /// default downloads `entry.path`.
    func download(_ entry: RemoteEntry, to destination: String, options: DownloadOptions) -> Transfer

    /// Starts uploading the local file `source` to the remote `path`.
    func upload(_ source: String, to path: String, options: UploadOptions) -> Transfer

    /// Deletes a file.
    func delete(_ path: String) async throws

    /// Creates a folder, and its missing parents when `createParents` is true.
    func makeDirectory(_ path: String, createParents: Bool) async throws

    /// Removes an empty folder.
    func removeDirectory(_ path: String) async throws

    /// Renames or moves a file or folder.
    func rename(_ path: String, to newPath: String) async throws
}

extension RemoteFileSystem {
    /// Throws `unsupportedOperation` naming the backend's scheme and the operation.
    func unsupported(_ operation: String, _ path: String) -> FerryError {
        FerryError(
            .unsupportedOperation, operation: operation, target: url.with(path: path).redacted,
            detail: "\(url.scheme.rawValue):// cannot \(operation)")
    }

    public func list(_ path: String) async throws -> [RemoteEntry] {
        throw unsupported("list", path)
    }

    public func download(_ entry: RemoteEntry, to destination: String, options: DownloadOptions) -> Transfer {
        download(entry.path, to: destination, options: options)
    }

    public func upload(_ source: String, to path: String, options: UploadOptions) -> Transfer {
        Transfer.failed(unsupported("upload", path), source: source, destination: url.with(path: path).redacted)
    }

    public func delete(_ path: String) async throws { throw unsupported("delete", path) }

    public func makeDirectory(_ path: String, createParents: Bool) async throws {
        throw unsupported("mkdir", path)
    }

    public func removeDirectory(_ path: String) async throws { throw unsupported("rmdir", path) }

    public func rename(_ path: String, to newPath: String) async throws {
        throw unsupported("rename", path)
    }
}
