import CCurl
import Foundation

/// FTP and FTPS as a remote file system: `ftp://` (plain), `ftps://` (implicit
/// TLS, port 990) and `ftpes://` (explicit TLS: AUTH TLS on port 21).
///
/// Every operation runs on the shared transfer engine, so successive operations
/// on one server reuse one logged-in control connection. Errors keep the server's
/// reply ("550 No such file or directory.") with the operation and the redacted URL.
///
/// Paths are relative to the login folder (see `FTPEndpoint`).
public struct FTPFileSystem: RemoteFileSystem, DownloadSourceFactory {
    /// The URL this file system was opened with.
    public let url: RemoteURL
    let endpoint: FTPEndpoint

    /// Opens an `ftp://`, `ftps://` or `ftpes://` URL.
    ///
    /// - Parameters:
    ///   - url: The server; its path is where relative operations start.
    ///   - options: TLS verification, CA file and credentials. Without credentials
    ///     in the options, they come from the URL (or, with `resolveCredentials`,
    ///     from `FERRY_USER`/`FERRY_PASSWORD` or `~/.netrc` too); with none at all
    ///     the login is anonymous.
    public init(url: RemoteURL, options: ConnectionOptions = .init()) {
        self.init(url: url, options: options, engine: .shared)
    }

    init(url: RemoteURL, options: ConnectionOptions, engine: CurlEngine) {
        self.url = url
        endpoint = FTPEndpoint(
            url: url.server, credentials: options.credentials(for: url), verifyTLS: options.verifyTLS,
            caFile: options.caCertificateFile, engine: engine)
    }

    /// The server's features and login folder, asked once per process.
    func serverInfo() async throws(FerryError) -> FTPServerInfo {
        let endpoint = self.endpoint
        return try await FTPServerInfoCache.shared.info(for: endpoint.serverKey) { () async throws(FerryError) in
            let job = FTPCommandJob(endpoint: endpoint, path: "/")
            job.freshConnection()
            job.quote(["FEAT"])
            try await endpoint.run(job, operation: "connect", path: "/")
            return FTPServerInfo(
                features: FTPServerInfo.features(fromFEAT: job.log.reply(to: "FEAT")),
                entryPath: job.entryPath ?? "/")
        }
    }

    /// `serverInfo()` for an operation: a failed first login is reported as that
    /// operation on that path ("list ftp://ann@host/pub: 530 Login incorrect.").
    func serverInfo(for operation: String, _ path: String) async throws(FerryError) -> FTPServerInfo {
        do {
            return try await serverInfo()
        } catch {
            var e = error
            e.operation = operation
            e.target = endpoint.display(path)
            throw e
        }
    }

    // MARK: list

    /// Lists one folder with `MLSD` when the server offers it, else `LIST`.
    public func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        try await listing(path).entries
    }

    /// Lists one folder and tells how many lines could not be read.
    ///
    /// A transient failure (a reset or dropped control connection, `421` from a
    /// server that allows only so many connections per address, `425`/`426`/`450`)
    /// is tried again (`DirectoryListing.retries`) with a doubling pause: `get -r`
    /// lists several folders at once, and one refused listing would fail the tree.
    public func listing(_ path: String) async throws(FerryError) -> DirectoryListing {
        try await DirectoryListing.retrying(endpoint.display(path)) { () async throws(FerryError) in
            try await listingOnce(path)
        }
    }

    private func listingOnce(_ path: String) async throws(FerryError) -> DirectoryListing {
        let folder = RemotePath.normalize(path)
        try FTPEndpoint.validate(folder, operation: "list", display: endpoint.display(folder))
        let info = try await serverInfo(for: "list", folder)
        let urlPath = folder == "/" || folder == "//" ? folder : folder + "/"
        if info.usesMLSD {
            let (completion, job) = await fetchListing(urlPath, command: "MLSD")
            if completion.code == .ok && !completion.interrupted {
                return FTPListingParser.parseMLSD(job.text, folder: folder)
            }
            if Self.emptyFolderRefused(completion, job) { return DirectoryListing() }
            if let refused = job.log.lastReply(verb: "MLSD"), [500, 501, 502, 504].contains(refused.code) {
                // FEAT promised MLST but MLSD is not there: remember, and use LIST.
                FTPServerInfoCache.shared.update(endpoint.serverKey) { $0.mlsdRefused = true }
            } else {
                throw listError(completion, job, folder)
            }
        }
        let (completion, job) = await fetchListing(urlPath, command: nil)
        if Self.emptyFolderRefused(completion, job) { return DirectoryListing() }
        guard completion.code == .ok && !completion.interrupted else { throw listError(completion, job, folder) }
        return FTPListingParser.parseLIST(job.text, folder: folder, now: Date())
    }

    /// Whether a listing failed only because the folder is empty: some servers
    /// (embedded ones, some Windows servers) answer `LIST` or `MLSD` of an empty
    /// folder with "550 No files found". libcurl sends the listing command only
    /// after the `CWD` into the folder worked, so the folder is there; a folder
    /// that is not fails at its `CWD`, and a 550 that says "denied" stays an error.
    static func emptyFolderRefused(_ completion: CurlCompletion, _ job: FTPCommandJob) -> Bool {
        guard completion.code != .ok, !completion.interrupted, !job.tooLarge, let failure = job.log.failure,
            failure.code == 550, failure.verb == "LIST" || failure.verb == "MLSD"
        else { return false }
        return FerryError.classify550(LowercaseASCII(failure.text)) == .notFound
    }

    /// Runs one listing request (`command` nil: LIST).
    private func fetchListing(_ urlPath: String, command: String?) async -> (CurlCompletion, FTPCommandJob) {
        let job = FTPCommandJob(endpoint: endpoint, path: urlPath, maxBody: 256 << 20)
        if let command { job.easy.set(CURLOPT_CUSTOMREQUEST, command) }
        return (await endpoint.engine.perform(job), job)
    }

    private func listError(_ completion: CurlCompletion, _ job: FTPCommandJob, _ folder: String) -> FerryError {
        if job.tooLarge {
            return FerryError(
                .badListing, operation: "list", target: endpoint.display(folder), detail: "listing over 256 MiB")
        }
        return .ftp(completion, log: job.log, operation: "list", target: endpoint.display(folder))
    }

    // MARK: stat

    /// Describes a file or folder: `MLST` when offered, else `SIZE` and `MDTM`
    /// (and a `CWD` to tell a folder).
    public func stat(_ path: String) async throws(FerryError) -> RemoteEntry {
        try await entry(path)
    }

    /// `stat` with a typed error.
    func entry(_ path: String) async throws(FerryError) -> RemoteEntry {
        let p = RemotePath.normalize(path)
        let display = endpoint.display(p)
        try FTPEndpoint.validate(p, operation: "stat", display: display)
        if p == "/" || p == "//" { return RemoteEntry(name: "/", path: p, kind: .directory) }
        let info = try await serverInfo(for: "stat", p)
        let name = RemotePath.name(of: p)
        if info.hasMLST {
            let command = "MLST " + FTPEndpoint.serverPath(p, entryPath: info.entryPath)
            if let reply = try await endpoint.quote([command], operation: "stat", path: p)[0] {
                if reply.code == 250 {
                    let factLine = reply.lines.first { $0.hasPrefix(" ") }
                    if let factLine, var e = FTPListingParser.parseMLSDLine(Substring(factLine), folder: "/") {
                        e.name = name
                        e.path = p
                        return e
                    }
                } else if ![500, 501, 502, 504].contains(reply.code) {
                    throw FerryError.ftp(reply, operation: "stat", target: display)
                }
            }
        }
        // SIZE and MDTM: libcurl asks both for a body-less request with FILETIME.
        // libcurl hands the answers to the body callback too, as header text: let them in.
        let file = FTPCommandJob(endpoint: endpoint, path: p, maxBody: 64 << 10)
        file.easy.set(CURLOPT_NOBODY, 1)
        file.easy.set(CURLOPT_FILETIME, 1)
        let completion = await endpoint.engine.perform(file)
        if completion.interrupted { throw FerryError(.cancelled, operation: "stat", target: display) }
        if completion.code == .ok {
            guard file.log.lastReply(verb: "SIZE")?.code == 213 || file.log.lastReply(verb: "MDTM")?.code == 213
            else {
                // Neither SIZE nor MDTM answered (a server without them): libcurl's
                // request succeeds for any name then, file, folder or nothing at all.
                return try await listedEntry(p)
            }
            return RemoteEntry(
                name: name, path: p, kind: .file, size: file.contentLength >= 0 ? file.contentLength : nil,
                modified: file.fileTime >= 0
                    ? RemoteTimestamp(utc: Date(timeIntervalSince1970: TimeInterval(file.fileTime))) : nil)
        }
        let fileError = FerryError.ftp(completion, log: file.log, operation: "stat", target: display)
        guard fileError.serverCode != nil, !fileError.isTransient else { throw fileError }
        // Not a file: a folder if we can change into it.
        let folder = FTPCommandJob(endpoint: endpoint, path: p + "/", maxBody: 64 << 10)
        folder.easy.set(CURLOPT_NOBODY, 1)
        let c2 = await endpoint.engine.perform(folder)
        if c2.code == .ok && !c2.interrupted { return RemoteEntry(name: name, path: p, kind: .directory) }
        throw fileError
    }

    /// `stat` by the listing of the parent folder, for servers that answer
    /// neither `SIZE` nor `MDTM` nor `MLST`.
    private func listedEntry(_ p: String) async throws(FerryError) -> RemoteEntry {
        let display = endpoint.display(p)
        let parent = RemotePath.parent(of: p)
        let name = RemotePath.name(of: p)
        let entries: [RemoteEntry]
        do {
            entries = try await listing(parent).entries
        } catch {
            var e = error
            e.operation = "stat"
            e.target = display
            throw e
        }
        guard var entry = entries.first(where: { $0.name == name }) else {
            throw FerryError(
                .notFound, operation: "stat", target: display,
                detail: "not in the listing of \(parent) (the server has no SIZE or MDTM)")
        }
        entry.path = p
        return entry
    }

    // MARK: download

    /// Starts downloading `path`, resuming a `.part` left by an earlier run (REST).
    public func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
        download(path, listed: nil, to: destination, options: options)
    }

    /// Starts downloading a listed file: a fresh download takes its size (and, from
    /// an `MLSD` listing, its exact time) from the listing instead of `SIZE` and
    /// `MDTM` (`FTPListedFacts`).
    public func download(_ entry: RemoteEntry, to destination: String, options: DownloadOptions) -> Transfer {
        download(entry.path, listed: FTPListedFacts(entry).map(ListedFacts.init), to: destination, options: options)
    }

    private func download(
        _ path: String, listed: ListedFacts<FTPListedFacts>?, to destination: String, options: DownloadOptions
    )
        -> Transfer
    {
        let destination = LocalDestination.prepare(destination, options)
        let p = RemotePath.normalize(path)
        do {
            try FTPEndpoint.validate(p, operation: "download", display: endpoint.display(p))
        } catch {
            return Transfer.failed(error, source: endpoint.display(p), destination: destination)
        }
        var opts = options
        opts.verifyTLS = options.verifyTLS && endpoint.verifyTLS
        return DownloadDriver.start(
            downloadSource(for: p, verifyTLS: opts.verifyTLS, listed: listed), to: destination, options: opts)
    }

    func downloadSource(for path: String) -> DownloadSource {
        downloadSource(for: path, verifyTLS: endpoint.verifyTLS, listed: nil)
    }

    private func downloadSource(for path: String, verifyTLS: Bool, listed: ListedFacts<FTPListedFacts>?)
        -> DownloadSource
    {
        let e = endpoint
        return FTPDownloadAttempt.source(
            endpoint: FTPEndpoint(
                url: e.url, credentials: e.credentials, verifyTLS: verifyTLS, caFile: e.caFile, engine: e.engine),
            path: RemotePath.normalize(path), listed: listed)
    }

    // MARK: upload

    /// Starts uploading a local file: to `.NAME.ferry-part` then renamed, resuming
    /// an interrupted upload with `APPE`, after the overwrite policy allowed it.
    public func upload(_ source: String, to path: String, options: UploadOptions) -> Transfer {
        let e = endpoint
        let fs =
            options.verifyTLS
            ? self
            : FTPFileSystem(
                url: url,
                endpoint: FTPEndpoint(
                    url: e.url, credentials: e.credentials, verifyTLS: false, caFile: e.caFile, engine: e.engine))
        return ResumableUpload.start(
            source, to: path, options: options, display: e.display,
            validate: FTPEndpoint.validate(_:operation:display:), target: { _ in FTPUploadTarget(fs: fs) })
    }

    private init(url: RemoteURL, endpoint: FTPEndpoint) {
        self.url = url
        self.endpoint = endpoint
    }

    // MARK: changes

    /// Deletes a file (`DELE`).
    public func delete(_ path: String) async throws(FerryError) {
        try await command("delete", path) { "DELE " + $0 }
    }

    /// Creates a folder (`MKD`); with `createParents`, the missing folders above it
    /// too, and an existing folder is then not an error.
    public func makeDirectory(_ path: String, createParents: Bool) async throws(FerryError) {
        let p = RemotePath.normalize(path)
        if createParents {
            try FTPEndpoint.validate(p, operation: "mkdir", display: endpoint.display(p))
            // libcurl CWDs into each folder of the URL and creates the ones it cannot enter.
            let job = FTPCommandJob(endpoint: endpoint, path: p + "/")
            job.easy.set(CURLOPT_NOBODY, 1)
            job.easy.set(CURLOPT_FTP_CREATE_MISSING_DIRS, Int(CURLFTP_CREATE_DIR_RETRY.rawValue))
            try await endpoint.run(job, operation: "mkdir", path: p)
            return
        }
        try await makeOneDirectory(p)
    }

    private func makeOneDirectory(_ p: String) async throws(FerryError) {
        do {
            try await command("mkdir", p) { "MKD " + $0 }
        } catch {
            guard error.code == .notFound || error.code == .serverError else { throw error }
            // Some servers answer a bare "550 Create directory operation failed.":
            // say whether the name is already taken.
            var e = error
            if (try? await entry(p)) != nil { e.code = .destinationExists }
            throw e
        }
    }

    /// Removes an empty folder (`RMD`). A folder that is not empty fails with the
    /// server's reply and the code `directoryNotEmpty`.
    public func removeDirectory(_ path: String) async throws(FerryError) {
        try await removeOneDirectory(RemotePath.normalize(path))
    }

    private func removeOneDirectory(_ p: String) async throws(FerryError) {
        do {
            try await command("rmdir", p) { "RMD " + $0 }
        } catch {
            guard error.serverCode == 550 && error.code == .notFound else { throw error }
            // Servers such as vsftpd give one text for every RMD failure.
            var e = error
            if let entries = try? await listing(p).entries, !entries.isEmpty { e.code = .directoryNotEmpty }
            throw e
        }
    }

    /// Renames or moves a file or folder (`RNFR` + `RNTO`). A `newPath` without a
    /// `/` is a new name in the same folder.
    ///
    /// `RNTO` replaces an existing file on servers built on rename(2) (vsftpd,
    /// proftpd, pyftpdlib) and refuses on others, so without `replacing` the new
    /// name is looked up first and a taken one fails with `destinationExists`
    /// before anything is sent. (A file created between the look and the rename
    /// can still be replaced: FTP has no rename that refuses.)
    public func rename(_ path: String, to newPath: String, replacing: Bool) async throws(FerryError) {
        let from = RemotePath.normalize(path)
        let to = RemotePath.renameTarget(newPath, from: from)
        if !replacing && to != from {
            try FTPEndpoint.validate(to, operation: "rename", display: endpoint.display(to))
            let existing: RemoteEntry?
            do {
                existing = try await entry(to)
            } catch  where error.code == .notFound {
                existing = nil
            } catch {
                var e = error
                e.operation = "rename"
                e.detail = [
                    e.detail, "could not tell whether \(RemotePath.name(of: to)) exists, so nothing was renamed",
                ]
                .compactMap { $0 }.joined(separator: "; ")
                throw e
            }
            if let existing {
                throw FerryError(
                    .destinationExists, operation: "rename", target: endpoint.display(to),
                    detail:
                        "\(existing.kind == .directory ? "a folder" : "a file") named \(existing.name) is there already",
                    recovery: .replace)
            }
        }
        try await rename(from, to, operation: "rename")
    }

    func rename(_ from: String, _ to: String, operation: String) async throws(FerryError) {
        let display = endpoint.display(from)
        try FTPEndpoint.validate(from, operation: operation, display: display)
        try FTPEndpoint.validate(to, operation: operation, display: endpoint.display(to))
        let info = try await serverInfo(for: operation, from)
        let rnfr = "RNFR " + FTPEndpoint.serverPath(from, entryPath: info.entryPath)
        let rnto = "RNTO " + FTPEndpoint.serverPath(to, entryPath: info.entryPath)
        let replies = try await endpoint.quote([rnfr, rnto], operation: operation, path: from)
        guard let first = replies[0], first.code == 350 else {
            throw Self.commandError(replies[0], operation: operation, display: display)
        }
        guard let second = replies[1], second.code < 400 else {
            throw Self.commandError(replies[1], operation: operation, display: endpoint.display(to))
        }
    }

    /// Sends one path command and requires a success reply.
    private func command(_ operation: String, _ path: String, _ make: (String) -> String) async throws(FerryError) {
        let p = RemotePath.normalize(path)
        let display = endpoint.display(p)
        try FTPEndpoint.validate(p, operation: operation, display: display)
        let info = try await serverInfo(for: operation, p)
        let cmd = make(FTPEndpoint.serverPath(p, entryPath: info.entryPath))
        let reply = try await endpoint.quote([cmd], operation: operation, path: p)[0]
        guard let reply, reply.code < 400 else {
            throw Self.commandError(reply, operation: operation, display: display)
        }
    }

    static func commandError(_ reply: FTPReply?, operation: String, display: String) -> FerryError {
        guard let reply else {
            return FerryError(
                .protocolError, operation: operation, target: display, detail: "the server did not answer")
        }
        return FerryError.ftp(reply, operation: operation, target: display)
    }
}
