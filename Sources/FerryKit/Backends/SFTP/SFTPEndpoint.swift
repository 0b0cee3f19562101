import CCurl
import Foundation

/// One SFTP server as Ferry talks to it: login, host key policy, and how Ferry's
/// paths become URLs and quote-command arguments.
///
/// Paths are absolute on the server, as in curl (`sftp://host/etc/motd` is
/// `/etc/motd`); `sftp://host/~/notes.txt` is `notes.txt` in the login folder.
/// Ferry's path helpers are FTP's (`RemotePath.normalize`, `parent`, `name`).
struct SFTPEndpoint: Sendable {
    /// The server (host, port, user for messages); the path is ignored.
    let url: RemoteURL
    let login: SSHLogin
    let hostKeys: HostKeyPolicy
    let engine: CurlEngine
    /// How the connection reaches the server, when `ssh_config` puts it behind
    /// a `ProxyJump` or `ProxyCommand`; nil: directly.
    let proxy: SSHProxy?
    /// How OpenSSH's `ssh` would reach the same server, for the transfers it
    /// carries (`SFTPOpenSSH`); nil: libssh2 only.
    let openSSH: OpenSSHRoute?

    /// What `SFTPOpenSSH.make` needs besides the login method.
    struct OpenSSHRoute: Sendable {
        var transport: SSHTransport
        /// The host as the URL names it (a `Host` alias), and the URL's own port.
        var alias: String
        var port: Int?
        var configFile: String?
        var maxConnections: Int?
        /// The pool found for each login method (nil: libssh2's), so a tree's
        /// files do not build the command again one by one.
        let pools = Registry<SSHLogin.Method, SFTPChannelPool?>()
    }

    /// The pool of OpenSSH channels for `method`, nil when the transfers go by libssh2.
    func openSSHPool(for method: SSHLogin.Method) -> SFTPChannelPool? {
        guard let route = openSSH else { return nil }
        return route.pools.value(for: method) {
            let knownHosts = hostKeys.file().map { [$0] + hostKeys.otherFiles() } ?? []
            guard
                let command = SFTPOpenSSH.make(
                    transport: route.transport, method: method, user: login.user, alias: route.alias,
                    port: route.port, configFile: route.configFile, knownHosts: knownHosts,
                    connectTimeout: .seconds(15))
            else { return nil }
            return SFTPChannelPool.shared(command, size: route.maxConnections)
        }
    }

    var hostKey: String { url.hostKey }

    /// Where a handle keeps and finds idle SSH connections: one lane
    /// (`ConnectionLane`: a connection cache of its own) per server *and* host
    /// key policy. libcurl reuses an SSH connection for any handle with the same
    /// host, port, user, password and key files: it does not compare the
    /// known_hosts setting, and a reused connection never calls the key callback.
    /// Without lanes, a connection opened with the check off (`--insecure`) or
    /// against another known_hosts file served a later request that asked for a
    /// check. Each running job gets a lane no other running job of its key uses,
    /// so `-j 4` still gets four connections, each reused file after file.
    let connectionCache: TLSSessionCache

    init(
        url: RemoteURL, login: SSHLogin, hostKeys: HostKeyPolicy, engine: CurlEngine, proxy: SSHProxy? = nil,
        openSSH: OpenSSHRoute? = nil
    ) {
        self.url = url
        self.login = login
        self.hostKeys = hostKeys
        self.engine = engine
        self.proxy = proxy
        self.openSSH = openSSH
        // A proxied connection is another lane: never served to a direct one.
        connectionCache = .lane(
            "sftp|\(url.hostKey)|" + hostKeys.identity()
                + (proxy.map { "|" + $0.arguments.joined(separator: " ") } ?? ""))
    }
    /// The key of the login-method cache: server, user and the methods on offer.
    var methodKey: String { "\(url.hostKey)|\(login.user)|\(login.methods)" }

    /// The redacted URL of a path, for messages.
    func display(_ path: String) -> String { url.with(path: path).redacted }

    /// Sets the URL, login and every connection option on a handle, and returns
    /// what the job must keep: the host key check (nil when the check is off)
    /// and the proxy (nil for a direct connection).
    ///
    /// Every handle of one server gets the same options, so libcurl reuses one
    /// logged-in SSH connection for all of them.
    func configure(_ easy: EasyHandle, path: String, method: SSHLogin.Method, stallTimeout: Duration? = nil)
        -> SSHConnectionChecks
    {
        precondition(easy.tlsSessionCache == connectionCache, "an SFTP handle made for another connection cache")
        easy.set(CURLOPT_URL, url.with(path: path).wireURL())
        login.configure(easy, method: method)
        var check: HostKeyCheck?
        if let file = hostKeys.file() {
            let c = HostKeyCheck(
                file: file, acceptNew: hostKeys.acceptNew, host: url.host, port: url.port ?? 22,
                hash: hostKeys.hashRecordedHosts, configFiles: hostKeys.acceptNew ? hostKeys.configFiles() : [],
                otherFiles: hostKeys.otherFiles())
            c.install(on: easy)
            check = c
        }
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, 15_000)
        let stallSeconds = stallTimeout.map { max(1, Int($0 / .seconds(1))) }
        easy.set(CURLOPT_LOW_SPEED_LIMIT, 1)
        easy.set(CURLOPT_LOW_SPEED_TIME, stallSeconds ?? 30)
        easy.set(CURLOPT_TCP_KEEPALIVE, 1)
        // libssh2 keeps up to a buffer's worth of SFTP reads in flight. Measured
        // against sshd on loopback (bench/RESULTS-sftp.md): 64-512 KiB are alike,
        // 2 MiB and more get slower (libssh2 1.10 handles the long queue poorly).
        easy.set(CURLOPT_BUFFERSIZE, SFTPEndpoint.bufferSize)
        easy.set(CURLOPT_UPLOAD_BUFFERSIZE, SFTPEndpoint.bufferSize)
        let tunnel = proxy.map(SSHTunnel.init(proxy:))
        tunnel?.install(on: easy)
        return SSHConnectionChecks(hostKeys: check, tunnel: tunnel)
    }

    static let bufferSize = 512 << 10

    // MARK: Paths

    /// A path as an argument of an SFTP quote command: in double quotes, with `"`
    /// and `\` escaped (libcurl's `Curl_get_pathname` reads it back).
    static func quoted(_ path: String) -> String {
        var s = "\""
        for c in path {
            if c == "\"" || c == "\\" { s.append("\\") }
            s.append(c)
        }
        return s + "\""
    }

    /// Refuses what an SFTP path cannot hold (NUL) or a quote command cannot carry
    /// (a line break would end it).
    static func validate(_ path: String, operation: String, display: String) throws(FerryError) {
        if path.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" || $0 == "\0" }) {
            throw FerryError(
                .invalidURL, operation: operation, target: display,
                detail: "SFTP cannot name a file with a line break or NUL in it here")
        }
    }
}

/// What one SFTP handle's job keeps for its connection: the host key check and
/// the proxy at work, whose verdicts become the job's error.
struct SSHConnectionChecks {
    var hostKeys: HostKeyCheck?
    var tunnel: SSHTunnel?

    /// The host key verdict as an error, nil when the key was not refused.
    func error(operation: String, target: String) -> FerryError? {
        hostKeys?.error(operation: operation, target: target)
    }
}

extension FerryError {
    /// Maps a failed SFTP request to a Ferry error: the host key verdict first,
    /// then the SFTP status libcurl reported (its text names the server's status
    /// code, kept as `serverCode`), then libcurl's own code.
    static func sftp(
        _ completion: CurlCompletion, hostKeys: SSHConnectionChecks?, operation: String, target: String,
        login: SSHLogin? = nil
    ) -> FerryError {
        if let e = hostKeys?.error(operation: operation, target: target) { return e }
        if completion.interrupted { return FerryError(.cancelled, operation: operation, target: target) }
        let text = completion.errorText
        // The proxy's own words when it failed (the jump host unknown, refusing
        // the login, or not reaching the server): libcurl only saw the
        // connection end before the SSH greeting.
        if let tunnel = hostKeys?.tunnel, CurlCode.connectionEnded.contains(completion.code),
            let words = tunnel.failure()
        {
            return FerryError(
                .connectionFailed, operation: operation, target: target, serverText: words,
                detail: "\(tunnel.proxy.description) ended before the server was reached; "
                    + "to see more, run: \(tunnel.proxy.shellCommand)")
        }
        if let status = SFTPStatus.find(in: text) {
            var e = FerryError(
                status.code, operation: operation, target: target, serverCode: status.number, serverText: text,
                detail: status.advice, isTransient: status.transient)
            if completion.code == .loginDenied { e.code = .authenticationFailed }
            return e
        }
        var e = FerryError.curl(completion, operation: operation, target: target)
        if completion.code == .loginDenied, let login { e.detail = login.refusal(tried: login.methods) }
        if completion.code == .ssh {
            // The SSH session failed underneath (connection closed, channel error):
            // a new connection may well work.
            e.code = .connectionFailed
            e.isTransient = true
        }
        return e
    }
}

extension CurlCode {
    /// An SSH-level failure (libssh2 error, connection closed).
    static let ssh = CurlCode(CURLE_SSH)

    /// The codes of an SSH connection that ended under libcurl (before the
    /// greeting: "Failure establishing ssh session" is `CURLE_FAILED_INIT`).
    static let connectionEnded: Set<CurlCode> = [
        CurlCode(CURLE_FAILED_INIT), .ssh, .couldntConnect, .recvError, .sendError, .gotNothing,
        .operationTimedOut,
    ]
}

/// SFTP status codes (draft-ietf-secsh-filexfer-02 and later), found by the text
/// libcurl writes for them (`sftp_libssh2_strerror`).
struct SFTPStatus {
    let number: Int
    let code: FerryError.Code
    var transient = false
    var advice: String?

    static let table: [(String, SFTPStatus)] = [
        ("No such file or directory", SFTPStatus(number: 2, code: .notFound)),
        ("Permission denied", SFTPStatus(number: 3, code: .permissionDenied)),
        ("Operation failed", SFTPStatus(number: 4, code: .serverError)),
        ("Bad message from SFTP server", SFTPStatus(number: 5, code: .protocolError)),
        ("Not connected to SFTP server", SFTPStatus(number: 6, code: .connectionFailed, transient: true)),
        ("Connection to SFTP server lost", SFTPStatus(number: 7, code: .connectionFailed, transient: true)),
        ("Operation not supported by SFTP server", SFTPStatus(number: 8, code: .unsupportedOperation)),
        ("File already exists", SFTPStatus(number: 11, code: .destinationExists)),
        ("File is write protected", SFTPStatus(number: 12, code: .permissionDenied)),
        (
            "Disk full",
            SFTPStatus(
                number: 14, code: .serverError, advice: "the server has no space left; free some there and try again")
        ),
        (
            "User quota exceeded",
            SFTPStatus(number: 15, code: .serverError, advice: "your quota on the server is full")
        ),
        ("Directory not empty", SFTPStatus(number: 18, code: .directoryNotEmpty)),
        ("Not a directory", SFTPStatus(number: 19, code: .notFound)),
        ("Invalid filename", SFTPStatus(number: 20, code: .invalidURL)),
    ]

    static func find(in text: String) -> SFTPStatus? {
        table.first { text.hasSuffix($0.0) || text.contains($0.0 + " ") || text.contains($0.0 + ")") }?.1
    }
}
