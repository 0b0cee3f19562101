import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Samba's `smbd` on 127.0.0.1 with a free port, in the foreground with its own
/// `smb.conf` and every state folder (lock, state, cache, private, pid, log)
/// inside a temporary folder, no NetBIOS. A user is added to its own tdbsam
/// (`smbpasswd -a -s`); the OS user must exist, so the shares run as the user
/// running the tests (`force user`).
///
/// Shares: `guest` (guests may write), `user` (only `user` with `password`),
/// `enc` (the same user, `smb encrypt = required`). With `shareList`, Samba's
/// RPC helper (`samba-dcerpcd`) runs too, which `smb://HOST/` share lists need;
/// it also listens on 127.0.0.1:135, so only one such server runs at a time.
public final class SambaTestServer: Sendable {
    public let port: Int
    /// The folders behind the shares: `guest`, `user`, `enc` inside it.
    public let root: String
    /// The SMB user and password (the OS user running the tests).
    public let user: String
    public let password = "ferry-secret"
    /// The server's `smb.conf` (for `smbstatus -s`).
    public let configFile: String
    private let dir: TempDir
    private let process: SpawnedProcess
    private let rpc: SpawnedProcess?

    /// Starts smbd (and samba-dcerpcd with `shareList`); `logLevel` is smbd's.
    ///
    /// - Throws: `TestServerError.missing` without `smbd` (Debian's `samba`, installed by `scripts/setup.sh`).
    public init(shareList: Bool = false, logLevel: Int = 1) async throws {
        guard
            let smbd = TestProcess.which("smbd")
                ?? (FileManager.default.fileExists(atPath: "/usr/sbin/smbd")
                    ? "/usr/sbin/smbd" : nil)
        else { throw TestServerError.missing("smbd (samba)") }
        let smbpasswd = try TestProcess.require("smbpasswd", missing: "smbpasswd (samba)")
        let dcerpcd = "/usr/libexec/samba/samba-dcerpcd"
        if shareList && !FileManager.default.fileExists(atPath: dcerpcd) {
            throw TestServerError.missing("samba-dcerpcd (samba)")
        }
        dir = try TempDir(prefix: "smbd")
        let d = dir.path
        root = d + "/shares"
        for sub in ["lock", "state", "cache", "private", "pid", "log", "shares/guest", "shares/user", "shares/enc"] {
            try FileManager.default.createDirectory(atPath: d + "/" + sub, withIntermediateDirectories: true)
        }
        let user = String(cString: getpwuid(geteuid()).pointee.pw_name)
        self.user = user
        let password = self.password
        let conf = d + "/smb.conf"
        configFile = conf
        func config(_ port: Int) -> String {
            """
            [global]
              smb ports = \(port)
              disable netbios = yes
              interfaces = 127.0.0.1
              bind interfaces only = yes
              server role = standalone server
              workgroup = FERRY
              lock directory = \(d)/lock
              state directory = \(d)/state
              cache directory = \(d)/cache
              private dir = \(d)/private
              pid directory = \(d)/pid
              ncalrpc dir = \(d)/state/ncalrpc
              log file = \(d)/log/smbd.log
              log level = \(logLevel)
              passdb backend = tdbsam:\(d)/private/passdb.tdb
              map to guest = Bad User
              server min protocol = SMB2_02
              load printers = no
              printing = bsd
              printcap name = /dev/null
              disable spoolss = yes
              rpc start on demand helpers = false
            [guest]
              path = \(d)/shares/guest
              guest ok = yes
              read only = no
              force user = \(user)
            [user]
              path = \(d)/shares/user
              valid users = \(user)
              read only = no
              force user = \(user)
            [enc]
              path = \(d)/shares/enc
              valid users = \(user)
              read only = no
              force user = \(user)
              smb encrypt = required
            """
        }
        try config(445).write(toFile: conf, atomically: true, encoding: .utf8)
        let added = try TestProcess.run(
            smbpasswd, ["-c", conf, "-a", "-s", user], stdin: password + "\n" + password + "\n")
        guard added.status == 0 else { throw TestServerError.didNotStart("smbpasswd: \(added.stderr)") }
        (port, process) = try await SpawnedProcess.listening("smbd") { port in
            try config(port).write(toFile: conf, atomically: true, encoding: .utf8)
            return try SpawnedProcess(
                smbd, ["--foreground", "--no-process-group", "-s", conf], logPath: d + "/log/smbd-stdout.log")
        }
        if shareList {
            let helper = try SpawnedProcess(
                dcerpcd, ["--foreground", "--libexec-rpcds", "-s", conf], logPath: d + "/log/dcerpcd.log")
            rpc = helper
            // Ready once its named pipes' sockets are there.
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline,
                (try? FileManager.default.contentsOfDirectory(atPath: d + "/state/ncalrpc/np"))?.contains("srvsvc")
                    != true
            {
                try await Task.sleep(for: .milliseconds(50))
            }
        } else {
            rpc = nil
        }
    }

    deinit { stop() }

    /// Stops smbd (and the RPC helper) now.
    public func stop() {
        process.stop(grace: 0.2)
        rpc?.stop(grace: 0.2)
    }

    /// What smbd logged (its log file, at `logLevel`).
    public var log: String { (try? String(contentsOfFile: dir.path + "/log/smbd.log", encoding: .utf8)) ?? "" }

    /// An `smb://` URL of a share's path (`name` percent-encoded here); with the
    /// user (no password) unless `guest`.
    public func url(_ share: String, _ name: String = "", guest: Bool = false, port: Int? = nil) -> String {
        let encoded = name.addingPercentEncoding(
            withAllowedCharacters: .urlPathAllowed.subtracting(.init(charactersIn: "?#;%")))!
        return "smb://\(guest ? "" : user + "@")127.0.0.1:\(port ?? self.port)/\(share)/\(encoded)"
    }

    /// The local path of a name inside a share.
    public func local(_ share: String, _ name: String = "") -> String {
        name.isEmpty ? root + "/" + share : root + "/" + share + "/" + name
    }
}
