import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// pure-ftpd on 127.0.0.1 with a free port, explicit TLS required (`-Y 2`) with
/// `TestCertificate`, one virtual user (`ferry`, `password`)
/// whose home is a temporary folder. Unpacked by `scripts/ftp-test-servers.sh`
/// like vsftpd and proftpd (the three conflict as Debian packages). Stopped when
/// released.
///
/// pure-ftpd runs the session as the virtual user's uid (1, `daemon`), so the
/// folders it writes in must be open to it: `makeFolder` makes them 0777.
public final class PureFTPDServer: Sendable {
    public let port: Int
    /// The local folder the user's FTP root maps to.
    public let root: String
    public let user = "ferry"
    public let password = FTPTestServer.testPassword
    private let dir: TempDir
    private let rootDir: TempDir
    private let process: SpawnedProcess

    public init() async throws {
        let unpacked = TestProcess.packageRoot() + "/.build/ftp-servers/root"
        let binary = unpacked + "/usr/sbin/pure-ftpd"
        let pw = unpacked + "/usr/bin/pure-pw"
        guard access(binary, X_OK) == 0, access(pw, X_OK) == 0 else {
            throw TestServerError.missing("pure-ftpd (run scripts/ftp-test-servers.sh)")
        }
        let cert = try TestCertificate.shared()
        dir = try TempDir(prefix: "pure-ftpd")
        rootDir = try TempDir(prefix: "pure-ftpd-root")
        root = rootDir.path
        chmod(root, 0o777)
        // pure-ftpd wants the key and the certificate in one file.
        let pem =
            try String(contentsOfFile: cert.certificatePath, encoding: .utf8)
            + String(contentsOfFile: cert.keyPath, encoding: .utf8)
        try pem.write(toFile: dir.file("pure-ftpd.pem"), atomically: true, encoding: .utf8)
        // Readable by the session processes too (a test key).
        chmod(dir.file("pure-ftpd.pem"), 0o644)
        // The passwd file by hand, with a SHA-512 crypt hash: `pure-pw useradd`
        // hashes with argon2id tuned to the machine's speed at that moment, and
        // on a busy machine that made every login cost seconds of CPU.
        try "\(user):\(FTPTestServer.testPasswordHash):1:1::\(root)/./::::::::::::\n".write(
            toFile: dir.file("passwd"), atomically: true, encoding: .utf8)
        let made = try TestProcess.run(pw, ["mkdb", dir.file("passwd.pdb"), "-f", dir.file("passwd")])
        guard made.status == 0 else { throw TestServerError.didNotStart("pure-pw: \(made.stderr)") }
        var failure = ""
        for _ in 0..<3 {
            let port = Loopback.freePort()
            let pasv = FTPTestServer.passivePorts()
            let process = try SpawnedProcess(
                binary,
                [
                    "-l", "puredb:" + dir.file("passwd.pdb"), "-S", "127.0.0.1,\(port)", "-Y", "2", "-2",
                    dir.file("pure-ftpd.pem"), "-p", "\(pasv.lowerBound):\(pasv.upperBound)", "-E", "-A", "-H",
                ], logPath: dir.file("stdout.log"))
            if await process.waitForPort(port) {
                self.port = port
                self.process = process
                return
            }
            failure = process.log
            process.stop(grace: 0.05)
        }
        throw TestServerError.didNotStart("pure-ftpd: " + failure)
    }

    deinit { process.stop(grace: 0.05) }

    /// `ftpes://ferry:PASSWORD@127.0.0.1:PORT` + path.
    public func url(_ path: String) -> String {
        let pass = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return "ftpes://\(user):\(pass)@127.0.0.1:\(port)\(path)"
    }

    /// The local path of an FTP path.
    public func local(_ path: String) -> String { root + (path.hasPrefix("/") ? path : "/" + path) }

    /// Creates a folder the session user may write in.
    public func makeFolder(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: local(path), withIntermediateDirectories: true)
        chmod(local(path), 0o777)
    }

    /// What pure-ftpd printed (it logs to syslog; this holds start-up errors).
    public var log: String { process.log }
}
