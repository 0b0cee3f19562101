import Foundation
import Synchronization

/// A Toshiba FlashAir card (or `ferry card`) as a remote file system:
/// `flashair://HOST[:PORT]/PATH`.
///
/// Lists through `command.cgi?op=100` with the comma-safe parse, downloads files
/// by their plain path over HTTP (resuming with `Range` when the card honours it),
/// writes through `upload.cgi`, and reads embedded thumbnails and card facts.
/// A card gets one connection at a time unless `ConnectionOptions.maxConnections`
/// says otherwise. Cards cannot rename: `rename` throws `unsupportedOperation`.
///
/// ```swift
/// let card = FlashAirFileSystem(url: try RemoteURL(parsing: "flashair://192.168.0.1/"))
/// for entry in try await card.list("/DCIM/100__TSB") where !entry.isHidden { print(entry.name) }
/// ```
public struct FlashAirFileSystem: RemoteFileSystem, DownloadSourceFactory {
    /// Timeouts and retries for the card's CGI calls.
    public struct RequestPolicy: Sendable, Hashable {
        /// Tries for one call before reporting "card not answering".
        public var tries: Int = 3
        /// First back-off delay; it doubles after each failed try.
        public var retryDelay: Duration = .milliseconds(500)
        /// Give up on a connection attempt after this long.
        public var connectTimeout: Duration = .seconds(10)
        /// Give up on a call that sends nothing for this long (a sleeping camera).
        public var stallTimeout: Duration = .seconds(20)
        /// How long a call waits for a card that is busy with another client
        /// (it closes the connection unanswered), trying every `retryDelay`.
        public var busyWait: Duration = .seconds(30)

        /// The defaults: three tries, 0.5 s first back-off, 10 s connect, 20 s
        /// stall, 30 s for a card busy with another client.
        public init() {}
    }

    /// The card's URL; its path is the starting folder.
    public let url: RemoteURL
    /// Timeouts and retries for CGI calls (downloads use their `DownloadOptions`).
    public let policy: RequestPolicy
    let engine: CurlEngine
    private let cache: Cache

    /// Facts fetched once per file system: the control image path (op=109).
    final class Cache: Sendable {
        /// `.some(nil)`: asked, the card has none.
        let controlImage = Mutex<String??>(nil)
    }

    /// Opens a card.
    ///
    /// - Parameters:
    ///   - url: A `flashair://` URL; its path is the starting folder.
    ///   - options: `maxConnections` overrides the card's default of one connection.
    ///   - policy: Timeouts and retries for CGI calls.
    public init(url: RemoteURL, options: ConnectionOptions = .init(), policy: RequestPolicy = .init()) {
        self.init(url: url, engine: .shared, options: options, policy: policy)
    }

    init(url: RemoteURL, engine: CurlEngine, options: ConnectionOptions = .init(), policy: RequestPolicy = .init()) {
        self.url = url
        self.engine = engine
        self.policy = policy
        self.cache = Cache()
        // One request at a time: a card may stop answering under parallel requests.
        let limit = options.maxConnections ?? 1
        engine.setHostLimit(url.hostKey, limit)
        // Its only connection goes to the page first, and is let go when idle (`LanePolicy`).
        if limit == 1 { engine.setHostPolicy(url.hostKey, .oneConnectionCard) }
    }

    var cgi: FlashAirCGI { FlashAirCGI(url: url, engine: engine, policy: policy) }

    /// The redacted URL of a path on this card, for messages.
    func shown(_ path: String) -> String { url.with(path: path).redacted }

    // MARK: Listing

    /// Lists one folder (op=100), in the card's order.
    ///
    /// Hidden-attribute entries and the card's system entries (`/SD_WLAN`,
    /// `/GUPIXINF`, the control image) are included with `isHidden == true`; a photo
    /// browser drops them unless asked for everything (see ``FlashAirEntryFilter``).
    ///
    /// - Throws: `notFound` for a missing folder or a file, `badListing` for a reply
    ///   that is not a listing, `notAnswering` for a card that does not answer.
    public func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        let folder = RemotePath.normalize(path, keepingServerRoot: false)
        let entries = try await listing(folder, operation: "list")
        // A real card answers an empty listing for a folder that does not exist.
        if entries.isEmpty && folder != "/" {
            let me: RemoteEntry
            do {
                me = try await stat(folder)
            } catch  where error.code == .notFound {
                throw FerryError(.notFound, operation: "list", target: shown(folder), detail: "no such folder")
            }
            guard me.isDirectory else {
                throw FerryError(.notFound, operation: "list", target: shown(folder), detail: "is a file, not a folder")
            }
        }
        let filter = FlashAirEntryFilter(controlImage: await controlImage())
        return entries.map(filter.marked)
    }

    /// The op=100 entries of `folder` as the card sends them, without the existence
    /// check or system marking of ``list(_:)``.
    func listing(_ folder: String, operation: String) async throws(FerryError) -> [RemoteEntry] {
        let reply = try await cgi.get(
            "command.cgi", query: "op=100&DIR=" + FlashAirCGI.encode(folder), operation: operation,
            target: folder)
        try check(reply, operation: operation, target: folder)
        let text = reply.text
        let parsed = FlashAirListing.parse(text, folder: folder)
        if parsed.entries.isEmpty && parsed.skippedLines > 0 && !text.contains(FlashAirListing.header) {
            throw FerryError(
                .badListing, operation: operation, target: shown(folder),
                detail: "the reply is not a FlashAir listing: \(String(reply.trimmedText.prefix(80)))")
        }
        return parsed.entries
    }

    /// Counts the entries of a folder that are not hidden (op=101).
    ///
    /// - Throws: `unsupportedOperation` when the card lacks op=101.
    public func count(_ path: String) async throws(FerryError) -> Int {
        let folder = RemotePath.normalize(path, keepingServerRoot: false)
        let reply = try await cgi.get(
            "command.cgi", query: "op=101&DIR=" + FlashAirCGI.encode(folder), operation: "count", target: folder)
        try check(reply, operation: "count", target: folder)
        guard let n = FlashAirReply.fileCount(reply.text) else {
            throw FerryError(
                .protocolError, operation: "count", target: shown(folder),
                serverText: String(reply.trimmedText.prefix(80)), detail: "not a number")
        }
        // A card counts 0 in a folder that does not exist: say so, as list does.
        if n == 0 && folder != "/" { try await requireFolder(folder, operation: "count") }
        return n
    }

    /// Throws `notFound` unless `folder` is a folder on the card.
    private func requireFolder(_ folder: String, operation: String) async throws(FerryError) {
        _ = try await ListedEntry.folder(operation: operation, shown: shown(folder), isDirectory: \.isDirectory) {
            () async throws(FerryError) in try await existing(folder, operation: operation)
        }
    }

    /// Describes a file or folder by listing its parent folder.
    public func stat(_ path: String) async throws(FerryError) -> RemoteEntry {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        if p == "/" { return RemoteEntry(name: "/", path: "/", kind: .directory) }
        let found = try await ListedEntry.stat(p, shown: shown(p), find: FlashAirFileSystem.find) {
            parent async throws(FerryError) in try await listing(parent, operation: "stat")
        }
        return FlashAirEntryFilter(controlImage: await controlImage()).marked(found)
    }

    // MARK: Downloads

    /// Starts downloading a file by its plain path (`GET /DCIM/...` over HTTP).
    ///
    /// Resumes with `Range` + `If-Range` when the card honours them and restarts the
    /// file cleanly when it does not. A card that answers 503 or nothing for
    /// `options.maxRetries + 1` tries in a row fails with `notAnswering`.
    public func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
        let destination = LocalDestination.prepare(destination, options)
        return DownloadDriver.start(downloadSource(for: path), to: destination, options: options)
    }

    func downloadSource(for path: String) -> DownloadSource {
        HTTPDownloadAttempt.source(
            url: url.with(path: path), engine: engine, wireScheme: "http", gaveUp: FlashAirFileSystem.cardError)
    }

    /// The error for a download whose retry budget ran out: silence or 503 from
    /// the card is `notAnswering`; the rest is the last failure, "gave up after N
    /// tries" added.
    static func cardError(_ last: FerryError, tries: Int) -> FerryError {
        if FlashAirCGI.isBusy(last) {
            var busy = FlashAirCGI.busy(operation: last.operation ?? "download", target: last.target ?? "")
            busy.detail = [busy.detail, "gave up after \(tries) tries"].compactMap { $0 }.joined(separator: "; ")
            return busy
        }
        let silent = last.code == .timedOut || last.code == .connectionFailed
        let busy = last.serverCode.map(FlashAirCGI.isRetryable) ?? false
        guard last.isTransient, silent || busy else { return DownloadSource.gaveUpAfter(last, tries) }
        return FlashAirCGI.notAnswering(
            after: tries, last: last, operation: last.operation ?? "download", target: last.target ?? "")
    }

    // MARK: Writing

    /// Starts uploading a local file to the card.
    ///
    /// `path` names the remote file; a path ending in `/` names a folder, and the
    /// local file's name is used. The card stores the file's modification time
    /// (FTIME, in this machine's time zone). `options.overwrite` decides about an
    /// existing file; `options.createParents` creates missing folders.
    public func upload(_ source: String, to path: String, options: UploadOptions) -> Transfer {
        let source = LocalPath.expandingTilde(source)
        var remote = path
        if remote.hasSuffix("/") || remote.isEmpty {
            remote = RemotePath.join(
                RemotePath.normalize(remote, keepingServerRoot: false), LocalPath.lastComponent(source))
        }
        let job = FlashAirUpload(
            card: self, source: source, path: RemotePath.normalize(remote, keepingServerRoot: false), options: options)
        return Transfer.start(source: source, destination: shown(job.path)) { transfer async throws(FerryError) in
            try await job.run(transfer)
        }
    }

    /// Deletes a file (`upload.cgi?DEL=`).
    ///
    /// - Throws: `notFound` when it is not there, `unsupportedOperation` for a folder
    ///   (use ``removeDirectory(_:)``) or a card with uploads disabled.
    public func delete(_ path: String) async throws(FerryError) {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        let entry = try await existing(p, operation: "delete")
        guard !entry.isDirectory else {
            throw FerryError(
                .unsupportedOperation, operation: "delete", target: shown(p), detail: "is a folder; use rmdir")
        }
        try await writeProtect(operation: "delete", target: p)
        try await del(p, operation: "delete")
    }

    /// Creates a folder. The card's `UPDIR` creates only the last level, so with
    /// `createParents` Ferry walks down and creates each missing level in turn.
    ///
    /// - Throws: `destinationExists` when it exists (without `createParents`),
    ///   `notFound` for a missing parent, `verificationFailed` when the card said
    ///   SUCCESS but no folder appeared.
    public func makeDirectory(_ path: String, createParents: Bool) async throws(FerryError) {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        let components = p.split(separator: "/").map(String.init)
        guard !components.isEmpty else {
            if createParents { return }
            throw FerryError(.destinationExists, operation: "mkdir", target: shown(p), detail: "the root always exists")
        }
        var missing: [String] = []
        if createParents {
            var prefix = "/"
            for (i, name) in components.enumerated() {
                let entries = try await listing(prefix, operation: "mkdir")
                let here = RemotePath.join(prefix, name)
                if let found = FlashAirFileSystem.find(name, in: entries) {
                    guard found.isDirectory else {
                        throw FerryError(
                            .destinationExists, operation: "mkdir", target: shown(here), detail: "is a file")
                    }
                    prefix = found.path
                    continue
                }
                // Everything from here down is missing.
                var deeper = prefix
                for rest in components[i...] {
                    deeper = RemotePath.join(deeper, rest)
                    missing.append(deeper)
                }
                break
            }
            if missing.isEmpty { return }
        } else {
            let (parent, name) = RemotePath.split(p)
            let parentEntry = try await existing(parent, operation: "mkdir")
            guard parentEntry.isDirectory else {
                throw FerryError(
                    .notFound, operation: "mkdir", target: shown(parent), detail: "is a file, not a folder")
            }
            if FlashAirFileSystem.find(name, in: try await listing(parent, operation: "mkdir")) != nil {
                throw FerryError(.destinationExists, operation: "mkdir", target: shown(p), detail: "already exists")
            }
            missing = [p]
        }
        try await FlashAirWriteLock.withLock(url.hostKey) { () async throws(FerryError) in
            try await writeProtect(operation: "mkdir", target: p)
            for folder in missing {
                try await setUploadDirectory(folder, operation: "mkdir")
            }
        }
        // UPDIR says SUCCESS even for a path it could not create: look.
        let (parent, name) = RemotePath.split(p)
        guard let made = FlashAirFileSystem.find(name, in: try await listing(parent, operation: "mkdir")),
            made.isDirectory
        else {
            throw FerryError(
                .verificationFailed, operation: "mkdir", target: shown(p),
                detail: "the card said SUCCESS but the folder is not there")
        }
    }

    /// Removes an empty folder (`upload.cgi?DEL=`).
    ///
    /// - Throws: `directoryNotEmpty` when anything, hidden entries included, is in it.
    public func removeDirectory(_ path: String) async throws(FerryError) {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        guard p != "/" else {
            throw FerryError(.permissionDenied, operation: "rmdir", target: shown(p), detail: "cannot remove the root")
        }
        let entry = try await existing(p, operation: "rmdir")
        guard entry.isDirectory else {
            throw FerryError(.unsupportedOperation, operation: "rmdir", target: shown(p), detail: "is a file; use rm")
        }
        let inside = try await listing(entry.path, operation: "rmdir")
        guard inside.isEmpty else {
            throw FerryError(
                .directoryNotEmpty, operation: "rmdir", target: shown(p),
                detail: "\(inside.count) \(inside.count == 1 ? "entry" : "entries") inside")
        }
        try await writeProtect(operation: "rmdir", target: p)
        try await del(entry.path, operation: "rmdir")
    }

    /// Cards cannot rename or move: always throws `unsupportedOperation`.
    public func rename(_ path: String, to newPath: String, replacing: Bool) async throws(FerryError) {
        throw FerryError(
            .unsupportedOperation, operation: "rename", target: shown(path),
            detail: "FlashAir cards cannot rename or move; download, upload under the new name, and delete")
    }

    // MARK: Card facts

    /// Whether the card was written since the last ask (op=102). Asking clears the
    /// flag for every client: only one poller should use it.
    public func hasChanged() async throws(FerryError) -> Bool {
        let reply = try await command(102, operation: "changed")
        guard let flag = FlashAirReply.updated(reply.text) else {
            throw FerryError(.protocolError, operation: "changed", target: shown("/"), serverText: reply.trimmedText)
        }
        return flag
    }

    /// When the host last wrote to the card, as time since the card booted (op=121).
    /// Safe for several watchers; it goes backwards when the card restarts.
    public func lastWriteTime() async throws(FerryError) -> Duration {
        let reply = try await command(121, operation: "last write")
        guard let ms = FlashAirReply.lastWriteMilliseconds(reply.text) else {
            throw FerryError(.protocolError, operation: "last write", target: shown("/"), serverText: reply.trimmedText)
        }
        return .milliseconds(ms)
    }

    /// The JPEG's embedded Exif thumbnail (`thumbnail.cgi`), with the main image's
    /// width, height and orientation from the `X-exif-*` headers (firmware 3.00+).
    ///
    /// - Returns: The thumbnail, or nil when the file is not a JPEG or has none.
    /// - Throws: `notFound` when the file is missing.
    public func thumbnail(_ path: String) async throws(FerryError) -> EXIFThumbnail.Thumbnail? {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        let reply = try await cgi.get(
            "thumbnail.cgi", query: FlashAirCGI.encode(p), operation: "thumbnail", target: p)
        if reply.status == 404 || reply.status == 500 {
            // The card answers the same for a missing file and one without a thumbnail.
            _ = try await existing(p, operation: "thumbnail")
            return nil
        }
        try check(reply, operation: "thumbnail", target: p)
        guard reply.body.starts(with: [0xFF, 0xD8]) else {
            throw FerryError(
                .protocolError, operation: "thumbnail", target: shown(p), detail: "the reply is not a JPEG")
        }
        func number(_ name: String) -> Int? {
            reply.headers[name].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
        return EXIFThumbnail.Thumbnail(
            jpeg: Data(reply.body), width: number("X-exif-WIDTH"), height: number("X-exif-HEIGHT"),
            orientation: number("X-exif-ORIENTATION"))
    }

    /// The control image path (op=109), asked once; nil when the card has none.
    func controlImage() async -> String? {
        if let known = cache.controlImage.withLock({ $0 }) { return known }
        guard let reply = try? await cgi.get("command.cgi", query: "op=109", operation: "info", target: "/")
        else { return nil }
        var value: String?
        if reply.status == 200 {
            let text = reply.trimmedText
            if text.hasPrefix("/") && !text.contains("\n") { value = text }
        }
        cache.controlImage.withLock { $0 = .some(value) }
        return value
    }

    // MARK: Helpers

    /// `GET command.cgi?op=N`, with the status checked.
    func command(_ op: Int, operation: String) async throws(FerryError) -> FlashAirReplyBody {
        let reply = try await cgi.get("command.cgi", query: "op=\(op)", operation: operation, target: "/")
        try check(reply, operation: operation, target: "/")
        return reply
    }

    /// Maps an error status to a Ferry error: 400 means the card lacks the operation.
    func check(_ reply: FlashAirReplyBody, operation: String, target: String) throws(FerryError) {
        guard reply.status >= 400 || reply.status < 200 else { return }
        if reply.status == 400 {
            throw FerryError(
                .unsupportedOperation, operation: operation, target: shown(target), serverCode: 400,
                serverText: reply.reason.isEmpty ? "Bad Request" : reply.reason,
                detail: "this card's firmware lacks it, or its CONFIG disables it")
        }
        throw FerryError.http(status: reply.status, reason: reply.reason, operation: operation, target: shown(target))
    }

    /// Stat that reports a missing path under the caller's operation.
    func existing(_ path: String, operation: String) async throws(FerryError) -> RemoteEntry {
        do {
            return try await stat(path)
        } catch {
            throw error.withOperation(operation)
        }
    }

    /// `upload.cgi?WRITEPROTECT=ON`: keeps the camera from writing while we do.
    func writeProtect(operation: String, target: String) async throws(FerryError) {
        try await upload(query: "WRITEPROTECT=ON", operation: operation, target: target)
    }

    /// `upload.cgi?UPDIR=`: sets the upload folder, creating its last level.
    func setUploadDirectory(_ folder: String, operation: String) async throws(FerryError) {
        try await upload(query: "UPDIR=" + FlashAirCGI.encode(folder), operation: operation, target: folder)
    }

    /// `upload.cgi?DEL=` with nothing else: extra parameters make DEL fail on some firmware.
    func del(_ path: String, operation: String) async throws(FerryError) {
        try await upload(query: "DEL=" + FlashAirCGI.encode(path), operation: operation, target: path)
    }

    /// One `GET upload.cgi?...` that must answer SUCCESS.
    func upload(query: String, operation: String, target: String) async throws(FerryError) {
        let reply = try await cgi.get("upload.cgi", query: query, operation: operation, target: target)
        if reply.status == 404 || reply.status == 501 {
            throw FerryError(
                .unsupportedOperation, operation: operation, target: shown(target), serverCode: reply.status,
                serverText: reply.reason,
                detail: "upload.cgi is disabled on this card (set UPLOAD=1 in SD_WLAN/CONFIG)")
        }
        try check(reply, operation: operation, target: target)
        guard reply.saysSuccess else {
            throw FerryError(
                .serverError, operation: operation, target: shown(target),
                serverText: reply.trimmedText.isEmpty
                    ? "no SUCCESS from upload.cgi" : String(reply.trimmedText.prefix(120)))
        }
    }

    /// The entry named `name`, exactly, or else ignoring case (FAT names are case-insensitive).
    static func find(_ name: String, in entries: [RemoteEntry]) -> RemoteEntry? {
        entries.first { $0.name == name }
            ?? entries.first { $0.name.compare(name, options: .caseInsensitive) == .orderedSame }
    }
}

extension FerryError {
    /// A copy reporting `operation` (a stat's "not found" becomes the caller's).
    func withOperation(_ operation: String) -> FerryError {
        var e = self
        e.operation = operation
        return e
    }
}
