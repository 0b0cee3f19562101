import Foundation

/// A WebDAV server on 127.0.0.1 serving a temporary folder (`root`), for the
/// `dav://` backend's tests: Apache `mod_dav_fs`, nginx `dav` + `dav_ext`,
/// `rclone serve webdav`.
public protocol WebDAVTestServer: AnyObject, Sendable {
    /// The served folder on this machine.
    var root: String { get }
    /// `dav://127.0.0.1:PORT` + the URL path of the served folder (`/` or `/dav/`).
    var base: String { get }
    /// What the server is, for test messages.
    var name: String { get }
    /// Lines of the access log: `METHOD PATH status=S sent=BYTES range="..."` (empty where the server keeps none).
    var accessLog: [String] { get }
    func stop()
}

extension WebDAVTestServer {
    /// The local path of `name` under the served folder.
    public func local(_ name: String) -> String { root + "/" + name }

    /// Makes what the tests wrote locally writable by the server (Apache started
    /// by root serves as `www-data`).
    public func allowWrites() {
        _ = try? TestProcess.run("/bin/chmod", ["-R", "a+rwX", root])
    }
}

/// Apache httpd with `mod_dav` + `mod_dav_fs` at `/dav/`, in one process (`-X`);
/// with `basicAuth`, behind HTTP basic authentication (`htpasswd`). Started by
/// root, it serves as `www-data` (Apache refuses to serve as root): call
/// `allowWrites()` after writing files locally.
public final class ApacheDAVServer: WebDAVTestServer {
    public let port: Int
    public let root: String
    public let accessLogPath: String
    public let name = "Apache mod_dav"
    private let process: ServerProcess
    private let dir: TempDir

    public static var isAvailable: Bool {
        TestProcess.which("apache2") != nil
            && FileManager.default.fileExists(atPath: "/usr/lib/apache2/modules/mod_dav_fs.so")
    }

    public init(basicAuth: (user: String, password: String)? = nil) throws {
        let apache = try TestProcess.require("apache2", missing: "apache2 (apt-get install apache2)")
        let dir = try TempDir(prefix: "apache-dav")
        self.dir = dir
        let root = try dir.folder("root")
        self.root = root
        let accessLogPath = dir.file("access.log")
        self.accessLogPath = accessLogPath
        let modules = [
            "mpm_event", "authz_core", "authn_core", "authn_file", "auth_basic", "authz_user", "dav", "dav_fs",
            "mime", "alias", "log_config",
        ]
        var auth = "Require all granted"
        if let basicAuth {
            _ = try TestProcess.run(
                TestProcess.which("htpasswd") ?? "/usr/bin/htpasswd",
                ["-b", "-c", dir.file("htpasswd"), basicAuth.user, basicAuth.password])
            auth = """
                AuthType Basic
                  AuthName "ferry"
                  AuthUserFile \(dir.file("htpasswd"))
                  Require valid-user
                """
        }
        let asRoot = getuid() == 0
        let empty = try dir.folder("empty")
        if asRoot {
            _ = try? TestProcess.run("/bin/chmod", ["a+rwx", dir.path, root])
        }
        (port, process) = try ApacheProcess.listening(apache, dir: dir, modules: modules) { _ in
            """
            \(asRoot ? "User www-data\nGroup www-data" : "")
            TypesConfig /dev/null
            LogFormat "%m %U status=%>s sent=%B range=\\"%{Range}i\\"" ferry
            CustomLog \(accessLogPath) ferry
            DavLockDB \(dir.file("davlock"))
            DocumentRoot "\(empty)"
            Alias /dav "\(root)"
            <Directory "\(root)">
              Dav On
              \(auth)
            </Directory>
            """
        }
    }

    deinit { process.stop() }

    public var base: String { "dav://127.0.0.1:\(port)/dav/" }

    public var accessLog: [String] { TestLog.lines(accessLogPath) }

    public func stop() { process.stop() }
}

/// nginx with its `dav` module and `dav_ext` (PROPFIND) serving `root` at `/`,
/// and read-only at `/slow/` throttled to 2 MB/s (for killing a download midway).
public final class NginxDAVServer: WebDAVTestServer {
    public let port: Int
    public let root: String
    public let name = "nginx dav_ext"
    private let accessLogPath: String
    private let process: ServerProcess
    private let dir: TempDir

    /// Where Debian's `libnginx-mod-http-dav-ext` puts the module.
    public static let modulePath = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so"

    public static var isAvailable: Bool {
        TestProcess.which("nginx") != nil && FileManager.default.fileExists(atPath: modulePath)
    }

    /// `davs://` when `tls` is given (HTTPS only).
    public let scheme: String

    public init(tls: TestCertificate? = nil) throws {
        let nginx = try TestProcess.require("nginx", missing: "nginx (apt-get install nginx-light)")
        guard FileManager.default.fileExists(atPath: NginxDAVServer.modulePath) else {
            throw TestServerError.missing("nginx's dav_ext (apt-get install libnginx-mod-http-dav-ext)")
        }
        let dir = try TempDir(prefix: "nginx-dav")
        self.dir = dir
        let root = try dir.folder("root")
        self.root = root
        let accessLogPath = dir.file("access.log")
        self.accessLogPath = accessLogPath
        try NginxProcess.makeFolders(in: dir)
        scheme = tls == nil ? "dav" : "davs"
        (port, process) = try ServerProcess.listening("nginx") { port in
            try NginxProcess.start(
                nginx, dir: dir, modules: "load_module \(NginxDAVServer.modulePath);",
                logFormat: #"$request_method $uri status=$status sent=$body_bytes_sent range="$http_range""#,
                accessLog: accessLogPath,
                server: """
                    \(NginxProcess.listen(port, tls: tls))
                    root \(root);
                    client_max_body_size 0;
                    location / {
                        dav_methods PUT DELETE MKCOL COPY MOVE;
                        dav_ext_methods PROPFIND OPTIONS;
                        dav_access user:rw group:rw all:r;
                    }
                    location /slow/ {
                        alias \(root)/;
                        limit_rate 2m;
                        dav_ext_methods PROPFIND OPTIONS;
                    }
                    """)
        }
    }

    deinit { process.stop() }

    public var base: String { "\(scheme)://127.0.0.1:\(port)/" }

    public var accessLog: [String] { TestLog.lines(accessLogPath) }

    public func stop() { process.stop() }
}

/// `rclone serve webdav` of `root` at `/`, with `--user`/`--pass` when given.
public final class RcloneDAVServer: WebDAVTestServer {
    public let port: Int
    public let root: String
    public let name = "rclone serve webdav"
    private let process: ServerProcess
    private let dir: TempDir

    public static var isAvailable: Bool { TestProcess.which("rclone") != nil }

    public init(basicAuth: (user: String, password: String)? = nil) throws {
        let rclone = try TestProcess.require("rclone", missing: "rclone (apt-get install rclone)")
        let dir = try TempDir(prefix: "rclone-dav")
        self.dir = dir
        let root = try dir.folder("root")
        self.root = root
        (port, process) = try ServerProcess.listening("rclone") { port in
            var args = ["serve", "webdav", root, "--addr", "127.0.0.1:\(port)", "--config", dir.file("rclone.conf")]
            if let basicAuth { args += ["--user", basicAuth.user, "--pass", basicAuth.password] }
            return try ServerProcess(rclone, args, logPath: dir.file("log"))
        }
    }

    deinit { process.stop() }

    public var base: String { "dav://127.0.0.1:\(port)/" }

    public var accessLog: [String] { [] }

    public func stop() { process.stop() }
}

/// sabre/dav (the library under Nextcloud and ownCloud; Debian's
/// `php-sabre-dav`) on PHP's built-in server, serving `root` under Nextcloud's
/// `/remote.php/dav/files/alice/` base path, with sabre's partial-update plugin.
public final class SabreDAVServer: WebDAVTestServer {
    public let port: Int
    public let root: String
    public let name = "sabre/dav (php -S)"
    /// The URL path the folder is served under.
    public static let basePath = "/remote.php/dav/files/alice/"
    private let process: ServerProcess
    private let dir: TempDir

    /// The front controller: every request goes to sabre's `Server::exec()`.
    static let script = """
        <?php
        // sabre/dav 1.8 predates PHP 8: its deprecation notices would end up in replies.
        error_reporting(E_ALL & ~E_DEPRECATED & ~E_NOTICE & ~E_WARNING);
        require_once 'Sabre/autoload.php';
        date_default_timezone_set('UTC');
        $server = new \\Sabre\\DAV\\Server(new \\Sabre\\DAV\\FSExt\\Directory(getenv('FERRY_DAV_ROOT')));
        $server->setBaseUri(getenv('FERRY_DAV_BASE'));
        $server->addPlugin(new \\Sabre\\DAV\\PartialUpdate\\Plugin());
        $server->exec();

        """

    public static var isAvailable: Bool {
        TestProcess.which("php") != nil && FileManager.default.fileExists(atPath: "/usr/share/php/Sabre/autoload.php")
    }

    public init() throws {
        guard let php = TestProcess.which("php"), SabreDAVServer.isAvailable else {
            throw TestServerError.missing("sabre/dav on PHP (apt-get install php-cli php-sabre-dav)")
        }
        let dir = try TempDir(prefix: "sabre-dav")
        self.dir = dir
        let root = try dir.folder("root")
        self.root = root
        try SabreDAVServer.script.write(toFile: dir.file("server.php"), atomically: true, encoding: .utf8)
        (port, process) = try ServerProcess.listening("php -S") { port in
            try ServerProcess(
                php, ["-S", "127.0.0.1:\(port)", dir.file("server.php")], cwd: dir.path, logPath: dir.file("log"),
                environment: ["FERRY_DAV_ROOT": root, "FERRY_DAV_BASE": SabreDAVServer.basePath])
        }
    }

    deinit { process.stop() }

    public var base: String { "dav://127.0.0.1:\(port)" + SabreDAVServer.basePath }

    public var accessLog: [String] { [] }

    public func stop() { process.stop() }
}
