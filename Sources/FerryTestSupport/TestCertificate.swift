import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A self-signed certificate for 127.0.0.1, made once per test process with openssl.
public final class TestCertificate: Sendable {
    /// The PEM certificate (CN and subjectAltName 127.0.0.1).
    public let certificatePath: String
    /// The PEM private key, unencrypted.
    public let keyPath: String
    private let dir: TempDir

    private static let made = Mutex<TestCertificate?>(nil)

    /// The process's certificate, made on first use.
    public static func shared() throws -> TestCertificate {
        try made.withLock { made in
            if let made { return made }
            let c = try TestCertificate()
            made = c
            return c
        }
    }

    private init() throws {
        dir = try TempDir(prefix: "cert")
        chmod(dir.path, 0o755)
        certificatePath = dir.file("cert.pem")
        keyPath = dir.file("key.pem")
        let out = try TestProcess.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyPath, "-out", certificatePath,
                "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ])
        guard out.status == 0 else { throw TestServerError.didNotStart("openssl: " + out.stderr) }
    }
}
