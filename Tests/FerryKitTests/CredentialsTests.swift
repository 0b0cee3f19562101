import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryKit

#if canImport(Glibc)
    import Glibc
#endif

/// Credentials are explicit (issue 15, item 4; issue 14, item 3): the library
/// reads no environment variable and no `~/.netrc` unless asked; HTTP honours
/// `ConnectionOptions.credentials` and extra headers. Checked on the server side:
/// nginx logs the Basic auth user of every request, pyftpdlib the login.
@Suite(.serialized)
struct CredentialsTests {
    let www: TempDir
    let nginx: NginxServer
    static let user = "alice"
    static let password = "pa ss wörd"  // nginx ends a password at a colon

    init() throws {
        www = try TempDir(prefix: "auth-www")
        try TestData.file(www.file("secret.txt"), size: 5_000)
        nginx = try NginxServer(root: www.path, basicAuth: (user: Self.user, password: Self.password))
    }

    /// The environment and netrc a CLI user would have, set for the duration of `body`.
    /// Serialized with every other test here; nothing else in the test process reads
    /// these variables.
    static func withCLIEnvironment<T>(netrc: String, _ body: () async throws -> T) async rethrows -> T {
        let names = ["FERRY_USER", "FERRY_PASSWORD", "NETRC"]
        let saved = names.map { getenv($0).map { String(cString: $0) } }
        setenv("FERRY_USER", user, 1)
        setenv("FERRY_PASSWORD", password, 1)
        setenv("NETRC", netrc, 1)
        defer {
            for (name, value) in zip(names, saved) {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        return try await body()
    }

    func netrcFile(host: String = "127.0.0.1") throws -> String {
        let path = www.file("../auth-netrc-\(UUID().uuidString)")
        try "machine \(host) login \(Self.user) password \"\(Self.password)\"\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The Basic auth users nginx logged for `path`, once it logged at least
    /// `count` requests for it (nginx writes a line after the response went out,
    /// so a client can be faster than the log; waits up to 5 s).
    func users(of path: String, count: Int = 1) -> [String] {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline && loggedUsers(of: path).count < count { usleep(20_000) }
        return loggedUsers(of: path)
    }

    /// Whether nginx logged `user` for `path`, waiting up to 5 s for the line: a
    /// request libcurl answers after a 401 logs the 401 first, so a wait for any
    /// line could read the log before the authenticated one was written.
    func logged(_ user: String, for path: String) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline && !loggedUsers(of: path).contains(user) { usleep(20_000) }
        return loggedUsers(of: path).contains(user)
    }

    private func loggedUsers(of path: String) -> [String] {
        nginx.accessLog.filter { $0.contains(" \(path) ") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("user=") }.map { String($0.dropFirst(5)) }
        }
    }

    @Test func httpBasicAuthFromCredentials() async throws {
        let url = try RemoteURL(parsing: nginx.url("/private/secret.txt"))
        let fs = try Ferry.fileSystem(
            for: url, options: ConnectionOptions(credentials: Credentials(user: Self.user, password: Self.password)))
        let dir = try TempDir(prefix: "auth")
        let r = try await fs.download(url.path, to: dir.file("s.txt"), options: .init()).result
        #expect(r.size == 5_000)
        #expect(try await fs.stat(url.path).size == 5_000)
        #expect(try await fs.data(at: url.path, limit: 10_000).count == 5_000)
        #expect(try await fs.data(at: url.path, range: 0..<10).count == 10)
        #expect(logged(Self.user, for: "/private/secret.txt"))
        // The folder page too: it was asked with the URL's credentials only (401).
        #expect(try await fs.list("/private/").contains { $0.name == "secret.txt" })
        #expect(logged(Self.user, for: "/private/"))

        // A wrong password: 401, named as such.
        let wrong = try Ferry.fileSystem(
            for: url, options: ConnectionOptions(credentials: Credentials(user: Self.user, password: "nope")))
        let e = try #require(await FTPTest.error { _ = try await wrong.stat(url.path) })
        #expect(e.code == .authenticationFailed && e.serverCode == 401, "\(e)")
        #expect(!e.description.contains("nope"))
    }

    /// A server that asks for Digest gets Digest (libcurl negotiates it from the
    /// 401's challenge); nginx has no Digest module, so a scripted server checks
    /// the answer's form (user, realm, nonce, URI, a 32-digit response), not the hash.
    @Test func httpDigestWhenTheServerAsksForIt() async throws {
        let body = Array("digested".utf8)
        let server = try ScriptedHTTPServer { request in
            let auth = request.headers["authorization"] ?? ""
            let ok =
                auth.hasPrefix("Digest ") && auth.contains("username=\"\(Self.user)\"")
                && auth.contains("realm=\"ferry\"") && auth.contains("nonce=\"n0nce\"")
                && auth.contains("uri=\"/d.txt\"")
                && auth.range(of: #"response="[0-9a-f]{32}""#, options: .regularExpression) != nil
            guard ok else {
                return ScriptedResponse(
                    status: 401, headers: ["WWW-Authenticate": "Digest realm=\"ferry\", nonce=\"n0nce\", qop=\"auth\""])
            }
            return ScriptedResponse(body: body)
        }
        defer { server.stop() }
        let url = try RemoteURL(parsing: server.url("/d.txt"))
        let fs = try Ferry.fileSystem(
            for: url, options: ConnectionOptions(credentials: Credentials(user: Self.user, password: Self.password)))
        let dir = try TempDir(prefix: "digest")
        let r = try await fs.download(url.path, to: dir.file("d.txt"), options: .init()).result
        #expect(r.size == Int64(body.count))
        #expect(server.requests.contains { $0.headers["authorization"]?.hasPrefix("Digest ") == true })
        #expect(!server.requests.contains { $0.headers["authorization"]?.hasPrefix("Basic ") == true })
    }

    @Test func environmentAndNetrcChangeNothingUnlessAsked() async throws {
        let url = try RemoteURL(parsing: nginx.url("/private/secret.txt"))
        let netrc = try netrcFile()
        try await Self.withCLIEnvironment(netrc: netrc) {
            // Not asked: no user goes out, the server refuses.
            let plain = try Ferry.fileSystem(for: url)
            let e = try #require(await FTPTest.error { _ = try await plain.stat(url.path) })
            #expect(e.serverCode == 401, "\(e)")
            #expect(users(of: "/private/secret.txt").allSatisfy { $0 == "-" })

            // Asked: the CLI's resolution finds them.
            let resolved = try Ferry.fileSystem(for: url, options: ConnectionOptions(resolveCredentials: true))
            #expect(try await resolved.stat(url.path).size == 5_000)
            #expect(logged(Self.user, for: "/private/secret.txt"))
        }
        // The same one call, by hand: FERRY_USER/FERRY_PASSWORD first, then the netrc.
        #expect(
            Credentials.resolve(for: url, environment: ["FERRY_USER": "u", "FERRY_PASSWORD": "p"], netrcPath: netrc)
                == Credentials(user: "u", password: "p"))
        #expect(
            Credentials.resolve(for: url, environment: [:], netrcPath: netrc)
                == Credentials(user: Self.user, password: Self.password))
        #expect(Credentials.resolve(for: url, environment: [:], netrcPath: "/nonexistent") == nil)
    }

    /// Without a dictionary, the process's variables are read one by one (getenv),
    /// not through `ProcessInfo.environment`, which built a dictionary of all of
    /// them for every URL of `ferry get URL1 ... URL1000` (issue 19).
    @Test func theProcessEnvironmentIsReadByName() async throws {
        let url = try RemoteURL(parsing: "ftp://127.0.0.1:1/x")
        let netrc = try netrcFile(host: "elsewhere.invalid")
        await Self.withCLIEnvironment(netrc: netrc) {
            #expect(Credentials.resolve(for: url) == Credentials(user: Self.user, password: Self.password))
            #expect(
                ConnectionOptions(resolveCredentials: true).credentials(for: url)
                    == Credentials(user: Self.user, password: Self.password))
            let named = try! RemoteURL(parsing: "ftp://bob@127.0.0.1:1/x")
            #expect(Credentials.resolve(for: named) == Credentials(user: "bob", password: Self.password))
        }
    }

    @Test func ftpLogsInAnonymouslyUnlessAsked() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        let netrc = try netrcFile()
        try await Self.withCLIEnvironment(netrc: netrc) {
            let url = try RemoteURL(parsing: server.url("/pub", credentials: false))
            let fs = try Ferry.fileSystem(for: url)
            _ = try? await fs.list("/pub")
            // pyftpdlib has no anonymous user: the login fails, and no other user was tried.
            #expect(server.loginCount == 0, "\(server.log)")
            #expect(!server.log.contains(Self.user), "\(server.log)")
            #expect(server.log.contains("anonymous"), "\(server.log)")

            let explicit = try Ferry.fileSystem(
                for: url, options: ConnectionOptions(credentials: Credentials(user: "ferry", password: server.password))
            )
            #expect(try await explicit.list("/pub").isEmpty)
            #expect(server.loginCount == 1, "\(server.log)")
        }
    }

    @Test func anonymousIsAValue() throws {
        let url = try RemoteURL(parsing: "ftp://ann:pw@host/x")
        #expect(ConnectionOptions(credentials: .anonymous).credentials(for: url) == nil)
        #expect(ConnectionOptions().credentials(for: url) == Credentials(user: "ann", password: "pw"))
        #expect(Credentials.anonymous.isAnonymous)
    }

    @Test func extraHeadersGoOutWithEveryRequest() async throws {
        let url = try RemoteURL(parsing: nginx.url("/bearer/secret.txt"))
        let dest = try TempDir(prefix: "bearer")
        let without = try Ferry.fileSystem(for: url)
        let e = try #require(await FTPTest.error { _ = try await without.stat(url.path) })
        #expect(e.serverCode == 401, "\(e)")

        let fs = try Ferry.fileSystem(
            for: url,
            options: ConnectionOptions(httpHeaders: ["Authorization": "Bearer ferry-token", "X-Ferry-Test": "one"]))
        #expect(try await fs.stat(url.path).size == 5_000)
        let r = try await fs.download(url.path, to: dest.file("b.txt"), options: .init()).result
        #expect(r.size == 5_000)
        #expect(try await fs.data(at: url.path, limit: 10_000).count == 5_000)
        _ = users(of: "/bearer/secret.txt", count: 4)
        let lines = nginx.accessLog.filter {
            $0.contains("/bearer/secret.txt") && ($0.contains("status=200") || $0.contains("status=206"))
        }
        #expect(lines.count == 3 && lines.allSatisfy { $0.contains("xtest=\"one\"") }, "\(lines)")
    }

    @Test func customCAFile() async throws {
        let cert = try TestCertificate.shared()
        let https = try NginxServer(root: www.path, tls: cert)
        let url = try RemoteURL(parsing: https.url("/secret.txt"))
        let strict = try Ferry.fileSystem(for: url)
        let e = try #require(await FTPTest.error { _ = try await strict.stat(url.path) })
        #expect(e.code == .tls, "\(e)")
        #expect(e.recovery == .trustCertificateOrSkipVerification, "\(e)")

        let trusted = try Ferry.fileSystem(
            for: url, options: ConnectionOptions(caCertificateFile: cert.certificatePath))
        #expect(try await trusted.stat(url.path).size == 5_000)
        let dir = try TempDir(prefix: "ca")
        #expect(try await trusted.download(url.path, to: dir.file("s.txt"), options: .init()).result.size == 5_000)

        #expect(ConnectionOptions.caCertificateFile(given: nil, environment: ["SSL_CERT_FILE": "/a"]) == "/a")
        #expect(
            ConnectionOptions.caCertificateFile(
                given: nil, environment: ["SSL_CERT_FILE": "/a", "CURL_CA_BUNDLE": "/b"])
                == "/b")
        #expect(ConnectionOptions.caCertificateFile(given: "/c", environment: ["CURL_CA_BUNDLE": "/b"]) == "/c")
        #expect(ConnectionOptions.caCertificateFile(given: nil, environment: [:]) == nil)
    }
}
