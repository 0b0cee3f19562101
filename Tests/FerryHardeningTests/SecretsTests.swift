import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Passwords never show: not in stdout or stderr (plain or `--json`), not in
/// error messages, not in files Ferry leaves behind (`.part` journals), and not
/// in the process list of a running `ferry`, whether the password came in the
/// URL, from `FERRY_PASSWORD` or from `~/.netrc` (with `HOME` in a temporary
/// folder). The servers are real: nginx with basic authentication that rejects
/// the password, and slow downloads to catch `ferry` while it runs.
@Suite(.serialized)
struct SecretsTests {
    /// Distinctive, so any appearance is found, and with characters that need escaping.
    static let password = "Pw9-zq7Secret!x"
    static let encoded = "Pw9-zq7Secret%21x"

    let work: TempDir
    let home: String
    let nginx: NginxServer

    init() throws {
        work = try TempDir(prefix: "secrets")
        let fm = FileManager.default
        try fm.createDirectory(atPath: work.file("www"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: work.file("out"), withIntermediateDirectories: true)
        try TestData.file(work.file("www/a.bin"), size: 100_000)
        try TestData.file(work.file("www/big.bin"), size: 8_000_000)
        try TestData.file(work.file("upload.bin"), size: 1000)
        home = work.file("home")
        try fm.createDirectory(atPath: home, withIntermediateDirectories: true)
        try "machine 127.0.0.1 login ferry password \(Self.password)\ndefault login ferry password \(Self.password)\n"
            .write(toFile: home + "/.netrc", atomically: true, encoding: .utf8)
        chmod(home + "/.netrc", 0o600)
        nginx = try NginxServer(
            root: work.file("www"), slowRate: 200_000, basicAuth: (user: "ferry", password: "the-right-one"))
    }

    /// Every way the password could be spelled in output.
    static var spellings: [String] {
        [password, encoded, Data("ferry:\(password)".utf8).base64EncodedString()]
    }

    var environment: [String: String] {
        ["HOME": home, "FERRY_PASSWORD": Self.password, "FERRY_USER": "ferry", "NO_COLOR": "1"]
    }

    func ferry(_ arguments: [String]) throws -> TestProcess.Output {
        try TestProcess.run(
            TestProcess.ferryExecutable(), arguments, cwd: work.file("out"), environment: environment)
    }

    func expectNoPassword(
        _ text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for spelling in Self.spellings {
            #expect(!text.contains(spelling), "\(what) shows the password: \(text)", sourceLocation: sourceLocation)
        }
    }

    /// No file Ferry wrote (downloads, `.part`, journals) holds the password.
    func expectNoPasswordInFiles(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let out = work.file("out")
        for name in try FileManager.default.subpathsOfDirectory(atPath: out) {
            guard let data = FileManager.default.contents(atPath: out + "/" + name) else { continue }
            expectNoPassword(String(decoding: data, as: UTF8.self), "file \(name)", sourceLocation: sourceLocation)
        }
    }

    // MARK: Output and error messages

    /// `-v` traces every request and reply with the `Authorization` header masked.
    @Test func verboseTraceMasksThePassword() async throws {
        try await onThread {
            let url = "http://ferry:\(Self.encoded)@127.0.0.1:\(self.nginx.port)/private/a.bin"
            for arguments in [
                ["-v", "get", url, "-o", "x.bin"], ["ls", "-v", "http://127.0.0.1:\(self.nginx.port)/private/"],
                ["get", "-v", "--json", url, "-o", "y.bin"],
            ] {
                let r = try self.ferry(arguments)
                #expect(r.status != 0, "\(arguments)")
                #expect(
                    (r.stderr.contains("> GET /private/") || r.stderr.contains("> HEAD /private/")),
                    "no trace: \(r.stderr)")
                #expect(r.stderr.contains("> Authorization: ****"), "\(r.stderr)")
                #expect(r.stderr.contains("< HTTP/1.1 401"), "\(r.stderr)")
                self.expectNoPassword(r.stdout + r.stderr, "ferry \(arguments.joined(separator: " "))")
            }
            try self.expectNoPasswordInFiles()
        }
    }

    @Test func wrongPasswordInTheURL() async throws { try await onThread { try self.wrongPasswordInTheURLBody() } }

    func wrongPasswordInTheURLBody() throws {
        let url = "http://ferry:\(Self.encoded)@127.0.0.1:\(nginx.port)/private/a.bin"
        let folder = "http://ferry:\(Self.encoded)@127.0.0.1:\(nginx.port)/private/"
        let runs: [[String]] = [
            ["get", url, "-o", "x.bin"], ["get", url, "-o", "x.bin", "--json"], ["get", url, "--quiet"],
            ["ls", folder], ["ls", folder, "--json"], ["put", work.file("upload.bin"), folder],
            ["put", work.file("upload.bin"), folder, "--json"], ["rm", url], ["mkdir", folder + "new"],
            ["rmdir", folder], ["mv", url, "b.bin"], ["info", folder],
        ]
        for arguments in runs {
            let r = try ferry(arguments)
            #expect(r.status != 0, "\(arguments.first!) succeeded with a wrong password")
            expectNoPassword(r.stdout + r.stderr, "ferry \(arguments.joined(separator: " "))")
        }
        // The refusal names the problem.
        let denied = try ferry(["get", url, "-o", "x.bin"])
        #expect(denied.stderr.contains("401") || denied.stderr.lowercased().contains("password"), "\(denied.stderr)")
        try expectNoPasswordInFiles()
    }

    @Test func passwordFromTheEnvironmentAndNetrc() async throws {
        try await onThread { try self.passwordFromTheEnvironmentAndNetrcBody() }
    }

    func passwordFromTheEnvironmentAndNetrcBody() throws {
        let url = "http://ferry@127.0.0.1:\(nginx.port)/private/a.bin"
        for arguments in [
            ["get", url, "-o", "y.bin"], ["get", url, "-o", "y.bin", "--json"],
            ["ls", "http://ferry@127.0.0.1:\(nginx.port)/private/", "--json"],
            ["get", "http://127.0.0.1:\(nginx.port)/private/missing.bin", "--json"],
        ] {
            let r = try ferry(arguments)
            #expect(r.status != 0)
            expectNoPassword(r.stdout + r.stderr, "ferry \(arguments.joined(separator: " "))")
        }
        // A successful download says nothing about the password either.
        let ok = try ferry(["get", "http://ferry@127.0.0.1:\(nginx.port)/a.bin", "-o", "ok.bin", "--json"])
        #expect(ok.status == 0, "\(ok.stderr)")
        expectNoPassword(ok.stdout + ok.stderr, "successful get")
        try expectNoPasswordInFiles()
    }

    /// URLs a person might type with the password unescaped: malformed, refused as
    /// bad usage, and the message hides the password.
    @Test func malformedURLsWithPasswords() async throws {
        try await onThread { try self.malformedURLsWithPasswordsBody() }
    }

    func malformedURLsWithPasswordsBody() throws {
        for url in [
            "ftp://ferry:\(Self.password)/x@127.0.0.1/pub/", "http://ferry:\(Self.password)?q@127.0.0.1/a",
            "http://ferry:\(Self.password)#f@127.0.0.1/a", "ftp://ferry:\(Self.password)@127.0.0.1:99999/",
            "ftp://ferry:\(Self.password)@[::1/", "ftp://ferry:\(Self.password)@bad host/",
            "gopher://ferry:\(Self.password)@127.0.0.1/", "ftp://ferry:\(Self.password)@127.0.0.1/%zz",
        ] {
            for arguments in [
                ["ls", url], ["get", url], ["ls", url, "--json"], ["put", work.file("upload.bin"), url],
            ] {
                let r = try ferry(arguments)
                #expect(r.status == 2, "\(arguments): \(r.status) \(r.stderr)")
                expectNoPassword(r.stdout + r.stderr, "ferry \(arguments.first!) \(url)")
            }
        }
    }

    // MARK: Process list

    /// Arguments of a running `ferry`, as `ps` shows them.
    static func commandLine(of pid: Int32) -> String {
        let raw = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
        return String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
    }

    /// `ferry get` caught mid-transfer: neither `/proc/PID/cmdline` nor `ps`
    /// shows a password that came from `FERRY_PASSWORD` or `~/.netrc`, and the
    /// journal beside the `.part` holds the URL without it.
    @Test func processListDuringASlowTransfer() async throws {
        try await onThread { try self.processListDuringASlowTransferBody() }
    }

    func processListDuringASlowTransferBody() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestProcess.ferryExecutable())
        process.arguments = ["get", "http://ferry@127.0.0.1:\(nginx.port)/slow/big.bin", "-o", "slow.bin", "--json"]
        process.currentDirectoryURL = URL(fileURLWithPath: work.file("out"))
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitWithoutRunLoop()
        }
        // Wait until bytes are arriving.
        let part = work.file("out/slow.bin.part")
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, (try? FileManager.default.attributesOfItem(atPath: part)[.size] as? Int) ?? 0 == 0 {
            usleep(50_000)
        }
        #expect(process.isRunning, "the download ended before it could be inspected")
        let pid = process.processIdentifier
        let cmdline = Self.commandLine(of: pid)
        #expect(cmdline.contains("slow/big.bin"), "not the ferry process: \(cmdline)")
        expectNoPassword(cmdline, "/proc/\(pid)/cmdline")
        let ps = try TestProcess.run("/usr/bin/ps", ["-eo", "pid,args", "ww"])
        expectNoPassword(ps.stdout, "ps -eo args")
        kill(pid, SIGKILL)
        process.waitWithoutRunLoop()
        try expectNoPasswordInFiles()
    }

    /// A password given in the URL itself is on the command line the user typed
    /// (as with curl or wget); the journal Ferry writes still leaves it out.
    @Test func journalOfAnInterruptedDownloadHoldsNoPassword() async throws {
        try await onThread { try self.journalOfAnInterruptedDownloadHoldsNoPasswordBody() }
    }

    func journalOfAnInterruptedDownloadHoldsNoPasswordBody() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestProcess.ferryExecutable())
        process.arguments = [
            "get", "http://ferry:\(Self.encoded)@127.0.0.1:\(nginx.port)/slow/big.bin", "-o", "journal.bin",
        ]
        process.currentDirectoryURL = URL(fileURLWithPath: work.file("out"))
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let part = work.file("out/journal.bin.part")
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, (try? FileManager.default.attributesOfItem(atPath: part)[.size] as? Int) ?? 0 < 300_000
        {
            usleep(50_000)
        }
        kill(process.processIdentifier, SIGINT)
        process.waitWithoutRunLoop()
        let names = try FileManager.default.contentsOfDirectory(atPath: work.file("out"))
        #expect(names.contains { $0.hasPrefix("journal.bin.part") }, "\(names)")
        try expectNoPasswordInFiles()
    }
}
