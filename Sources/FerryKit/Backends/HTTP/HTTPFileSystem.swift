import CCurl
import Foundation

/// HTTP(S) as a remote file system: `stat` (HEAD), `download`, and `list` of a
/// folder from the index page the server generates (HTTPFileSystem+List). Writing
/// throws `unsupportedOperation`: plain HTTP has no writing.
public struct HTTPFileSystem: RemoteFileSystem, DownloadSourceFactory {
    /// The URL this file system was opened with.
    public let url: RemoteURL
    let engine: CurlEngine
    /// TLS, credentials and extra headers for every request.
    var settings: HTTPRequestSettings
    /// Verify TLS certificates.
    public var verifyTLS: Bool {
        get { settings.verifyTLS }
        set { settings.verifyTLS = newValue }
    }

    /// Opens an `http://` or `https://` URL.
    public init(url: RemoteURL, verifyTLS: Bool = true) {
        self.init(url: url, options: ConnectionOptions(verifyTLS: verifyTLS))
    }

    /// Opens an `http://` or `https://` URL with connection options: TLS
    /// verification and CA file, credentials (Basic, or Digest when the server
    /// asks for it; nil: those in the URL, if any) and extra request headers.
    public init(url: RemoteURL, options: ConnectionOptions) {
        self.init(url: url, engine: .shared, settings: HTTPRequestSettings(url: url, options: options))
    }

    init(url: RemoteURL, engine: CurlEngine, verifyTLS: Bool = true) {
        self.init(
            url: url, engine: engine, settings: HTTPRequestSettings(url: url, options: .init(verifyTLS: verifyTLS)))
    }

    init(url: RemoteURL, engine: CurlEngine, settings: HTTPRequestSettings) {
        self.url = url
        self.engine = engine
        self.settings = settings
    }

    /// Option strings every request sets, made once: libcurl copies the
    /// strings it is given, and `EasyHandle.set(_:_:)` would add a copy of its
    /// own per request (bench/RESULTS.md, "Issue 19, HTTP per-file CPU (2026-12-01, branch hdr)", "Left for the
    /// owners of other files").
    static let userAgent = OptionString("ferry/\(Ferry.version)")
    static let redirectProtocols = OptionString("http,https")

    /// Options every HTTP request gets.
    static func configure(_ easy: EasyHandle, url: RemoteURL, scheme: String? = nil, verifyTLS: Bool) {
        var settings = HTTPRequestSettings()
        settings.verifyTLS = verifyTLS
        settings.credentials = Credentials.inURL(url)
        configure(easy, url: url, scheme: scheme, settings: settings)
    }

    /// Options every HTTP request gets, with the file system's settings.
    static func configure(_ easy: EasyHandle, url: RemoteURL, scheme: String? = nil, settings: HTTPRequestSettings) {
        configure(
            easy, wireURL: url.wireURL(scheme: scheme), settings: settings,
            headerLines: settings.headers.isEmpty ? [] : settings.headerLines)
    }

    /// The same, with the URL already as libcurl gets it and `settings.headerLines`
    /// already made: a download renders them once per file, not per attempt.
    static func configure(_ easy: EasyHandle, wireURL: String, settings: HTTPRequestSettings, headerLines: [String]) {
        OptionString.set(CURLOPT_URL, wireURL, on: easy)
        easy.set(CURLOPT_FOLLOWLOCATION, 1)
        easy.set(CURLOPT_MAXREDIRS, 10)
        // A redirect may lead only to HTTP(S): libcurl would follow ftp:// too.
        redirectProtocols.set(CURLOPT_REDIR_PROTOCOLS_STR, on: easy)
        userAgent.set(CURLOPT_USERAGENT, on: easy)
        // Large reads: fewer callbacks and syscalls per gigabyte.
        easy.set(CURLOPT_BUFFERSIZE, 512 * 1024)
        easy.set(CURLOPT_TCP_KEEPALIVE, 1)
        HTTPProxyEnvironment.configure(easy)
        // Never in the URL string: libcurl would echo it in its own messages.
        // Sent only to the URL's own host (libcurl drops it on a redirect elsewhere).
        if let credentials = settings.credentials {
            easy.set(CURLOPT_USERNAME, credentials.user)
            easy.set(CURLOPT_PASSWORD, credentials.password ?? "")
            // Basic or Digest, whichever the server's 401 asks for: libcurl sends
            // the credentials only after that challenge, never to a public file.
            easy.set(CURLOPT_HTTPAUTH, Int(FERRY_CURLAUTH_BASIC_OR_DIGEST))
        }
        if !headerLines.isEmpty {
            easy.set(CURLOPT_HTTPHEADER, list: headerLines)
        }
        if let caFile = settings.caFile { OptionString.set(CURLOPT_CAINFO, caFile, on: easy) }
        if !settings.verifyTLS {
            easy.set(CURLOPT_SSL_VERIFYPEER, 0)
            easy.set(CURLOPT_SSL_VERIFYHOST, 0)
        }
    }

    /// Describes a file with `HEAD` (or a one-byte `GET` when HEAD is refused or tells no size).
    public func stat(_ path: String) async throws(FerryError) -> RemoteEntry {
        // A URL ending in `/` is a folder when its page is an index (HTTPFileSystem+List).
        if path.hasSuffix("/"), let folder = try await statFolder(path) { return folder }
        let target = url.with(path: path)
        var response = try await ask(target, firstByteOnly: false)
        // Some servers refuse HEAD (405, 501) or leave the size out of its answer:
        // ask for the first byte instead, whose Content-Range tells the size.
        if response.status == 405 || response.status == 501 || (response.status < 400 && response.size == nil) {
            let get = try await ask(target, firstByteOnly: true)
            if get.status < 400 || response.status >= 400 { response = get }
        }
        if response.status >= 400 {
            throw FerryError.http(
                status: response.status, reason: response.headers.reason, operation: "stat",
                target: target.redacted)
        }
        // `/photos` redirected to `/photos/`: a folder, when that page is an index.
        if response.final?.hasSuffix("/") == true, !path.hasSuffix("/"),
            let folder = try await statFolder(path + "/")
        {
            return RemoteEntry(name: folder.name, path: path, kind: .directory)
        }
        let modified = response.headers["Last-Modified"].flatMap(InternetDate.parse).map { RemoteTimestamp(utc: $0) }
        let name = target.lastComponent
        return RemoteEntry(
            name: name.isEmpty ? "/" : name, path: target.path, kind: .file, size: response.size, modified: modified)
    }

    /// The final response to a HEAD, or to a GET of the first byte only, and the
    /// file size it tells.
    private func ask(_ target: RemoteURL, firstByteOnly: Bool) async throws(FerryError) -> (
        status: Int, headers: HTTPHeaders, size: Int64?, final: String?
    ) {
        let job = HTTPRequestJob(hostKey: target.hostKey, maxBody: firstByteOnly ? 1 : 0)
        HTTPFileSystem.configure(job.easy, url: target, settings: settings)
        if firstByteOnly {
            job.easy.set(CURLOPT_RANGE, "0-0")
        } else {
            job.easy.set(CURLOPT_NOBODY, 1)
        }
        job.easy.set(CURLOPT_CONNECTTIMEOUT_MS, 15_000)
        job.easy.set(CURLOPT_TIMEOUT_MS, 60_000)
        let c = await engine.perform(job)
        if c.interrupted { throw FerryError(.cancelled, operation: "stat", target: target.redacted) }
        // A server that ignores the Range sends the whole file: its headers are all we want.
        let cutShort = firstByteOnly && c.code == .writeError && job.tooLarge
        guard c.code == .ok || cutShort else {
            throw HTTPFileSystem.failure(
                c, headers: job.headers, bodyStarted: !job.body.isEmpty, operation: "stat", target: target.redacted)
        }
        let headers = job.headers
        var status = headers.status != 0 ? headers.status : c.responseCode
        var size = headers["Content-Length"].flatMap { Int64($0) }
        if firstByteOnly && status == 206 {
            size = headers["Content-Range"].flatMap(ContentRange.init)?.total
        } else if firstByteOnly && status == 416 {
            // No first byte to give: an empty file.
            size = headers["Content-Range"].flatMap { ContentRange.total416($0) }
            if size != nil { status = 200 }
        }
        return (status, headers, size, job.easy.info(string: CURLINFO_EFFECTIVE_URL))
    }

    /// The error for an HTTP request libcurl ended with `completion`: a redirect
    /// to another scheme (ftp://, file:// ...), which it refused to follow, and
    /// oversized headers get their own words; the rest is `FerryError.curl`.
    /// Runs a request whose whole reply is read into memory (a folder page, a
    /// WebDAV multistatus) and returns its HTTP status: a cancel, a reply over
    /// the job's `maxBody` (`tooLarge`, a `badListing`) and a transfer failure
    /// are thrown; any status, 4xx and 5xx included, is the caller's to judge.
    static func performWholeReply(
        _ job: HTTPRequestJob, on engine: CurlEngine, operation: String, target shown: String,
        tooLarge: (serverText: String, detail: String)
    ) async throws(FerryError) -> Int {
        let c = await engine.perform(job)
        if c.interrupted { throw FerryError(.cancelled, operation: operation, target: shown) }
        if c.code == .writeError && job.tooLarge {
            throw FerryError(
                .badListing, operation: operation, target: shown, serverText: tooLarge.serverText,
                detail: tooLarge.detail)
        }
        guard c.code == .ok else {
            throw failure(c, headers: job.headers, bodyStarted: !job.body.isEmpty, operation: operation, target: shown)
        }
        return job.headers.status != 0 ? job.headers.status : c.responseCode
    }

    static func failure(
        _ completion: CurlCompletion, headers: HTTPHeaders, bodyStarted: Bool, operation: String, target: String
    ) -> FerryError {
        if completion.code == .unsupportedProtocol, (300..<400).contains(headers.status),
            let location = headers["Location"]
        {
            return FerryError(
                .unsupportedScheme, operation: operation, target: target, serverCode: headers.status,
                serverText: headers.reason,
                detail:
                    "redirected to \(RemoteURL.redact(location)); Ferry follows redirects only to http:// and https://")
        }
        if completion.code == .outOfMemory && !bodyStarted {
            // What libcurl 7.88 says about a header line over 100 KB or headers over 300 KB.
            return FerryError(
                .protocolError, operation: operation, target: target, serverText: "response headers too large",
                detail: "over libcurl's limit of 100 KB a line")
        }
        return .curl(completion, operation: operation, target: target)
    }

    /// Starts downloading `path` with `Range` resumes, `If-Range` and retries.
    public func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
        let destination = LocalDestination.prepare(destination, options)
        var opts = options
        opts.verifyTLS = options.verifyTLS && verifyTLS
        return DownloadDriver.start(downloadSource(for: path), to: destination, options: opts)
    }

    func downloadSource(for path: String) -> DownloadSource {
        HTTPDownloadAttempt.source(url: url.file(at: path), engine: engine, settings: settings)
    }
}

/// What every HTTP request of one file system carries besides its URL.
struct HTTPRequestSettings: Sendable, Hashable {
    var verifyTLS = true
    /// Certificate authorities to trust instead of the system's (`CURLOPT_CAINFO`).
    var caFile: String?
    /// Sent as Basic or Digest auth, when the server asks (401).
    var credentials: Credentials?
    /// Extra request header fields.
    var headers: [String: String] = [:]

    init() {}

    init(url: RemoteURL, options: ConnectionOptions) {
        verifyTLS = options.verifyTLS
        caFile = options.caCertificateFile
        credentials = options.credentials(for: url)
        headers = options.httpHeaders
    }

    /// `headers` as header lines, sorted by name; a field with a line break is left out.
    var headerLines: [String] {
        headers.sorted { $0.key < $1.key }.compactMap { name, value in
            let line = "\(name): \(value)"
            return line.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) ? nil : line
        }
    }
}

/// A C string for a libcurl string option that libcurl copies (`Curl_setstropt`:
/// `CURLOPT_USERAGENT`, `CURLOPT_PROXY` and most others; never `CURLOPT_POSTFIELDS`
/// or `CURLOPT_ERRORBUFFER`), made once and kept for the life of the process.
///
/// `@unchecked Sendable`: the bytes are written once, in `init`, and only read
/// afterwards; they are never freed.
struct OptionString: @unchecked Sendable {
    private let bytes: UnsafeMutablePointer<CChar>

    init(_ text: String) {
        bytes = strdup(text)!
    }

    func set(_ option: CURLoption, on easy: EasyHandle) {
        easy.set(option, pointer: UnsafeMutableRawPointer(bytes))
    }

    /// Sets an option libcurl copies to `text`, with no copy of Ferry's own
    /// (`EasyHandle.set(_:_:)` keeps one for the handle's life, for the options
    /// libcurl does not copy).
    static func set(_ option: CURLoption, _ text: String, on easy: EasyHandle) {
        text.withCString { easy.set(option, pointer: UnsafeMutableRawPointer(mutating: $0)) }
    }
}
