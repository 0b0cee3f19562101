import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Keys and a `known_hosts` line for SSH test servers, made with `ssh-keygen`.
public struct SSHTestKeys: Sendable {
    /// The server's ed25519 host key (private; `.pub` beside it).
    public let hostKey: String
    /// A client ed25519 key (private, no passphrase; `.pub` beside it).
    public let clientKey: String

    /// Makes a host key and a client key in `dir`.
    public static func make(in dir: String, passphrase: String = "") throws -> SSHTestKeys {
        let keys = SSHTestKeys(hostKey: dir + "/host_ed25519", clientKey: dir + "/client_ed25519")
        try generate(keys.hostKey)
        try generate(keys.clientKey, passphrase: passphrase)
        return keys
    }

    /// Runs `ssh-keygen` for one ed25519 key.
    public static func generate(_ path: String, type: String = "ed25519", passphrase: String = "") throws {
        let keygen = try TestProcess.require("ssh-keygen", missing: "ssh-keygen")
        let out = try TestProcess.run(keygen, ["-q", "-t", type, "-N", passphrase, "-C", "ferry-test", "-f", path])
        guard out.status == 0 else { throw TestServerError.didNotStart("ssh-keygen: \(out.stderr)") }
    }

    /// The public half of a key file.
    public static func publicKey(of path: String) throws -> String {
        try String(contentsOfFile: path + ".pub", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The SHA256 fingerprint of a key, as `ssh-keygen -l` prints it.
    public static func fingerprint(of path: String) throws -> String {
        let out = try TestProcess.run(TestProcess.which("ssh-keygen") ?? "ssh-keygen", ["-l", "-f", path + ".pub"])
        return out.stdout.split(separator: " ").dropFirst().first.map(String.init) ?? ""
    }
}

/// OpenSSH's `sshd` on 127.0.0.1 with a free port, in the foreground with its own
/// config, host key and `authorized_keys` in a temporary folder (public key login
/// only), serving SFTP with `internal-sftp`. Paths are the machine's own: tests
/// work inside `root`, an absolute path.
public final class OpenSSHTestServer: Sendable {
    public let port: Int
    /// A folder for the test's files (absolute; its SFTP path is the same).
    public let root: String
    public let keys: SSHTestKeys
    /// The user sshd lets in (the user running the tests).
    public let user: String
    private let dir: TempDir
    private let rootDir: TempDir
    private let process: SpawnedProcess

    /// Starts sshd.
    ///
    /// - Throws: `TestServerError.missing` without `/usr/sbin/sshd` (Debian's
    ///   `openssh-server`, installed by `scripts/setup.sh`).
    public init(extraAuthorizedKeys: [String] = []) async throws {
        let sshd = try TestProcess.require("sshd", missing: "sshd (openssh-server)")
        dir = try TempDir(prefix: "sshd")
        rootDir = try TempDir(prefix: "sshd-root")
        root = rootDir.path
        keys = try SSHTestKeys.make(in: dir.path)
        user = String(cString: getpwuid(geteuid()).pointee.pw_name)
        let authorized = ([try SSHTestKeys.publicKey(of: keys.clientKey)] + extraAuthorizedKeys).joined(separator: "\n")
        try (authorized + "\n").write(toFile: dir.file("authorized_keys"), atomically: true, encoding: .utf8)
        chmod(dir.file("authorized_keys"), 0o600)
        // sshd as root needs its privilege separation folder.
        if geteuid() == 0 { mkdir("/run/sshd", 0o755) }
        let dir = self.dir
        let hostKey = keys.hostKey
        (port, process) = try await SpawnedProcess.listening("sshd") { port in
            let config = """
                Port \(port)
                ListenAddress 127.0.0.1
                HostKey \(hostKey)
                AuthorizedKeysFile \(dir.file("authorized_keys"))
                PidFile none
                UsePAM no
                StrictModes no
                PermitRootLogin prohibit-password
                PubkeyAuthentication yes
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                MaxStartups 64:30:100
                MaxSessions 64
                Subsystem sftp internal-sftp
                LogLevel VERBOSE
                """
            try config.write(toFile: dir.file("sshd_config"), atomically: true, encoding: .utf8)
            return try SpawnedProcess(
                sshd, ["-D", "-e", "-f", dir.file("sshd_config")], logPath: dir.file("sshd-\(port).log"))
        }
    }

    deinit { process.stop(grace: 0.05) }

    /// Stops sshd now.
    public func stop() { process.stop(grace: 0.05) }

    /// What sshd logged.
    public var log: String { process.log }

    /// The server's line for a `known_hosts` file.
    public func knownHostsLine() throws -> String {
        let parts = try SSHTestKeys.publicKey(of: keys.hostKey).split(separator: " ")
        return "[127.0.0.1]:\(port) \(parts[0]) \(parts[1])"
    }

    /// An `sftp://` URL of a path inside `root` (`name` is percent-encoded here).
    public func url(_ name: String = "") -> String {
        let encoded = name.addingPercentEncoding(
            withAllowedCharacters: .urlPathAllowed.subtracting(.init(charactersIn: "?#;")))!
        return "sftp://\(user)@127.0.0.1:\(port)\(root)/\(encoded)"
    }

    /// The local path of a name inside `root`.
    public func local(_ name: String) -> String { root + "/" + name }
}
