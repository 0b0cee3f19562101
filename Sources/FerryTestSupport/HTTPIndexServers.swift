import Foundation

/// Apache httpd on 127.0.0.1 with a temporary config, serving `root` with
/// `mod_autoindex`: `/` the plain list (no FancyIndexing), `/fancy/` with
/// FancyIndexing (a `<pre>` table with sort links), `/table/` with HTMLTable.
///
/// Runs as one process (`-X`), so stopping it leaves no children behind.
public final class ApacheServer: Sendable {
    public let port: Int
    public let root: String
    public let accessLogPath: String
    private let process: ServerProcess
    private let dir: TempDir

    /// Whether Apache is installed.
    public static var isAvailable: Bool { TestProcess.which("apache2") != nil }

    public init(root: String) throws {
        guard let apache = TestProcess.which("apache2") else {
            throw TestServerError.missing("apache2 (apt-get install apache2)")
        }
        let modules = "/usr/lib/apache2/modules"
        let dir = try TempDir(prefix: "apache")
        self.dir = dir
        self.root = root
        let accessLogPath = dir.file("access.log")
        self.accessLogPath = accessLogPath
        let load = ["mpm_event", "authz_core", "autoindex", "dir", "mime", "alias", "log_config"]
            .filter { FileManager.default.fileExists(atPath: "\(modules)/mod_\($0).so") }
            .map { "LoadModule \($0)_module \(modules)/mod_\($0).so" }
            .joined(separator: "\n")
        let errors = { (try? String(contentsOfFile: dir.file("error.log"), encoding: .utf8)) ?? "" }
        (port, process) = try ServerProcess.listening("apache2", diagnostics: errors) { port in
            let conf = """
                ServerRoot \(dir.path)
                DefaultRuntimeDir \(dir.path)
                PidFile \(dir.file("httpd.pid"))
                Listen 127.0.0.1:\(port)
                ServerName 127.0.0.1
                \(load)
                ErrorLog \(dir.file("error.log"))
                TypesConfig \(FileManager.default.fileExists(atPath: "/etc/mime.types") ? "/etc/mime.types" : "/dev/null")
                <IfModule log_config_module>
                LogFormat "%m %U status=%s sent=%B" ferry
                CustomLog \(accessLogPath) ferry
                </IfModule>
                DocumentRoot "\(root)"
                AddDefaultCharset utf-8
                <Directory />
                  Options +Indexes
                  Require all granted
                  IndexOptions Charset=UTF-8
                </Directory>
                Alias /fancy/ "\(root)/"
                <Location /fancy/>
                  IndexOptions FancyIndexing Charset=UTF-8
                </Location>
                Alias /table/ "\(root)/"
                <Location /table/>
                  IndexOptions FancyIndexing HTMLTable Charset=UTF-8
                </Location>
                """
            try conf.write(toFile: dir.file("httpd.conf"), atomically: true, encoding: .utf8)
            return try ServerProcess(
                apache, ["-X", "-f", dir.file("httpd.conf")], logPath: dir.file("stdout.log"))
        }
    }

    deinit { process.stop() }

    /// `http://127.0.0.1:PORT` + path.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Lines of the access log.
    public var accessLog: [String] {
        ((try? String(contentsOfFile: accessLogPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    public func stop() { process.stop() }
}

/// lighttpd on 127.0.0.1 with `mod_dirlisting` on, serving `root`.
public final class LighttpdServer: Sendable {
    public let port: Int
    public let root: String
    private let process: ServerProcess
    private let dir: TempDir

    /// Whether lighttpd is installed.
    public static var isAvailable: Bool { TestProcess.which("lighttpd") != nil }

    public init(root: String) throws {
        guard let lighttpd = TestProcess.which("lighttpd") else {
            throw TestServerError.missing("lighttpd (apt-get install lighttpd)")
        }
        let dir = try TempDir(prefix: "lighttpd")
        self.dir = dir
        self.root = root
        (port, process) = try ServerProcess.listening("lighttpd") { port in
            let conf = """
                server.document-root = "\(root)"
                server.bind = "127.0.0.1"
                server.port = \(port)
                server.modules = ("mod_dirlisting")
                dir-listing.activate = "enable"
                dir-listing.encoding = "utf-8"
                server.errorlog = "\(dir.file("error.log"))"
                """
            try conf.write(toFile: dir.file("lighttpd.conf"), atomically: true, encoding: .utf8)
            return try ServerProcess(
                lighttpd, ["-D", "-f", dir.file("lighttpd.conf")], logPath: dir.file("stdout.log"))
        }
    }

    deinit { process.stop() }

    /// `http://127.0.0.1:PORT` + path.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    public func stop() { process.stop() }
}
