import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The FTP servers the tests run against.
public enum FTPServerKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// vsftpd: `LIST` only, anonymous (read, and write in `/pub`), strict.
    case vsftpd
    /// pyftpdlib: `MLSD`, user and password, permission letters, throttling.
    case pyftpdlib
    /// proftpd: `MLSD` with UNIX facts, user and password.
    case proftpd

    public var description: String { rawValue }
}

/// How a test FTP server speaks TLS.
public enum FTPTestTLS: String, Sendable {
    /// Plain FTP.
    case none
    /// `AUTH TLS` on the plain port (`ftpes://`).
    case explicit
    /// TLS from the first byte (`ftps://`).
    case implicit
}

/// What a test FTP server offers.
public struct FTPTestServerOptions: Sendable {
    /// Plain, explicit or implicit TLS (with `TestCertificate`).
    public var tls: FTPTestTLS = .none
    /// Data-channel rate limit in bytes per second (pyftpdlib only).
    public var throttle: Int?
    /// Folders (FTP paths) where the user may list and read but not write (pyftpdlib only).
    public var readOnlyFolders: [String] = []
    /// Refuse RNFR/RNTO (pyftpdlib only: the `f` permission letter is left out).
    public var refuseRename = false
    /// Answer `421` to connections beyond this many from one address (pyftpdlib only),
    /// as many hosting servers do.
    public var maxConnectionsPerIP: Int?
    /// Commands the server does not know (pyftpdlib only): it answers them
    /// `500 Command not understood` and leaves them out of `FEAT`, like servers
    /// without `SIZE`, `MDTM`, `REST`, `EPSV`, `MLSD` or `FEAT` itself.
    public var withoutCommands: [String] = []
    /// The address the server names in its `PASV` replies (pyftpdlib only), as a
    /// server behind NAT names a private or public address that is not this one.
    public var passiveAddress: String?
    /// Answer `550` to `LIST` and `MLSD` of an empty folder (pyftpdlib only), as
    /// some embedded and Windows servers do.
    public var emptyFolderListing550 = false
    /// Take the first bytes of every upload's data connection, then drop it and
    /// answer `425` (pyftpdlib only): a server that refuses data connections for
    /// ever, after the client began sending, as proftpd did to TLS sessions it
    /// would not accept.
    public var refuseUploadData = false

    /// Options for `FTPTestServer`; the defaults give a plain server.
    public init(
        tls: FTPTestTLS = .none, throttle: Int? = nil, readOnlyFolders: [String] = [], refuseRename: Bool = false,
        maxConnectionsPerIP: Int? = nil, withoutCommands: [String] = [], passiveAddress: String? = nil,
        emptyFolderListing550: Bool = false, refuseUploadData: Bool = false
    ) {
        self.tls = tls
        self.throttle = throttle
        self.readOnlyFolders = readOnlyFolders
        self.refuseRename = refuseRename
        self.maxConnectionsPerIP = maxConnectionsPerIP
        self.withoutCommands = withoutCommands
        self.passiveAddress = passiveAddress
        self.emptyFolderListing550 = emptyFolderListing550
        self.refuseUploadData = refuseUploadData
    }
}

/// A real FTP server on 127.0.0.1 with a free port, serving a temporary folder,
/// stopped when released.
///
/// Every server has a writable folder `/pub` where tests create their files with
/// `write(_:at:)`/`makeFolder(_:)`, which set permissions the server's session
/// user can work with (vsftpd serves anonymous users as `ftp`).
public final class FTPTestServer: Sendable {
    /// Which server program runs.
    public let kind: FTPServerKind
    /// What it was started with.
    public let options: FTPTestServerOptions
    /// The control port on 127.0.0.1.
    public let port: Int
    /// The local folder the FTP root maps to.
    public let root: String
    /// User and password, nil for anonymous (vsftpd).
    public let user: String?
    public let password: String?
    private let dir: TempDir
    private let rootDir: TempDir
    private let process: SpawnedProcess
    private let logPath: String

    /// The password the servers accept.
    public static let testPassword = "s3cret pass"
    static let testPasswordHash =
        "$6$ferrytestsalt$mveesTvLuJ6xr7Fc9yWNAw1Ss2wqqpC19dFmRdmHOwud9njYBPQ7mtK7zL74wNzgCJmBYfLN1viSepFrnbvWF."

    /// Starts a server.
    ///
    /// - Throws: `TestServerError.missing` when the server is not installed
    ///   (run `scripts/ftp-test-servers.sh`), `.didNotStart` when it did not listen.
    public init(_ kind: FTPServerKind, options: FTPTestServerOptions = .init()) async throws {
        self.kind = kind
        self.options = options
        dir = try TempDir(prefix: "ftp-\(kind)")
        rootDir = try TempDir(prefix: "ftp-\(kind)-root")
        root = rootDir.path
        // vsftpd refuses an anonymous chroot its session user can write to: the
        // root stays root's 0755, writes go to /pub (0777).
        chmod(root, 0o755)
        try FileManager.default.createDirectory(atPath: root + "/pub", withIntermediateDirectories: true)
        chmod(root + "/pub", 0o777)
        if options.tls != .none { _ = try TestCertificate.shared() }
        if kind == .vsftpd {
            user = nil
            password = nil
        } else {
            user = "ferry"
            password = Self.testPassword
        }
        // A port that was free a moment ago may be taken by the time the server
        // binds it (another test's data connection): then the server exits, and
        // we try another port.
        var failure = ""
        for _ in 0..<3 {
            let port = Loopback.freePort()
            let started: (SpawnedProcess, String)
            switch kind {
            case .vsftpd: started = try Self.startVsftpd(dir: dir, root: root, port: port, options: options)
            case .pyftpdlib: started = try Self.startPyftpdlib(dir: dir, root: root, port: port, options: options)
            case .proftpd: started = try Self.startProftpd(dir: dir, root: root, port: port, options: options)
            }
            let (process, logPath) = started
            if await process.waitForPort(port) {
                try await Task.sleep(for: .milliseconds(100))
                if process.isRunning {
                    self.port = port
                    self.process = process
                    self.logPath = logPath
                    return
                }
            }
            failure = process.log + ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")
            process.stop()
        }
        throw TestServerError.didNotStart("\(kind): " + failure)
    }

    /// A passive-mode port range outside the kernel's ephemeral range (32768-60999
    /// on Linux), so it never overlaps the listening ports `Loopback.freePort` hands out.
    static func passivePorts() -> ClosedRange<Int> {
        let base = Int.random(in: 20_000...31_000)
        return base...(base + 150)
    }

    // A test server keeps nothing worth a graceful shutdown, and proftpd takes
    // 0.3 s over one: a short grace keeps test threads from waiting.
    deinit { process.stop(grace: 0.05) }

    /// Stops the server now.
    public func stop() { process.stop(grace: 0.05) }

    /// The URL scheme matching the TLS mode.
    public var scheme: String {
        switch options.tls {
        case .none: "ftp"
        case .explicit: "ftpes"
        case .implicit: "ftps"
        }
    }

    /// A URL for an FTP path (already percent-encoded as needed), with the
    /// credentials in it unless `credentials` is false or the server is anonymous.
    public func url(_ path: String, credentials: Bool = true, password: String? = nil) -> String {
        var auth = ""
        if credentials, let user {
            let pass = (password ?? self.password ?? "").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            auth = "\(user):\(pass)@"
        }
        return "\(scheme)://\(auth)127.0.0.1:\(port)\(path)"
    }

    /// The local path of an FTP path.
    public func local(_ path: String) -> String { root + (path.hasPrefix("/") ? path : "/" + path) }

    /// Creates a file at an FTP path, readable and writable by the server's session user.
    @discardableResult
    public func write(_ data: Data, at path: String) throws -> Data {
        let p = local(path)
        try FileManager.default.createDirectory(
            atPath: testParentFolder(p), withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: p))
        chmod(p, 0o666)
        return data
    }

    /// Creates a folder at an FTP path that the server's session user may write in.
    public func makeFolder(_ path: String) throws {
        let p = local(path)
        try FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        chmod(p, 0o777)
    }

    /// The server's log so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Successful logins so far, read from the server's log.
    public var loginCount: Int {
        let lines = log.split(separator: "\n")
        switch kind {
        case .vsftpd: return lines.filter { $0.contains("OK LOGIN") }.count
        case .pyftpdlib: return lines.filter { $0.contains("logged in.") }.count
        case .proftpd: return lines.filter { $0.contains("\"PASS (hidden)\" 230") }.count
        }
    }

    // MARK: vsftpd

    /// The system user vsftpd serves anonymous sessions as. vsftpd changes into its
    /// home first, so it must exist: `ftp` comes with Debian's FTP server packages
    /// (which may not be installed here), `daemon` (home /usr/sbin) with every system.
    static var anonymousUser: String {
        if let pw = getpwnam("ftp"), access(pw.pointee.pw_dir, X_OK) == 0 { return "ftp" }
        return "daemon"
    }

    private static func startVsftpd(dir: TempDir, root: String, port: Int, options: FTPTestServerOptions) throws
        -> (SpawnedProcess, String)
    {
        let binary = try FTPTestBinaries.vsftpd()
        let empty = dir.file("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        chmod(empty, 0o755)
        let log = dir.file("vsftpd.log")
        let pasv = passivePorts()
        var conf = """
            listen=YES
            listen_ipv6=NO
            listen_address=127.0.0.1
            listen_port=\(port)
            background=NO
            anonymous_enable=YES
            no_anon_password=YES
            local_enable=NO
            anon_root=\(root)
            ftp_username=\(anonymousUser)
            write_enable=YES
            anon_upload_enable=YES
            anon_mkdir_write_enable=YES
            anon_other_write_enable=YES
            anon_umask=022
            file_open_mode=0666
            allow_writeable_chroot=YES
            seccomp_sandbox=NO
            isolate=NO
            isolate_network=NO
            secure_chroot_dir=\(empty)
            pasv_enable=YES
            pasv_min_port=\(pasv.lowerBound)
            pasv_max_port=\(pasv.upperBound)
            xferlog_enable=YES
            vsftpd_log_file=\(log)
            log_ftp_protocol=YES
            dual_log_enable=NO
            max_clients=200
            max_per_ip=200
            idle_session_timeout=120
            data_connection_timeout=60

            """
        if options.tls != .none {
            let cert = try TestCertificate.shared()
            conf += """
                ssl_enable=YES
                allow_anon_ssl=YES
                force_anon_logins_ssl=YES
                force_anon_data_ssl=YES
                rsa_cert_file=\(cert.certificatePath)
                rsa_private_key_file=\(cert.keyPath)
                implicit_ssl=\(options.tls == .implicit ? "YES" : "NO")

                """
        }
        try conf.write(toFile: dir.file("vsftpd.conf"), atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = try SpawnedProcess(binary, [dir.file("vsftpd.conf")], logPath: dir.file("stdout.log"))
        return (process, log)
    }

    // MARK: pyftpdlib

    private static func startPyftpdlib(dir: TempDir, root: String, port: Int, options: FTPTestServerOptions) throws
        -> (SpawnedProcess, String)
    {
        let python = try FTPTestBinaries.venvPython()
        let script = dir.file("ftpserver.py")
        try pyftpdlibScript.write(toFile: script, atomically: true, encoding: .utf8)
        var args = [
            script, "--port", String(port), "--root", root, "--user", "ferry", "--password", testPassword,
            "--tls", options.tls.rawValue,
        ]
        if options.tls != .none {
            let cert = try TestCertificate.shared()
            args += ["--cert", cert.certificatePath, "--key", cert.keyPath]
        }
        if let throttle = options.throttle { args += ["--throttle", String(throttle)] }
        for folder in options.readOnlyFolders { args += ["--read-only", folder] }
        if options.refuseRename { args.append("--no-rename") }
        if let n = options.maxConnectionsPerIP { args += ["--max-per-ip", String(n)] }
        for command in options.withoutCommands { args += ["--without", command] }
        if let address = options.passiveAddress { args += ["--passive-address", address] }
        if options.emptyFolderListing550 { args.append("--empty-550") }
        if options.refuseUploadData { args.append("--refuse-upload-data") }
        let log = dir.file("pyftpdlib.log")
        let process = try SpawnedProcess(python, args, logPath: log)
        return (process, log)
    }

    // MARK: proftpd

    private static func startProftpd(dir: TempDir, root: String, port: Int, options: FTPTestServerOptions) throws
        -> (SpawnedProcess, String)
    {
        let (binary, modules) = try FTPTestBinaries.proftpd()
        // A virtual user with uid 0 (the tests run as root): files stay writable
        // by the test on both sides without chown.
        // Precomputed (`openssl passwd -6 -salt ferrytestsalt`): starting a helper
        // process here would race other tests' process launches in Foundation.
        let hash = testPasswordHash
        try "ferry:\(hash):0:0::\(root):/bin/sh\n".write(toFile: dir.file("passwd"), atomically: true, encoding: .utf8)
        try "root:x:0:\n".write(toFile: dir.file("group"), atomically: true, encoding: .utf8)
        // proftpd refuses auth files others can read.
        chmod(dir.file("passwd"), 0o600)
        chmod(dir.file("group"), 0o600)
        let log = dir.file("extended.log")
        let pasv = passivePorts()
        var conf = """
            ServerName "ferry-test"
            ServerType standalone
            DefaultServer on
            Port \(port)
            DefaultAddress 127.0.0.1
            SocketBindTight on
            UseIPv6 off
            User root
            Group root
            RootLogin on
            PidFile \(dir.file("proftpd.pid"))
            ScoreboardFile \(dir.file("scoreboard"))
            DelayTable none
            WtmpLog off
            UseReverseDNS off
            AuthOrder mod_auth_file.c
            AuthUserFile \(dir.file("passwd"))
            AuthGroupFile \(dir.file("group"))
            RequireValidShell off
            DefaultRoot ~
            AllowOverwrite on
            AllowStoreRestart on
            AllowRetrieveRestart on
            PassivePorts \(pasv.lowerBound) \(pasv.upperBound)
            SystemLog \(dir.file("system.log"))
            ExtendedLog \(log) ALL
            TransferLog none
            Umask 022
            MaxInstances 200
            TimeoutIdle 120

            """
        if options.tls != .none {
            // mod_tls's defaults otherwise, session reuse required on data
            // connections among them, as Debian packages it.
            let cert = try TestCertificate.shared()
            conf += """
                ModulePath \(modules)
                LoadModule mod_tls.c
                <IfModule mod_tls.c>
                TLSEngine on
                TLSRSACertificateFile \(cert.certificatePath)
                TLSRSACertificateKeyFile \(cert.keyPath)
                TLSRequired on
                \(options.tls == .implicit ? "TLSOptions UseImplicitSSL" : "")
                TLSLog \(dir.file("tls.log"))
                </IfModule>

                """
        }
        try conf.write(toFile: dir.file("proftpd.conf"), atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = try SpawnedProcess(
            binary, ["-n", "-q", "-c", dir.file("proftpd.conf")], logPath: dir.file("stdout.log"))
        return (process, log)
    }
}

/// Where the FTP server programs are: on PATH, or unpacked by
/// `scripts/ftp-test-servers.sh` into `.build/ftp-servers/root` (Debian's
/// vsftpd and proftpd conflict as packages, so at most one can be installed).
public enum FTPTestBinaries {
    static var unpacked: String { TestProcess.packageRoot() + "/.build/ftp-servers/root" }

    /// Runs the install script once per process when something is missing.
    private static let installed: Mutex<Bool?> = Mutex(nil)

    private static func ensureInstalled() {
        installed.withLock { done in
            guard done == nil else { return }
            let script = TestProcess.packageRoot() + "/scripts/ftp-test-servers.sh"
            let out = try? TestProcess.run("/bin/bash", [script])
            done = out?.status == 0
        }
    }

    /// The vsftpd program.
    public static func vsftpd() throws -> String {
        if let p = TestProcess.which("vsftpd") { return p }
        let p = unpacked + "/usr/sbin/vsftpd"
        if access(p, X_OK) != 0 { ensureInstalled() }
        guard access(p, X_OK) == 0 else {
            throw TestServerError.missing("vsftpd (run scripts/ftp-test-servers.sh)")
        }
        return p
    }

    /// The proftpd program and the folder of its modules (mod_tls).
    public static func proftpd() throws -> (binary: String, modules: String) {
        let p = unpacked + "/usr/sbin/proftpd"
        if access(p, X_OK) != 0, TestProcess.which("proftpd") == nil { ensureInstalled() }
        // The unpacked copy first: its modules match it.
        if access(p, X_OK) == 0 { return (p, unpacked + "/usr/lib/proftpd") }
        if let p = TestProcess.which("proftpd") { return (p, "/usr/lib/proftpd") }
        throw TestServerError.missing("proftpd (run scripts/ftp-test-servers.sh)")
    }

    /// Python in the test venv, with pyftpdlib and pyOpenSSL.
    public static func venvPython() throws -> String {
        let venv = TestProcess.packageRoot() + "/.build/test-venv"
        // Checked on disk rather than by running python: launching processes from
        // parallel tests can hang Foundation's Process.
        func ready() -> Bool {
            guard access(venv + "/bin/python", X_OK) == 0,
                let libs = try? FileManager.default.contentsOfDirectory(atPath: venv + "/lib")
            else { return false }
            return libs.contains { lib in
                let site = venv + "/lib/" + lib + "/site-packages/"
                return FileManager.default.fileExists(atPath: site + "pyftpdlib")
                    && FileManager.default.fileExists(atPath: site + "OpenSSL")
            }
        }
        if !ready() { ensureInstalled() }
        guard ready() else { throw TestServerError.missing("pyftpdlib (run scripts/ftp-test-servers.sh)") }
        return venv + "/bin/python"
    }
}
