import CCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// SFTP (`sftp://[USER[:PASS]@]HOST[:PORT]/PATH`) as a remote file system, on
/// the shared engine: libcurl's SFTP over libssh2, one logged-in SSH connection
/// reused by successive operations, and the per-host connection limit.
///
/// Login tries key files, the ssh-agent, then a password, as OpenSSH does
/// (`SSHLogin`); the host key is checked by the `HostKeyPolicy` in the options.
/// Errors keep libcurl's text for the SFTP status ("rm command failed: No such
/// file or directory") with the status number, the operation and the redacted URL.
public struct SFTPFileSystem: RemoteFileSystem, DownloadSourceFactory {
    /// The URL this file system was opened with.
    public let url: RemoteURL
    let endpoint: SFTPEndpoint

    /// Opens an `sftp://` URL.
    ///
    /// - Parameters:
    ///   - url: The server; its path is where relative operations start.
    ///   - options: Credentials (else from the URL, `FERRY_PASSWORD` or `~/.netrc`),
    ///     the key file (`identityFile`, else `~/.ssh/id_*`), and the host key
    ///     policy; `verifyTLS == false` turns the host key check off.
    public init(url: RemoteURL, options: ConnectionOptions = .init()) {
        self.init(url: url, options: options, engine: .shared)
    }

    init(url: RemoteURL, options: ConnectionOptions, engine: CurlEngine) {
        self.url = url
        // A Host alias in ~/.ssh/config (or the system's) decides the real host,
        // port, user, keys, known_hosts files and jump hosts, as for `ssh nas`.
        let home = EnvironmentLookup(nil)["HOME"] ?? NSHomeDirectory()
        let userConfig = home + "/.ssh/config"
        let config = SSHClientConfig.settings(
            host: url.host, files: [userConfig, SSHClientConfig.systemFile], home: home,
            localUser: EnvironmentLookup(nil)["USER"] ?? NSUserName())
        var server = url.server
        if let name = config.hostName, !name.isEmpty { server.host = name }
        if url.port == nil, let port = config.port { server.port = port }
        let login = SSHLogin.resolve(url: url, options: options, config: config)
        // `ssh` reads the account's own ~/.ssh/config; another HOME's is given as -F.
        let accountHome = getpwuid(geteuid())?.pointee.pw_dir.map { String(cString: $0) } ?? NSHomeDirectory()
        let accountConfig = accountHome + "/.ssh/config"
        let otherConfig =
            userConfig != accountConfig && FileManager.default.fileExists(atPath: userConfig) ? userConfig : nil
        let proxy = config.proxy.map {
            SSHProxy.make(
                $0, host: server.host, port: server.port ?? 22, user: login.user, alias: url.host,
                configFile: otherConfig, acceptNewHostKey: options.verifyTLS && options.hostKeys.acceptNew)
        }
        // Another HOME without a config of its own: ssh must not read the account's.
        let sshConfig =
            otherConfig
            ?? (userConfig == accountConfig
                ? nil
                : FileManager.default.fileExists(atPath: SSHClientConfig.systemFile)
                    ? SSHClientConfig.systemFile : "/dev/null")
        endpoint = SFTPEndpoint(
            url: server, login: login,
            hostKeys: options.verifyTLS ? options.hostKeys.applying(config) : .insecure, engine: engine, proxy: proxy,
            openSSH: options.sshTransport == .libssh2
                ? nil
                : .init(
                    transport: options.sshTransport, alias: url.host, port: url.port, configFile: sshConfig,
                    maxConnections: options.maxConnections))
    }

    init(url: RemoteURL, endpoint: SFTPEndpoint) {
        self.url = url
        self.endpoint = endpoint
    }

    // MARK: login

    /// The login method that works for this server and user, found by trying
    /// each in OpenSSH's order on a new connection (kept for the operations).
    func loginMethod(for operation: String, _ path: String) async throws(FerryError) -> SSHLogin.Method {
        let endpoint = self.endpoint
        do {
            return try await SSHMethodCache.shared.method(for: endpoint.methodKey) { () async throws(FerryError) in
                var tried: [SSHLogin.Method] = []
                for method in endpoint.login.methods {
                    let job = SFTPCommandJob(endpoint: endpoint, path: "/", method: method)
                    job.quote([])
                    let completion = await endpoint.engine.perform(job)
                    if completion.code == .ok && !completion.interrupted { return method }
                    tried.append(method)
                    if completion.code == .loginDenied && job.hostKeys?.error(operation: "", target: "") == nil {
                        continue
                    }
                    throw FerryError.sftp(completion, hostKeys: job.hostKeys, operation: "connect", target: "")
                }
                throw FerryError(
                    .authenticationFailed, serverText: "Authentication failure",
                    detail: endpoint.login.refusal(tried: tried))
            }
        } catch {
            var e = error
            e.operation = operation
            e.target = endpoint.display(path)
            throw e
        }
    }

    /// Runs one request and throws its error.
    @discardableResult
    func run(_ job: SFTPCommandJob, operation: String, path: String) async throws(FerryError) -> SFTPCommandJob {
        let completion = await endpoint.engine.perform(job)
        if completion.interrupted || completion.code != .ok {
            throw FerryError.sftp(
                completion, hostKeys: job.hostKeys, operation: operation, target: endpoint.display(path),
                login: endpoint.login)
        }
        return job
    }

    /// A request for `path` with the working login method.
    func job(_ operation: String, _ path: String, urlPath: String? = nil, maxBody: Int = 64 << 10)
        async throws(FerryError) -> SFTPCommandJob
    {
        let method = try await loginMethod(for: operation, path)
        return SFTPCommandJob(endpoint: endpoint, path: urlPath ?? path, method: method, maxBody: maxBody)
    }

    // MARK: list

    /// Lists one folder (libcurl's `ls -l`-style lines, read by the Unix listing parser).
    public func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        try await listing(path).entries
    }

    /// Lists one folder and tells how many lines could not be read. A dropped
    /// connection (an SSH server's `MaxStartups` turns away new connections
    /// beyond its limit) is tried again a few times with a doubling pause.
    public func listing(_ path: String) async throws(FerryError) -> DirectoryListing {
        try await DirectoryListing.retrying(endpoint.display(path)) { () async throws(FerryError) in
            try await listingOnce(path)
        }
    }

    private func listingOnce(_ path: String) async throws(FerryError) -> DirectoryListing {
        let folder = RemotePath.normalize(path)
        try SFTPEndpoint.validate(folder, operation: "list", display: endpoint.display(folder))
        let job = try await job("list", folder, urlPath: folder == "/" ? "/" : folder + "/", maxBody: 256 << 20)
        let completion = await endpoint.engine.perform(job)
        if job.tooLarge {
            throw FerryError(
                .badListing, operation: "list", target: endpoint.display(folder), detail: "listing over 256 MiB")
        }
        guard completion.code == .ok && !completion.interrupted else {
            throw FerryError.sftp(
                completion, hostKeys: job.hostKeys, operation: "list", target: endpoint.display(folder),
                login: endpoint.login)
        }
        return DirectoryListing.parseLongListing(job.text, folder: folder, now: Date())
    }

    // MARK: stat

    /// Describes a file or folder: its size and exact time (SFTP `stat`).
    public func stat(_ path: String) async throws(FerryError) -> RemoteEntry {
        try await entry(path)
    }

    /// `stat` with a typed error. A folder is told by opening it as one (servers
    /// differ on `stat` of `name/` for a file: OpenSSH refuses it, others drop the
    /// slash); a file's size and time come from opening it.
    func entry(_ path: String) async throws(FerryError) -> RemoteEntry {
        let p = RemotePath.normalize(path)
        try SFTPEndpoint.validate(p, operation: "stat", display: endpoint.display(p))
        if p == "/" { return RemoteEntry(name: "/", path: p, kind: .directory) }
        let name = RemotePath.name(of: p)
        let folder = try await job("stat", p, urlPath: p + "/", maxBody: 64 << 10)
        folder.easy.set(CURLOPT_FILETIME, 1)
        let listed = await endpoint.engine.perform(folder)
        if folder.tooLarge || (listed.code == .ok && !listed.interrupted) {
            return RemoteEntry(
                name: name, path: p, kind: .directory,
                modified: folder.fileTime >= 0
                    ? RemoteTimestamp(utc: Date(timeIntervalSince1970: TimeInterval(folder.fileTime))) : nil)
        }
        let refused = FerryError.sftp(
            listed, hostKeys: folder.hostKeys, operation: "stat", target: endpoint.display(p), login: endpoint.login)
        // Only an SFTP status ("not a directory", "no such file") means "try it as a file".
        guard refused.serverCode != nil, !listed.interrupted else { throw refused }
        let file = try await job("stat", p)
        file.quote([])
        file.easy.set(CURLOPT_FILETIME, 1)
        try await run(file, operation: "stat", path: p)
        return RemoteEntry(
            name: name, path: p, kind: .file, size: file.contentLength >= 0 ? file.contentLength : nil,
            modified: file.fileTime >= 0
                ? RemoteTimestamp(utc: Date(timeIntervalSince1970: TimeInterval(file.fileTime))) : nil)
    }

    // MARK: download

    /// Starts downloading `path` through the shared download driver, resuming a
    /// `.part` from its length when the file's size and time are unchanged.
    public func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
        // `~` expanded and missing folders made (`createParents`), as every backend does.
        let destination = LocalDestination.prepare(destination, options)
        let p = RemotePath.normalize(path)
        do {
            try SFTPEndpoint.validate(p, operation: "download", display: endpoint.display(p))
        } catch {
            return Transfer.failed(error, source: endpoint.display(p), destination: destination)
        }
        return startDownload(p, to: destination, options: options)
    }

    func downloadSource(for path: String) -> DownloadSource {
        source(RemotePath.normalize(path), method: nil)
    }

    // MARK: upload

    /// Starts uploading a local file: to `.NAME.ferry-part` then renamed, resuming
    /// an interrupted upload by appending after its last bytes were compared.
    public func upload(_ source: String, to path: String, options: UploadOptions) -> Transfer {
        let fs = self
        return ResumableUpload.start(
            source, to: path, options: options, display: endpoint.display,
            validate: SFTPEndpoint.validate(_:operation:display:),
            target: { p async throws(FerryError) in
                SFTPUploadTarget(fs: fs, method: try await fs.loginMethod(for: "upload", p))
            })
    }

    // MARK: changes

    /// Deletes a file (`rm`).
    public func delete(_ path: String) async throws(FerryError) {
        try await command("delete", path) { ["rm " + $0] }
    }

    /// Creates a folder (`mkdir`); with `createParents`, the missing folders above
    /// it too, and an existing folder is then not an error.
    public func makeDirectory(_ path: String, createParents: Bool) async throws(FerryError) {
        let p = RemotePath.normalize(path)
        if createParents {
            try SFTPEndpoint.validate(p, operation: "mkdir", display: endpoint.display(p))
            var prefixes: [String] = []
            var current = ""
            for part in p.split(separator: "/") {
                current += "/" + part
                prefixes.append(current)
            }
            let job = try await job("mkdir", p, urlPath: "/")
            job.quote(prefixes.map { "mkdir " + SFTPEndpoint.quoted($0) }, tolerant: true)
            try await run(job, operation: "mkdir", path: p)
            let made = try await entry(p)
            guard made.isDirectory else {
                throw FerryError(
                    .destinationExists, operation: "mkdir", target: endpoint.display(p), detail: "a file has that name")
            }
            return
        }
        do {
            try await command("mkdir", p) { ["mkdir " + $0] }
        } catch {
            // OpenSSH answers a bare "Operation failed": say whether the name is taken.
            var e = error
            if e.code == .serverError, (try? await entry(p)) != nil { e.code = .destinationExists }
            throw e
        }
    }

    /// Removes an empty folder (`rmdir`). A folder that is not empty fails with
    /// the server's status and the code `directoryNotEmpty`.
    public func removeDirectory(_ path: String) async throws(FerryError) {
        let p = RemotePath.normalize(path)
        do {
            try await command("rmdir", p) { ["rmdir " + $0] }
        } catch {
            var e = error
            if e.code == .serverError, let entries = try? await listing(p).entries, !entries.isEmpty {
                e.code = .directoryNotEmpty
                e.detail = "the folder holds \(entries.count) entries; remove them first"
            }
            throw e
        }
    }

    /// Renames or moves a file or folder (`rename`). A `newPath` without a `/` is
    /// a new name in the same folder. An existing destination is replaced only
    /// with `replacing` (SFTP version 3's rename itself refuses).
    public func rename(_ path: String, to newPath: String, replacing: Bool) async throws(FerryError) {
        let from = RemotePath.normalize(path)
        let to = RemotePath.renameTarget(newPath, from: from)
        try await rename(from, to, operation: "rename", replacing: replacing)
    }

    func rename(_ from: String, _ to: String, operation: String, replacing: Bool = false) async throws(FerryError) {
        try SFTPEndpoint.validate(to, operation: operation, display: endpoint.display(to))
        do {
            try await command(operation, from) {
                [(replacing ? "*rm " + SFTPEndpoint.quoted(to) : nil), "rename " + $0 + " " + SFTPEndpoint.quoted(to)]
                    .compactMap { $0 }
            }
        } catch {
            var e = error
            if e.code == .serverError, (try? await entry(to)) != nil {
                e.code = .destinationExists
                e.detail = "\(RemotePath.name(of: to)) exists; SFTP does not replace it"
                e.recovery = .replace
            }
            throw e
        }
    }

    /// Sends quote commands made from the path's quoted form; any refusal throws.
    private func command(_ operation: String, _ path: String, _ make: (String) -> [String]) async throws(FerryError) {
        let p = RemotePath.normalize(path)
        try SFTPEndpoint.validate(p, operation: operation, display: endpoint.display(p))
        let job = try await job(operation, p, urlPath: "/")
        job.quote(make(SFTPEndpoint.quoted(p)))
        try await run(job, operation: operation, path: p)
    }
}
