import Foundation

/// A test HTTP server (or proxy) on 127.0.0.1: its URLs.
public protocol LoopbackHTTPServer: AnyObject, Sendable {
    var port: Int { get }
    /// `http`, or `https` for one that speaks TLS.
    var scheme: String { get }
}

extension LoopbackHTTPServer {
    public var scheme: String { "http" }

    /// `http://127.0.0.1:PORT` (or `https://`) + path.
    public func url(_ path: String) -> String { "\(scheme)://127.0.0.1:\(port)\(path)" }
}

/// A test HTTP server that logs every request to `accessLogPath`.
public protocol LoggingHTTPServer: LoopbackHTTPServer {
    var accessLogPath: String { get }
}

extension LoggingHTTPServer {
    /// Lines of the access log.
    public var accessLog: [String] { TestLog.lines(accessLogPath) }
}

/// nginx on 127.0.0.1 with a temporary config, serving `root`.
///
/// Locations: `/` normal (Range, ETag), `/slow/` throttled with `limit_rate`,
/// `/norange/` with `max_ranges 0` (ignores Range), `/index/`, `/index-json/` and
/// `/index-xml/` with `autoindex` (folder pages: html, json, xml), with `basicAuth`,
/// `/private/` behind HTTP basic authentication (with autoindex), and `/bearer/`,
/// which wants `Authorization: Bearer ferry-token`. The access log records the
/// Range and If-Range headers, the status, the bytes sent, the Basic auth user
/// (`user=-` when none was sent) and the `X-Ferry-Test` header of every request.
/// With `tls`, it speaks HTTPS only.
public final class NginxServer: LoggingHTTPServer {
    public let port: Int
    /// `http` or `https`.
    public let scheme: String
    public let root: String
    public let accessLogPath: String
    private let process: ServerProcess
    private let dir: TempDir

    /// Whether nginx is installed.
    public static var isAvailable: Bool { TestProcess.which("nginx") != nil }

    public init(
        root: String, slowRate: Int = 1_000_000, basicAuth: (user: String, password: String)? = nil,
        tls: TestCertificate? = nil
    ) throws {
        let nginx = try TestProcess.require("nginx", missing: "nginx (apt-get install nginx-light)")
        let dir = try TempDir(prefix: "nginx")
        self.dir = dir
        self.root = root
        scheme = tls == nil ? "http" : "https"
        let accessLogPath = dir.file("access.log")
        self.accessLogPath = accessLogPath
        try NginxProcess.makeFolders(in: dir)
        var privateLocation = ""
        if let basicAuth {
            try "\(basicAuth.user):{PLAIN}\(basicAuth.password)\n".write(
                toFile: dir.file("htpasswd"), atomically: true, encoding: .utf8)
            privateLocation =
                "location /private/ { alias \(root)/; auth_basic \"ferry\"; "
                + "auth_basic_user_file \(dir.file("htpasswd")); autoindex on; }"
        }
        (port, process) = try ServerProcess.listening("nginx") { port in
            try NginxProcess.start(
                nginx, dir: dir,
                logFormat:
                    #"$request_method $uri status=$status range="$http_range" ifrange="$http_if_range" sent=$body_bytes_sent conn=$connection user=$remote_user xtest="$http_x_ferry_test""#,
                accessLog: accessLogPath,
                http: "types { application/octet-stream bin; image/jpeg jpg; text/plain txt; }",
                server: """
                    \(NginxProcess.listen(port, tls: tls))
                    root \(root);
                    location /slow/ { alias \(root)/; limit_rate \(slowRate); }
                    location /norange/ { alias \(root)/; max_ranges 0; }
                    location /index/ { alias \(root)/; autoindex on; }
                    location /index-json/ { alias \(root)/; autoindex on; autoindex_format json; }
                    location /index-xml/ { alias \(root)/; autoindex on; autoindex_format xml; }
                    \(privateLocation)
                    location /bearer/ {
                        alias \(root)/;
                        if ($http_authorization != "Bearer ferry-token") { return 401; }
                    }
                    """)
        }
    }

    deinit { process.stop() }

    public func stop() { process.stop() }
}

/// What every nginx a test starts shares: one process in the foreground, its
/// error log, pid and temporary folders in `dir`, an access log in `logFormat`.
enum NginxProcess {
    /// Makes the temporary folders nginx writes to.
    static func makeFolders(in dir: TempDir) throws {
        for sub in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"] {
            try FileManager.default.createDirectory(atPath: dir.file(sub), withIntermediateDirectories: true)
        }
    }

    /// The `listen` line for 127.0.0.1:`port`; HTTPS only with `tls`.
    static func listen(_ port: Int, tls: TestCertificate?) -> String {
        tls.map {
            "listen 127.0.0.1:\(port) ssl; ssl_certificate \($0.certificatePath); ssl_certificate_key \($0.keyPath);"
        } ?? "listen 127.0.0.1:\(port);"
    }

    /// Writes `dir`/nginx.conf (`modules` first, `http` inside the http block,
    /// `server` the server block's body) and starts `nginx` on it.
    static func start(
        _ nginx: String, dir: TempDir, modules: String = "", logFormat: String, accessLog: String, http: String = "",
        server: String
    ) throws -> ServerProcess {
        let conf = """
            \(modules)
            worker_processes 1;
            daemon off;
            master_process off;
            error_log \(dir.file("error.log")) warn;
            pid \(dir.file("nginx.pid"));
            events { worker_connections 1024; }
            http {
                log_format ferry '\(logFormat)';
                access_log \(accessLog) ferry;
                client_body_temp_path \(dir.file("client_body"));
                proxy_temp_path \(dir.file("proxy"));
                fastcgi_temp_path \(dir.file("fastcgi"));
                uwsgi_temp_path \(dir.file("uwsgi"));
                scgi_temp_path \(dir.file("scgi"));
                \(http)
                default_type application/octet-stream;
                sendfile on;
                keepalive_requests 100000;
                server {
                    \(server)
                }
            }
            """
        try conf.write(toFile: dir.file("nginx.conf"), atomically: true, encoding: .utf8)
        return try ServerProcess(
            nginx, ["-c", dir.file("nginx.conf"), "-p", dir.path], logPath: dir.file("stdout.log"))
    }
}

/// `python3 -m http.server`, which answers every request with the whole file (no Range).
public final class PythonHTTPServer: LoopbackHTTPServer {
    public let port: Int
    private let process: ServerProcess
    private let dir: TempDir

    public init(root: String) throws {
        let python = try TestProcess.require("python3", missing: "python3")
        let dir = try TempDir(prefix: "pyhttp")
        self.dir = dir
        (port, process) = try ServerProcess.listening("python http.server") { port in
            try ServerProcess(
                python, ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", root],
                logPath: dir.file("log"))
        }
    }

    deinit { process.stop() }
}

/// Why a test server could not run.
public enum TestServerError: Error, CustomStringConvertible {
    case missing(String)
    case didNotStart(String)

    public var description: String {
        switch self {
        case .missing(let what): "not installed: \(what)"
        case .didNotStart(let log): "did not start: \(log)"
        }
    }
}

/// Test data helpers.
public enum TestData {
    /// Deterministic pseudo-random bytes (so failures are reproducible).
    public static func bytes(_ count: Int, seed: UInt64 = 42) -> Data {
        var state = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        var out = Data(count: count)
        out.withUnsafeMutableBytes { (buf: UnsafeMutableRawBufferPointer) in
            let words = count / 8
            let p = buf.baseAddress!
            for i in 0..<words {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                var v = state ^ (state >> 29)
                withUnsafeBytes(of: &v) { (p + i * 8).copyMemory(from: $0.baseAddress!, byteCount: 8) }
            }
            for i in (words * 8)..<count {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                buf[i] = UInt8(truncatingIfNeeded: state >> 33)
            }
        }
        return out
    }

    /// Writes `count` pseudo-random bytes to `path` and returns them.
    @discardableResult
    public static func file(_ path: String, size count: Int, seed: UInt64 = 42) throws -> Data {
        let d = bytes(count, seed: seed)
        try d.write(to: URL(fileURLWithPath: path))
        return d
    }
}
