import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Passwords against real FTP servers (pyftpdlib, proftpd, explicit TLS): a
/// wrong one from the URL, `FERRY_PASSWORD` or `~/.netrc` never shows in
/// stdout, stderr or `--json`; a right one from the environment or `~/.netrc`
/// never shows in the process list of a running `ferry get`, nor in what it
/// leaves on disk. (`ConnectionLane`, `FTPReplyLog` and libcurl carry the
/// password; only Ferry's own output is checked here.)
@Suite(.serialized)
struct FTPSecretsTests {
    static let wrong = "Wr0ng-ftp-Pw9zq!"
    static var spellings: [String] {
        [
            wrong, wrong.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, FTPTestServer.testPassword,
            FTPTestServer.testPassword.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
            "s3cret%20pass",
        ]
    }

    static func expectNoPassword(_ text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for spelling in spellings {
            #expect(!text.contains(spelling), "\(what) shows a password: \(text)", sourceLocation: sourceLocation)
        }
    }

    /// A HOME with a `.netrc` holding `password` for 127.0.0.1.
    static func home(password: String) throws -> TempDir {
        let home = try TempDir(prefix: "ftp-secrets-home")
        try "machine 127.0.0.1 login ferry password \(password)\n".write(
            toFile: home.file(".netrc"), atomically: true, encoding: .utf8)
        chmod(home.file(".netrc"), 0o600)
        return home
    }

    static func ferry(_ arguments: [String], cwd: String, environment: [String: String]) throws -> TestProcess.Output {
        try TestProcess.run(TestProcess.ferryExecutable(), arguments, cwd: cwd, environment: environment)
    }

    static func withServer<T: Sendable>(
        _ kind: FTPServerKind, options: FTPTestServerOptions = .init(),
        _ body: @escaping @Sendable (FTPTestServer) throws -> T
    ) async throws -> T {
        let server = try await FTPTestServer(kind, options: options)
        try server.write(TestData.bytes(50_000), at: "/pub/a.bin")
        return try await onThread { try body(server) }
    }

    @Test(arguments: [FTPServerKind.pyftpdlib, .proftpd])
    func wrongPasswordsNeverShow(kind: FTPServerKind) async throws {
        try await Self.withServer(kind) { server in
            let work = try TempDir(prefix: "ftp-secrets")
            let home = try Self.home(password: Self.wrong)
            let withPassword = server.url("/pub/", password: Self.wrong)
            let withUser = server.url("/pub/", credentials: false).replacingOccurrences(of: "://", with: "://ferry@")
            let upload = work.file("up.bin")
            try TestData.file(upload, size: 1000)
            for (base, environment) in [
                (withPassword, ["HOME": home.path]),
                (withUser, ["HOME": work.path, "FERRY_PASSWORD": Self.wrong]),
                (withUser, ["HOME": home.path]),
            ] {
                for arguments in [
                    ["ls", base], ["ls", base, "--json"], ["get", base + "a.bin", "-o", "x.bin"],
                    ["get", base + "a.bin", "-o", "x.bin", "--json"], ["put", upload, base], ["rm", base + "a.bin"],
                    ["mkdir", base + "new"], ["mv", base + "a.bin", "b.bin"],
                ] {
                    let r = try Self.ferry(arguments, cwd: work.path, environment: environment)
                    #expect(r.status == 1, "\(kind) \(arguments.first!): \(r.status) \(r.stderr)")
                    Self.expectNoPassword(r.stdout + r.stderr, "\(kind) ferry \(arguments.first!)")
                }
            }
            let denied = try Self.ferry(["ls", withPassword], cwd: work.path, environment: ["HOME": home.path])
            #expect(denied.stderr.contains("530") || denied.stderr.lowercased().contains("login"), "\(denied.stderr)")
            for name in try FileManager.default.subpathsOfDirectory(atPath: work.path) {
                let data = FileManager.default.contents(atPath: work.file(name)) ?? Data()
                Self.expectNoPassword(String(decoding: data, as: UTF8.self), "file \(name)")
            }
        }
    }

    @Test func wrongPasswordOverExplicitTLS() async throws {
        try await Self.withServer(.pyftpdlib, options: .init(tls: .explicit)) { server in
            let work = try TempDir(prefix: "ftp-secrets-tls")
            let url = server.url("/pub/", password: Self.wrong)
            for arguments in [["ls", url, "--insecure"], ["ls", url, "--insecure", "--json"]] {
                let r = try Self.ferry(arguments, cwd: work.path, environment: ["HOME": work.path])
                #expect(r.status == 1, "\(r.stderr)")
                Self.expectNoPassword(r.stdout + r.stderr, "ftpes \(arguments)")
            }
        }
    }

    /// A slow, successful download with the password from the environment:
    /// `/proc/PID/cmdline` and `ps` never show it, nor the journal. (Not from
    /// `~/.netrc` here: the test servers' password has a space, which Ferry's netrc
    /// reader cannot take; wrong netrc passwords are covered above.)
    @Test func processListDuringASlowFTPDownload() async throws {
        try await Self.withServer(.pyftpdlib, options: .init(throttle: 100_000)) { server in
            try server.write(TestData.bytes(3_000_000), at: "/pub/big.bin")
            let url = server.url("/pub/big.bin", credentials: false).replacingOccurrences(of: "://", with: "://ferry@")
            for useNetrc in [false] {
                let work = try TempDir(prefix: "ftp-secrets-slow")
                let home = try Self.home(password: FTPTestServer.testPassword)
                var environment = ProcessInfo.processInfo.environment
                environment["HOME"] = useNetrc ? home.path : work.path
                if !useNetrc { environment["FERRY_PASSWORD"] = FTPTestServer.testPassword }
                let process = Process()
                process.executableURL = URL(fileURLWithPath: TestProcess.ferryExecutable())
                process.arguments = ["get", url, "-o", "big.bin", "--json"]
                process.currentDirectoryURL = URL(fileURLWithPath: work.path)
                process.environment = environment
                _ = FileManager.default.createFile(atPath: work.file("stderr"), contents: nil)
                process.standardOutput = FileHandle(forWritingAtPath: work.file("stderr"))
                process.standardError = process.standardOutput
                try process.run()
                defer {
                    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                    process.waitWithoutRunLoop()
                }
                let part = work.file("big.bin.part")
                let deadline = Date().addingTimeInterval(20)
                while Date() < deadline,
                    (try? FileManager.default.attributesOfItem(atPath: part)[.size] as? Int) ?? 0 == 0
                {
                    usleep(50_000)
                }
                let stderr = { (try? String(contentsOfFile: work.file("stderr"), encoding: .utf8)) ?? "" }
                #expect(process.isRunning, "the download ended before it could be inspected: \(stderr())")
                let raw = FileManager.default.contents(atPath: "/proc/\(process.processIdentifier)/cmdline") ?? Data()
                let cmdline = String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
                #expect(cmdline.contains("big.bin"), "not the ferry process: \(cmdline)")
                Self.expectNoPassword(cmdline, "/proc/PID/cmdline (netrc: \(useNetrc))")
                // Only ferry's line: the test FTP server itself is started with its password.
                let ps = try TestProcess.run(
                    "/usr/bin/ps", ["-o", "pid,args", "ww", "-p", "\(process.processIdentifier)"])
                #expect(ps.stdout.contains("big.bin"), "\(ps.stdout)")
                Self.expectNoPassword(ps.stdout, "ps (netrc: \(useNetrc))")
                kill(process.processIdentifier, SIGINT)
                process.waitWithoutRunLoop()
                for name in try FileManager.default.subpathsOfDirectory(atPath: work.path) {
                    let data = FileManager.default.contents(atPath: work.file(name)) ?? Data()
                    Self.expectNoPassword(String(decoding: data, as: UTF8.self), "file \(name)")
                }
            }
        }
    }
}
