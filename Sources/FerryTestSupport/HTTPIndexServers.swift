import Foundation

/// Apache httpd on 127.0.0.1 with a temporary config, serving `root` with
/// `mod_autoindex`: `/` the plain list (no FancyIndexing), `/fancy/` with
/// FancyIndexing (a `<pre>` table with sort links), `/table/` with HTMLTable.
///
/// Runs as one process (`-X`), so stopping it leaves no children behind.
public final class ApacheServer: LoggingHTTPServer {
    public let port: Int
    public let root: String
    public let accessLogPath: String
    private let process: ServerProcess
    private let dir: TempDir

    /// Whether Apache is installed.
    public static var isAvailable: Bool { TestProcess.which("apache2") != nil }

    public init(root: String) throws {
        let apache = try TestProcess.require("apache2", missing: "apache2 (apt-get install apache2)")
        let dir = try TempDir(prefix: "apache")
        self.dir = dir
        self.root = root
        let accessLogPath = dir.file("access.log")
        self.accessLogPath = accessLogPath
        let modules = ["mpm_event", "authz_core", "autoindex", "dir", "mime", "alias", "log_config"]
        (port, process) = try ApacheProcess.listening(apache, dir: dir, modules: modules) { _ in
            """
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
        }
    }

    deinit { process.stop() }

    public func stop() { process.stop() }
}

/// What the tests' Apache servers share (`ApacheServer`, `ApacheDAVServer`): one
/// process (`-X`) on a free 127.0.0.1 port, its configuration, pid and logs in `dir`.
enum ApacheProcess {
    /// Starts `apache` on `dir`/httpd.conf: the server root, pid file and `Listen`
    /// line for the port, those of `modules` that are installed, the error log
    /// (the diagnostics of a failed start), then what `config` gives for the port.
    static func listening(
        _ apache: String, dir: TempDir, modules: [String], config: (_ port: Int) throws -> String
    ) throws -> (port: Int, process: ServerProcess) {
        let folder = "/usr/lib/apache2/modules"
        let load = modules.filter { FileManager.default.fileExists(atPath: "\(folder)/mod_\($0).so") }
            .map { "LoadModule \($0)_module \(folder)/mod_\($0).so" }
            .joined(separator: "\n")
        let errors = { (try? String(contentsOfFile: dir.file("error.log"), encoding: .utf8)) ?? "" }
        return try ServerProcess.listening("apache2", diagnostics: errors) { port in
            let conf = """
                ServerRoot \(dir.path)
                DefaultRuntimeDir \(dir.path)
                PidFile \(dir.file("httpd.pid"))
                Listen 127.0.0.1:\(port)
                ServerName 127.0.0.1
                \(load)
                ErrorLog \(dir.file("error.log"))
                \(try config(port))
                """
            try conf.write(toFile: dir.file("httpd.conf"), atomically: true, encoding: .utf8)
            return try ServerProcess(apache, ["-X", "-f", dir.file("httpd.conf")], logPath: dir.file("stdout.log"))
        }
    }
}

/// lighttpd on 127.0.0.1 with `mod_dirlisting` on, serving `root`.
public final class LighttpdServer: LoopbackHTTPServer {
    public let port: Int
    public let root: String
    private let process: ServerProcess
    private let dir: TempDir

    /// Whether lighttpd is installed.
    public static var isAvailable: Bool { TestProcess.which("lighttpd") != nil }

    public init(root: String) throws {
        let lighttpd = try TestProcess.require("lighttpd", missing: "lighttpd (apt-get install lighttpd)")
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

    public func stop() { process.stop() }
}
