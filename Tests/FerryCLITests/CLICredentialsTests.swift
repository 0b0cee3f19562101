import FerryTestSupport
import Foundation
import Testing

/// `ferry get` resolves credentials for HTTP as for FTP (the URL, then
/// `FERRY_USER`/`FERRY_PASSWORD`, then `~/.netrc`), and trusts a custom CA with
/// `--cacert`, `SSL_CERT_FILE` or `CURL_CA_BUNDLE` (issue 14, items 3 and 4).
/// Against nginx with `auth_basic` and a self-signed certificate.
@Suite(.serialized)
struct CLICredentialsTests {
    let www: TempDir
    let work: TempDir
    let nginx: NginxServer
    let ferry = TestProcess.ferryExecutable()
    static let user = "alice"
    static let password = "open sesame"

    init() throws {
        www = try TempDir(prefix: "cli-auth-www")
        work = try TempDir(prefix: "cli-auth")
        try TestData.file(www.file("secret.txt"), size: 3_000)
        nginx = try NginxServer(root: www.path, basicAuth: (user: Self.user, password: Self.password))
    }

    /// Runs ferry without the caller's credential and CA variables, with `env`
    /// and a HOME without a .netrc unless `env` names another.
    func run(_ args: [String], env: [String: String] = [:]) throws -> TestProcess.Output {
        let cleared = ["NETRC", "FERRY_USER", "FERRY_PASSWORD", "SSL_CERT_FILE", "CURL_CA_BUNDLE"].flatMap {
            ["-u", $0]
        }
        let set = ["HOME": work.file("nohome")].merging(env) { $1 }.map { "\($0.key)=\($0.value)" }
        return try TestProcess.run("/usr/bin/env", cleared + set + [ferry] + args, cwd: work.path)
    }

    func fetched(_ name: String) -> Int {
        (try? Data(contentsOf: URL(fileURLWithPath: work.file(name))).count) ?? -1
    }

    @Test func httpWithoutCredentialsIsRefused() throws {
        let out = try run(["get", nginx.url("/private/secret.txt"), "-o", "none.txt"])
        #expect(out.status != 0)
        #expect(out.stderr.contains("401"), "\(out.stderr)")
    }

    @Test func httpFromNetrcInHome() throws {
        let home = work.file("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try "machine 127.0.0.1 login \(Self.user) password \"\(Self.password)\"\n".write(
            toFile: home + "/.netrc", atomically: true, encoding: .utf8)
        let out = try run(["get", nginx.url("/private/secret.txt"), "-o", "netrc.txt"], env: ["HOME": home])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(fetched("netrc.txt") == 3_000)
    }

    /// One `get` of many URLs resolves credentials once per server and user, not
    /// once per URL (issue 19): each URL must still get its own user's entry.
    @Test func manyURLsEachGetTheirOwnUsersCredentials() throws {
        for name in ["b.txt", "c.txt", "d.txt", "e.txt"] { try TestData.file(www.file(name), size: 1_000) }
        let home = work.file("many")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try """
        machine 127.0.0.1 login \(Self.user) password "\(Self.password)"
        machine 127.0.0.1 login mallory password wrong
        """.write(toFile: home + "/.netrc", atomically: true, encoding: .utf8)
        let url = { (user: String, file: String) in
            self.nginx.url("/private/\(file)").replacingOccurrences(of: "://", with: "://\(user)")
        }
        let out = try run(
            [
                "get", url("", "secret.txt"), url("mallory@", "b.txt"), url("\(Self.user)@", "c.txt"),
                url("\(Self.user):bad@", "d.txt"), url("", "e.txt"), "-o", "many-out/",
            ], env: ["HOME": home])
        #expect(out.status == 1, "\(out.stderr)")
        #expect(fetched("many-out/secret.txt") == 3_000)
        #expect(fetched("many-out/c.txt") == 1_000)
        #expect(fetched("many-out/e.txt") == 1_000)
        // mallory's entry, and the password in the URL, are used for theirs.
        #expect(fetched("many-out/b.txt") == -1)
        #expect(fetched("many-out/d.txt") == -1)
        #expect(out.stderr.contains("b.txt") && out.stderr.contains("d.txt"), "\(out.stderr)")
        #expect(!out.stderr.contains(Self.password) && !out.stderr.contains("wrong"))
    }

    @Test func httpFromFerryPasswordWithTheUserInTheURL() throws {
        let url = nginx.url("/private/secret.txt").replacingOccurrences(of: "://", with: "://\(Self.user)@")
        let out = try run(["get", url, "-o", "env.txt"], env: ["FERRY_PASSWORD": Self.password])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(fetched("env.txt") == 3_000)
        #expect(!out.stderr.contains(Self.password))
    }

    @Test func httpFromFerryUserAndPassword() throws {
        let out = try run(
            ["get", nginx.url("/private/secret.txt"), "-o", "env2.txt"],
            env: ["FERRY_USER": Self.user, "FERRY_PASSWORD": Self.password])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(fetched("env2.txt") == 3_000)
    }

    @Test func httpFromTheURL() throws {
        let encoded = Self.password.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let url = nginx.url("/private/secret.txt").replacingOccurrences(of: "://", with: "://\(Self.user):\(encoded)@")
        let out = try run(["get", url, "-o", "url.txt"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(fetched("url.txt") == 3_000)
        // nginx logs a request after its response went out: give it a moment.
        let logged = { self.nginx.accessLog.contains { $0.contains("user=\(Self.user)") && $0.contains("status=200") } }
        for _ in 0..<100 where !logged() { usleep(50_000) }
        #expect(logged())
    }

    @Test func selfSignedServerTrustedWithCacertOrTheEnvironment() throws {
        let cert = try TestCertificate.shared()
        let https = try NginxServer(root: www.path, tls: cert)
        let url = https.url("/secret.txt")

        let refused = try run(["get", url, "-o", "no.txt"])
        #expect(refused.status != 0)
        for hint in ["--cacert", "SSL_CERT_FILE", "CURL_CA_BUNDLE"] {
            #expect(refused.stderr.contains(hint), "\(refused.stderr)")
        }

        let flag = try run(["get", url, "-o", "flag.txt", "--cacert", cert.certificatePath])
        #expect(flag.status == 0, "\(flag.stderr)")
        #expect(fetched("flag.txt") == 3_000)

        for name in ["SSL_CERT_FILE", "CURL_CA_BUNDLE"] {
            let out = try run(["get", url, "-o", "\(name).txt"], env: [name: cert.certificatePath])
            #expect(out.status == 0, "\(name): \(out.stderr)")
            #expect(fetched("\(name).txt") == 3_000)
        }
        // --cacert names the one file trusted: a wrong one is not rescued by the environment.
        let wrong = try run(
            ["get", url, "-o", "wrong.txt", "--cacert", "/etc/ssl/certs/ca-certificates.crt"],
            env: ["SSL_CERT_FILE": cert.certificatePath])
        #expect(wrong.status != 0, "\(wrong.stderr)")
    }
}
