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
/// Every operation is `async throws(FerryError)`: a `catch` gets a `FerryError`
/// without a cast. A backend that cannot do an operation throws
/// `FerryError.unsupportedOperation`; it never pretends. Paths are absolute and
/// decoded (`/DCIM/100__TSB/IMG 1.JPG`).
public protocol RemoteFileSystem: Sendable {
    /// The URL this file system was opened with (its root or starting folder).
    var url: RemoteURL { get }

    /// Lists one folder. `.` and `..` never appear.
    func list(_ path: String) async throws(FerryError) -> [RemoteEntry]

    /// Describes one file or folder.
    func stat(_ path: String) async throws(FerryError) -> RemoteEntry

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
    func delete(_ path: String) async throws(FerryError)

    /// Creates a folder, and its missing parents when `createParents` is true.
    func makeDirectory(_ path: String, createParents: Bool) async throws(FerryError)

    /// Removes an empty folder.
    func removeDirectory(_ path: String) async throws(FerryError)

    /// Renames or moves a file or folder.
    ///
    /// An existing `newPath` is replaced only when `replacing` is true; otherwise
    /// the rename fails with `destinationExists` (recovery ``FerryError/Recovery/replace``)
    /// and nothing changes. Where the protocol itself would replace (FTP's `RNTO`
    /// on servers that use rename(2)), the backend looks first.
    func rename(_ path: String, to newPath: String, replacing: Bool) async throws(FerryError)

    // MARK: Bytes in memory (RemoteFileSystem+Data.swift)

    /// Reads one byte range of a file into memory; no local file is touched.
    ///
    /// Fewer bytes come back when the file ends inside the range, none when it
    /// starts at or past the end. A server that ignores the range request is cut
    /// off once the range is read. Cancelling the calling task stops the read.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - range: Byte offsets, `0..<65536` for the first 64 KiB.
    /// - Returns: The bytes of the range that exist.
    /// - Throws: `FerryError`: `notFound`, `cancelled`, the server's error;
    ///   `unsupportedOperation` from a backend that cannot read ranges.
    func data(at path: String, range: Range<Int64>) async throws(FerryError) -> Data

    /// Reads a whole file into memory, refusing one larger than `limit` bytes.
    ///
    /// A file over the limit fails with `FerryError.Code.tooLarge` after at most
    /// `limit + 1` bytes were read (HTTP: before any, when the server announces
    /// the size); the rest is never transferred.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - limit: The largest size accepted, in bytes.
    /// - Returns: The file's bytes.
    /// - Throws: `FerryError`: `tooLarge`, `notFound`, `cancelled`, the server's error.
    func data(at path: String, limit: Int) async throws(FerryError) -> Data

    /// The small preview image of a photo, read without downloading the photo.
    ///
    /// A FlashAir card makes it itself (`thumbnail.cgi`); elsewhere it is the
    /// Exif thumbnail from the file's first bytes (one range request of 64 KiB,
    /// grown only when the Exif block lies further, never past 256 KiB).
    /// The JPEG is as stored, not turned upright: its `orientation` (the card's
    /// `X-exif-ORIENTATION`, else IFD0's) says how to show it (``ExifOrientation``).
    ///
    /// - Parameter path: A JPEG file.
    /// - Returns: The thumbnail, or nil when the file has none (not a JPEG, no Exif thumbnail).
    /// - Throws: `FerryError`: `notFound` for a missing file, `cancelled`, the server's error.
    func thumbnail(_ path: String) async throws(FerryError) -> EXIFThumbnail.Thumbnail?

    // MARK: Optional capabilities (RemoteCapabilities.swift)

    /// What this source can do beyond the common operations; an operation whose
    /// capability is missing throws `unsupportedOperation` saying so.
    var capabilities: RemoteCapabilities { get }

    /// Counts the visible entries of a folder (hidden ones left out).
    ///
    /// A card answers with one request (op=101); elsewhere the folder is listed.
    ///
    /// - Throws: `FerryError` `notFound` for a missing folder, like ``list(_:)``.
    func count(_ path: String) async throws(FerryError) -> Int

    /// Facts about a card: firmware, SSID, CID, free space, supported operations
    /// (``RemoteCapabilities/cardInfo``).
    ///
    /// - Throws: `FerryError` `unsupportedOperation` from a source that is not a card.
    func info() async throws(FerryError) -> FlashAirInfo

    /// When the source was last written to, as time since it started
    /// (``RemoteCapabilities/changeDetection``). Cheap enough to ask every second;
    /// it goes backwards when the source restarts.
    ///
    /// - Throws: `FerryError` `unsupportedOperation` where the source cannot tell.
    func lastWriteTime() async throws(FerryError) -> Duration

    /// Whether the source was written since the last ask (``RemoteCapabilities/changeDetection``).
    /// Asking clears the flag for every client: only one poller should use it.
    ///
    /// - Throws: `FerryError` `unsupportedOperation` where the source cannot tell.
    func hasChanged() async throws(FerryError) -> Bool

    /// The identity of the storage medium behind this source (a card's CID),
    /// which stays the same at any address; nil where there is none.
    func mediumIdentifier() async throws(FerryError) -> String?

    /// Whether the source accepts changes (uploads, deletes) right now; nil when
    /// it cannot tell, and trying is the only way to know.
    func acceptsChanges() async throws(FerryError) -> Bool?

    /// A copy of this file system suited to asking ``lastWriteTime()`` every
    /// `interval` (one try, short timeouts), so a source that went away is
    /// noticed in seconds. The default is the file system itself.
    func forChangePolling(interval: Duration) -> any RemoteFileSystem
}

extension RemoteFileSystem {
    /// Throws `unsupportedOperation` naming the backend's scheme and the operation.
    func unsupported(_ operation: String, _ path: String) -> FerryError {
        FerryError(
            .unsupportedOperation, operation: operation, target: url.with(path: path).redacted,
            detail: "\(url.scheme.rawValue):// cannot \(operation)")
    }

    /// Throws `unsupportedOperation`: this backend cannot list.
    public func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        throw unsupported("list", path)
    }

    /// Downloads `entry.path`.
    public func download(_ entry: RemoteEntry, to destination: String, options: DownloadOptions) -> Transfer {
        download(entry.path, to: destination, options: options)
    }

    /// A transfer that failed with `unsupportedOperation`: this backend cannot upload.
    public func upload(_ source: String, to path: String, options: UploadOptions) -> Transfer {
        Transfer.failed(unsupported("upload", path), source: source, destination: url.with(path: path).redacted)
    }

    /// Throws `unsupportedOperation`: this backend cannot delete.
    public func delete(_ path: String) async throws(FerryError) { throw unsupported("delete", path) }

    /// Throws `unsupportedOperation`: this backend cannot create folders.
    public func makeDirectory(_ path: String, createParents: Bool) async throws(FerryError) {
        throw unsupported("mkdir", path)
    }

    /// Throws `unsupportedOperation`: this backend cannot remove folders.
    public func removeDirectory(_ path: String) async throws(FerryError) { throw unsupported("rmdir", path) }

    /// Renames or moves a file or folder, never replacing an existing `newPath`
    /// (`rename(_:to:replacing:)` with `replacing: false`).
    public func rename(_ path: String, to newPath: String) async throws(FerryError) {
        try await rename(path, to: newPath, replacing: false)
    }

    /// Throws `unsupportedOperation`: this backend cannot rename.
    public func rename(_ path: String, to newPath: String, replacing: Bool) async throws(FerryError) {
        throw unsupported("rename", path)
    }
}
