import CCurl
import Foundation

/// One FTP server as Ferry talks to it: scheme and TLS mode, credentials, and
/// how Ferry's absolute paths become URLs and command arguments.
///
/// ## Paths
///
/// Ferry paths are relative to the login folder, as in curl and browsers:
/// `ftp://host/pub/a.txt` is `pub/a.txt` inside the folder the login lands in,
/// which a chrooted or virtual-root server (vsftpd anonymous, pyftpdlib,
/// proftpd with `DefaultRoot ~`) also calls `/pub/a.txt`. A path starting with
/// `//` (the URL spelled `ftp://host/%2Fetc/x`) names the server's true root.
///
/// - Listings, `stat` by SIZE/MDTM, downloads and uploads put the path in the URL
///   (percent-encoded; libcurl decodes it and CWDs into each folder).
/// - Commands sent as `CURLOPT_QUOTE` (DELE, MKD, RMD, RNFR/RNTO, MLST) carry the
///   path as the server spells it, made absolute with the login folder from `PWD`.
///   libcurl sends quote commands before any CWD but on a reused connection the
///   current folder is wherever the previous transfer left it, so only an absolute
///   path means the same thing every time.
struct FTPEndpoint: Sendable {
    /// The server (scheme, host, port); the path is ignored.
    let url: RemoteURL
    let credentials: Credentials?
    let verifyTLS: Bool
    /// Certificate authorities to trust instead of the system's (`CURLOPT_CAINFO`).
    var caFile: String? = nil
    let engine: CurlEngine

    var hostKey: String { url.hostKey }
    /// The server-info cache key: the login folder differs per user.
    var serverKey: String {
        "\(url.hostKey)|\(credentials?.user ?? "anonymous")"
    }

    /// FTPS handles run in lanes (`ConnectionLane`), each with its own control
    /// connection and that connection's TLS session; a job's handle is made for
    /// them (`CurlJob.init`), as libcurl cannot switch a used handle to a shared
    /// cache without leaking its own (`TLSSessionCache`).
    var tlsSessionCache: TLSSessionCache { url.scheme == .ftp ? .own : .lane(laneKey) }

    /// The lane key: handles that may share a control connection. The user and
    /// the TLS settings are in it because libcurl keys its session cache by host
    /// and port only: another login to the same server must not share a lane.
    var laneKey: String {
        "\(serverKey)|verify=\(verifyTLS)|ca=\(caFile ?? "")"
    }

    /// The redacted URL of a path, for messages.
    func display(_ path: String) -> String { url.with(path: path).redacted }

    /// Sets the URL and every connection option on a handle. Every FTP handle gets
    /// the same options, so libcurl can reuse one control connection for all of them.
    ///
    /// `stallTimeout` is given for transfers: a data connection that moves nothing
    /// for that long, or a server that does not answer within it, is dead.
    func configure(_ easy: EasyHandle, path: String, stallTimeout: Duration? = nil) {
        precondition(easy.tlsSessionCache == tlsSessionCache, "an FTP handle made for the wrong TLS session cache")
        // ftpes:// is explicit TLS: an ftp:// URL that must upgrade with AUTH TLS.
        let wireScheme = url.scheme == .ftpes ? "ftp" : url.scheme.rawValue
        easy.set(CURLOPT_URL, url.with(path: path).wireURL(scheme: wireScheme))
        if url.scheme == .ftpes {
            easy.set(CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue))
        }
        if url.scheme != .ftp {
            // TLS 1.2 at most: over TLS 1.3, libcurl 7.88 replaces the control
            // connection's session with each data connection's new ticket, and
            // servers that require session reuse on data connections (vsftpd's
            // default) then refuse the next transfer ("522 SSL connection failed:
            // session reuse required", or a truncated file). TLS 1.2 session IDs
            // do not change that way.
            easy.set(CURLOPT_SSLVERSION, CURL_SSLVERSION_MAX_TLSv1_2)
        }
        // Never in the URL string: libcurl would echo it in its own messages.
        if let credentials {
            easy.set(CURLOPT_USERNAME, credentials.user)
            easy.set(CURLOPT_PASSWORD, credentials.password ?? "")
        }
        if let caFile { easy.set(CURLOPT_CAINFO, caFile) }
        if !verifyTLS {
            easy.set(CURLOPT_SSL_VERIFYPEER, 0)
            easy.set(CURLOPT_SSL_VERIFYHOST, 0)
        }
        // Also bounds the wait for the reply that ends a transfer ("226"), which
        // libcurl 7.88 does blocking, holding up every transfer on the engine: at
        // 60 s, an upload whose bytes all fit in the socket buffers before its data
        // connection stalled stopped the engine for a minute (the low-speed check
        // does not run there).
        let stallSeconds = stallTimeout.map { max(1, Int($0 / .seconds(1))) }
        easy.set(CURLOPT_SERVER_RESPONSE_TIMEOUT, stallSeconds ?? 60)
        easy.setTimeouts(connect: .seconds(15), stall: stallTimeout ?? .seconds(30))
        easy.set(CURLOPT_TCP_KEEPALIVE, 1)
        easy.set(CURLOPT_BUFFERSIZE, 512 * 1024)
        easy.set(CURLOPT_UPLOAD_BUFFERSIZE, 512 * 1024)
    }

    // MARK: Paths

    /// The path as a command argument: absolute, as the server names it.
    static func serverPath(_ path: String, entryPath: String) -> String {
        let p = RemotePath.normalize(path)
        if p.hasPrefix("//") { return String(p.dropFirst()) }
        let relative = p.dropFirst()
        if relative.isEmpty { return entryPath }
        return entryPath.hasSuffix("/") ? entryPath + relative : entryPath + "/" + relative
    }

    /// Refuses paths an FTP command line cannot carry: a CR or LF would end the
    /// command early and smuggle in another one.
    static func validate(_ path: String, operation: String, display: String) throws(FerryError) {
        if path.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" || $0 == "\0" }) {
            throw FerryError(
                .invalidURL, operation: operation, target: display,
                detail: "FTP cannot name a file with a line break or NUL in it")
        }
    }
}
