import CCurl
import Foundation
import Synchronization

/// WebDAV (`dav://`, `davs://`; `webdav://` is read as `dav://`) as a remote file
/// system: Nextcloud and ownCloud (`/remote.php/dav/files/USER/`), Apache
/// `mod_dav`, nginx with `dav_ext`, `rclone serve webdav`, NAS web apps.
///
/// Listings and `stat` are PROPFIND (`Depth: 1` and `0`) read by
/// `WebDAVMultistatus`; downloads and in-memory reads are HTTP's own
/// (`HTTPDownloadAttempt`, `HTTPMemoryRead`: `Range` with `If-Range` on the
/// PROPFIND's ETag); uploads PUT a temporary name and MOVE it in place
/// (`WebDAVUploader`); folders are MKCOL, a level at a time for `mkdir -p`.
/// Errors keep the server's status and words (Nextcloud's `<s:message>`), and a
/// `207` that reports failures names each file.
public struct WebDAVFileSystem: RemoteFileSystem, DownloadSourceFactory {
    /// The URL this file system was opened with.
    public let url: RemoteURL
    let engine: CurlEngine
    /// TLS, credentials and extra headers for every request.
    let settings: HTTPRequestSettings
    /// What the server's `401` asked for, learnt once and shared by copies.
    let auth: WebDAVAuthMemo
    /// Whether the server writes a ranged PUT at its offset, once an upload found out.
    let rangedPut = WebDAVRangedPut.Memo()
    /// The largest PUT of an upload while the server may take ranged ones.
    var uploadPiece = WebDAVRangedPut.piece

    /// Opens a `dav://` or `davs://` URL.
    ///
    /// - Parameters:
    ///   - url: The server; its path is where relative operations start.
    ///   - options: Credentials (else from the URL, `FERRY_PASSWORD` or `~/.netrc`),
    ///     TLS verification and CA file, extra request headers.
    public init(url: RemoteURL, options: ConnectionOptions = .init()) {
        self.init(url: url, engine: .shared, settings: HTTPRequestSettings(url: url, options: options))
    }

    init(url: RemoteURL, engine: CurlEngine, settings: HTTPRequestSettings) {
        self.url = url
        self.engine = engine
        self.settings = settings
        auth = WebDAVAuthMemo()
    }

    /// `http` or `https`: the scheme on the wire.
    var wireScheme: String { url.scheme == .davs ? "https" : "http" }

    /// The URL of a path (a folder's with a trailing `/` when `folder`).
    func target(_ path: String, folder: Bool = false) -> RemoteURL {
        let p = RemotePath.normalize(path)
        return url.with(path: folder && p != "/" ? p + "/" : p)
    }

    /// The URL people see for a path.
    func display(_ path: String) -> String { target(path).redacted }

    // MARK: requests

    /// One reply: status, headers, body.
    struct Reply {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
    }

    /// Sets the options every WebDAV request gets: HTTP's, the auth the server
    /// asked for before (Basic sent at once, saving a round trip a request and
    /// any upload's second sending), and the extra header lines.
    func configure(_ easy: EasyHandle, _ target: RemoteURL, headers extra: [String] = []) {
        HTTPFileSystem.configure(
            easy, wireURL: target.wireURL(scheme: wireScheme), settings: settings, headerLines: [])
        if settings.credentials != nil, auth.basicOnly {
            easy.set(CURLOPT_HTTPAUTH, 1)  // CURLAUTH_BASIC
        }
        let lines = settings.headerLines + extra
        if !lines.isEmpty { easy.set(CURLOPT_HTTPHEADER, list: lines) }
        // A redirect keeps the method and its body (PROPFIND of `/dav` to `/dav/`).
        easy.set(CURLOPT_POSTREDIR, 7)  // CURL_REDIR_POST_ALL
    }

    /// Remembers what a request's `401` offered.
    func learnAuth(from easy: EasyHandle) {
        guard settings.credentials != nil, !auth.basicOnly else { return }
        let offered = easy.info(CURLINFO_HTTPAUTH_AVAIL)
        // Basic alone: the server takes nothing else, so nothing is lost by sending it first.
        if offered == 1 { auth.learnBasic() }
    }

    /// Sends one request with `method` and waits for its whole reply.
    func request(
        _ method: String, _ target: RemoteURL, headers: [String] = [], body: String? = nil,
        maxBody: Int = 1 << 20, operation: String
    ) async throws(FerryError) -> Reply {
        let shown = target.redacted
        let job = HTTPRequestJob(hostKey: target.hostKey, maxBody: maxBody)
        configure(
            job.easy, target, headers: headers + (body == nil ? [] : ["Content-Type: application/xml; charset=utf-8"]))
        job.easy.set(CURLOPT_CUSTOMREQUEST, method)
        if let body {
            job.easy.set(CURLOPT_POSTFIELDS, body)
            job.easy.set(CURLOPT_POSTFIELDSIZE_LARGE, large: Int64(body.utf8.count))
        }
        job.easy.set(CURLOPT_ACCEPT_ENCODING, "")
        job.easy.setTimeouts(connect: .seconds(15), stall: .seconds(60))
        let status = try await HTTPFileSystem.performWholeReply(
            job, on: engine, operation: operation, target: shown,
            tooLarge: ("reply too large", "over \(maxBody >> 20) MiB; list a smaller folder"))
        learnAuth(from: job.easy)
        return Reply(status: status, headers: job.headers, body: job.body)
    }

    /// The error for a refused WebDAV request, in the server's words and with
    /// what to do next.
    func failure(_ reply: Reply, method: String, operation: String, target: String) -> FerryError {
        WebDAVFileSystem.failure(
            status: reply.status, reason: reply.headers.reason, body: reply.body, method: method,
            operation: operation, target: target, user: settings.credentials?.user)
    }

    static func failure(
        status: Int, reason: String, body: [UInt8], method: String, operation: String, target: String,
        user: String?
    ) -> FerryError {
        var e = FerryError.http(status: status, reason: reason, operation: operation, target: target)
        if let words = WebDAVMultistatus.errorText(body) {
            e.serverText = [e.serverText, words].compactMap { $0 }.joined(separator: ": ")
        }
        switch status {
        case 401:
            e.detail =
                user.map { "wrong user name or password for \($0)" }
                ?? "the server wants a user name and password (in the URL, FERRY_PASSWORD or ~/.netrc)"
        case 403:
            e.detail = "the server does not allow \(method) here for this user"
        case 405 where method == "PROPFIND":
            e.code = .unsupportedOperation
            e.detail =
                "the server has no WebDAV at this URL (it refuses PROPFIND); check the path "
                + "(Nextcloud and ownCloud: /remote.php/dav/files/USER/)"
        case 405:
            e.detail = "the server does not allow \(method) on this resource"
        case 409:
            e.code = .notFound
            e.detail = "its parent folder is missing; create it first (mkdir -p)"
        case 412:
            e.code = .destinationExists
            e.detail = "the destination exists and was not replaced"
            e.recovery = .replace
        case 423:
            e.code = .permissionDenied
            e.detail = "the file is locked (open in another app, or a lock left behind); try again later"
        case 507:
            e.code = .diskFull
            e.detail = "the server has no space left (disk or quota); free some there and try again"
            e.isTransient = false
        default:
            break
        }
        return e
    }

    /// The per-file failures of a `207` reply to a DELETE, MOVE or COPY, as one
    /// error that names each (nil when every file succeeded).
    func partialFailure(_ reply: Reply, method: String, operation: String, target: String) -> FerryError? {
        guard reply.status == 207, let status = try? WebDAVMultistatus.parse(reply.body, target: target) else {
            return nil
        }
        let failed = status.responses.filter { ($0.status ?? 200) >= 400 }
        guard let first = failed.first else { return nil }
        var e = WebDAVFileSystem.failure(
            status: first.status ?? 500, reason: first.statusText ?? "", body: [], method: method,
            operation: operation, target: target, user: settings.credentials?.user)
        let lines = failed.prefix(20).map { "\($0.path): \($0.status ?? 0) \($0.statusText ?? "")" }
        e.detail =
            "\(failed.count) of the files failed: " + lines.joined(separator: "; ")
            + (failed.count > 20 ? "; ..." : "")
        return e
    }

    // MARK: PROPFIND

    /// The properties every PROPFIND asks for.
    static let propfindBody =
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><D:propfind xmlns:D=\"DAV:\"><D:prop>"
        + "<D:resourcetype/><D:getcontentlength/><D:getlastmodified/><D:getetag/></D:prop></D:propfind>"

    /// PROPFIND of `path` with `depth`; a transient failure (a dropped
    /// connection, a 503) is tried again as FTP's and SFTP's listings are
    /// (`DirectoryListing.retries`).
    func propfind(_ path: String, depth: Int, operation: String) async throws(FerryError) -> WebDAVMultistatus {
        try await DirectoryListing.retries.retrying(
            cancelled: FerryError(.cancelled, operation: operation, target: display(path))
        ) { () async throws(FerryError) in
            try await propfindOnce(path, depth: depth, operation: operation)
        }
    }

    private func propfindOnce(_ path: String, depth: Int, operation: String) async throws(FerryError)
        -> WebDAVMultistatus
    {
        let p = RemotePath.normalize(path)
        let t = target(p, folder: depth > 0)
        let reply = try await request(
            "PROPFIND", t, headers: ["Depth: \(depth)"], body: WebDAVFileSystem.propfindBody,
            maxBody: WebDAVMultistatus.maxBytes, operation: operation)
        guard reply.status == 207 else {
            if reply.status < 300 {
                throw FerryError(
                    .unsupportedOperation, operation: operation, target: t.redacted, serverCode: reply.status,
                    serverText: reply.headers.reason,
                    detail: "the server has no WebDAV at this URL (it answers PROPFIND like a plain GET)")
            }
            throw failure(reply, method: "PROPFIND", operation: operation, target: t.redacted)
        }
        var status = try WebDAVMultistatus.parse(reply.body, target: t.redacted)
        for i in status.responses.indices {
            status.responses[i].path = RemotePath.normalize(status.responses[i].path)
        }
        return status
    }

    /// A PROPFIND response as an entry.
    func entry(_ r: WebDAVMultistatus.Response) -> RemoteEntry {
        let name = RemotePath.name(of: r.path)
        return RemoteEntry(
            name: name, path: r.path, kind: r.isDirectory ? .directory : .file,
            size: r.isDirectory ? nil : r.size, modified: r.modified.map { RemoteTimestamp(utc: $0) },
            isHidden: name.hasPrefix(".") && name != "/")
    }

    /// Lists one folder (PROPFIND `Depth: 1`).
    public func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        let p = RemotePath.normalize(path)
        let status = try await propfind(p, depth: 1, operation: "list")
        var entries: [RemoteEntry] = []
        var sawSelf = false
        for r in status.responses where (r.status ?? 200) < 300 {
            if r.path == p || r.path == RemotePath.normalize(target(p, folder: true).path) {
                sawSelf = true
                if !r.isDirectory {
                    throw FerryError(
                        .notFound, operation: "list", target: display(p), detail: "a file, not a folder")
                }
                continue
            }
            entries.append(entry(r))
        }
        if !sawSelf && entries.isEmpty && status.responses.isEmpty {
            throw FerryError(.notFound, operation: "list", target: display(p), detail: "the server listed nothing")
        }
        return entries
    }

    /// Describes a file or folder (PROPFIND `Depth: 0`): kind, size, time.
    public func stat(_ path: String) async throws(FerryError) -> RemoteEntry {
        try await describe(path).entry
    }

    /// `stat` with the ETag.
    func describe(_ path: String) async throws(FerryError) -> (entry: RemoteEntry, etag: String?) {
        let p = RemotePath.normalize(path)
        let status = try await propfind(p, depth: 0, operation: "stat")
        guard let r = status.responses.first(where: { ($0.status ?? 200) < 300 }) else {
            throw FerryError(.notFound, operation: "stat", target: display(p), detail: "the server described nothing")
        }
        var e = entry(r)
        // The path asked for, whatever form the server's href took.
        e.path = p
        e.name = p == "/" ? "/" : RemotePath.name(of: p)
        return (e, r.etag)
    }

    // MARK: download

    /// Starts downloading `path` with HTTP's `Range` resumes, `If-Range` and retries.
    public func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
        let destination = LocalDestination.prepare(destination, options)
        var opts = options
        opts.verifyTLS = options.verifyTLS && settings.verifyTLS
        return DownloadDriver.start(downloadSource(for: path), to: destination, options: opts)
    }

    func downloadSource(for path: String) -> DownloadSource {
        HTTPDownloadAttempt.source(
            url: target(path), engine: engine, wireScheme: wireScheme, settings: settings)
    }

    // MARK: upload

    /// Starts uploading a local file through the one upload driver
    /// (`ResumableUpload`, `WebDAVUploadTarget`): PUT to `.NAME.ferry-part`
    /// beside the destination, then MOVE into place (`Overwrite: F` unless replacing).
    public func upload(_ source: String, to path: String, options: UploadOptions) -> Transfer {
        let fs = self
        return ResumableUpload.start(
            source, to: path, options: options, display: display,
            // Every path goes on the wire percent-encoded: none needs refusing.
            validate: { _, _, _ throws(FerryError) in },
            target: { _ async throws(FerryError) in WebDAVUploadTarget(fs: fs, createParents: options.createParents) })
    }

    // MARK: changes

    /// Deletes a file (DELETE). A folder is refused: WebDAV would delete it
    /// with everything in it.
    public func delete(_ path: String) async throws(FerryError) {
        let p = RemotePath.normalize(path)
        if try await stat(p).isDirectory {
            throw FerryError(
                .unsupportedOperation, operation: "delete", target: display(p), detail: "a folder; use rmdir")
        }
        try await remove(target(p), operation: "delete", headers: ["Depth: 0"])
    }

    /// Removes an empty folder: a folder with entries is refused before the
    /// DELETE (which would remove them all).
    public func removeDirectory(_ path: String) async throws(FerryError) {
        let p = RemotePath.normalize(path)
        let entries = try await list(p)
        if !entries.isEmpty {
            throw FerryError(
                .directoryNotEmpty, operation: "rmdir", target: display(p),
                detail: "the folder holds \(entries.count) entries; remove them first")
        }
        try await remove(target(p, folder: true), operation: "rmdir", headers: ["Depth: infinity"])
    }

    /// Sends DELETE and reports what failed.
    func remove(_ t: RemoteURL, operation: String, headers: [String]) async throws(FerryError) {
        let reply = try await request("DELETE", t, headers: headers, operation: operation)
        if let partial = partialFailure(reply, method: "DELETE", operation: operation, target: t.redacted) {
            throw partial
        }
        guard reply.status < 300 else {
            throw failure(reply, method: "DELETE", operation: operation, target: t.redacted)
        }
    }

    /// Creates a folder (MKCOL); with `createParents`, each missing level from
    /// the top, and an existing folder is then not an error.
    public func makeDirectory(_ path: String, createParents: Bool) async throws(FerryError) {
        let p = RemotePath.normalize(path)
        if p == "/" && createParents { return }
        guard createParents else {
            // rclone answers MKCOL of an existing folder with success: look first.
            if (try? await stat(p)) != nil {
                throw FerryError(.destinationExists, operation: "mkdir", target: display(p), detail: "that name exists")
            }
            try await mkcol(p, existingIsError: true)
            return
        }
        if let existing = try? await stat(p) {
            guard existing.isDirectory else {
                throw FerryError(
                    .destinationExists, operation: "mkdir", target: display(p), detail: "a file has that name")
            }
            return
        }
        // Up from the parent to the first folder that exists, then MKCOL down:
        // levels above it (a Nextcloud user's folder, `/remote.php`) are never
        // touched, where MKCOL would only be refused.
        var levels = [p]
        var parent = RemotePath.parent(of: p)
        while parent != "/" {
            if let found = try? await stat(parent) {
                guard found.isDirectory else {
                    throw FerryError(
                        .destinationExists, operation: "mkdir", target: display(parent), detail: "a file has that name")
                }
                break
            }
            levels.insert(parent, at: 0)
            parent = RemotePath.parent(of: parent)
        }
        for level in levels {
            try await mkcol(level, existingIsError: false)
        }
        guard try await stat(p).isDirectory else {
            throw FerryError(.destinationExists, operation: "mkdir", target: display(p), detail: "a file has that name")
        }
    }

    /// MKCOL of one folder; `405` means the name is taken.
    private func mkcol(_ p: String, existingIsError: Bool) async throws(FerryError) {
        let t = target(p, folder: true)
        let reply = try await request("MKCOL", t, operation: "mkdir")
        if reply.status < 300 { return }
        if reply.status == 405 || reply.status == 301 {
            guard existingIsError else { return }
            var e = failure(reply, method: "MKCOL", operation: "mkdir", target: t.redacted)
            e.code = .destinationExists
            e.detail = "that name exists"
            throw e
        }
        throw failure(reply, method: "MKCOL", operation: "mkdir", target: t.redacted)
    }

    /// Renames or moves a file or folder (MOVE). A `newPath` without a `/` is a
    /// new name in the same folder. An existing destination is replaced only
    /// with `replacing` (`Overwrite: T`); otherwise the server refuses (`412`).
    public func rename(_ path: String, to newPath: String, replacing: Bool) async throws(FerryError) {
        let from = RemotePath.normalize(path)
        let to = RemotePath.renameTarget(newPath, from: from)
        // A folder is moved by its folder URLs (`/a/`): nginx refuses `/a`.
        let folder = try await stat(from).isDirectory
        try await move(from, to, operation: "rename", replacing: replacing, folder: folder)
    }

    /// MOVE `from` to `to`.
    func move(_ from: String, _ to: String, operation: String, replacing: Bool, folder: Bool = false)
        async throws(FerryError)
    {
        let source = target(from, folder: folder)
        let destination = target(to, folder: folder).wireURL(scheme: wireScheme)
        let reply = try await request(
            "MOVE", source, headers: ["Destination: \(destination)", "Overwrite: \(replacing ? "T" : "F")"],
            operation: operation)
        if let partial = partialFailure(reply, method: "MOVE", operation: operation, target: source.redacted) {
            throw partial
        }
        guard reply.status < 300 else {
            var e = failure(reply, method: "MOVE", operation: operation, target: source.redacted)
            if reply.status == 412 {
                e.target = display(to)
                e.detail = "\(RemotePath.name(of: to)) exists; it is replaced only when told to"
            }
            throw e
        }
    }
}

/// What a server's `401` offered, learnt by the first request that logged in:
/// Basic alone means later requests send it at once.
final class WebDAVAuthMemo: Sendable {
    private let basic = Mutex(false)

    var basicOnly: Bool { basic.withLock { $0 } }

    func learnBasic() { basic.withLock { $0 = true } }
}
