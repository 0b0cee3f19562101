import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 29's habits, through the built binary against pyftpdlib and nginx:
/// `rm -r`, `ls -R`, `-v`, timeouts, retries on a terminal, the password prompt,
/// curl's and wget's options, `--json` everywhere.
@Suite(.serialized)
struct HabitsCommandTests {
    let work: TempDir
    let ferry = TestProcess.ferryExecutable()

    init() throws {
        work = try TempDir(prefix: "habits")
    }

    func run(_ args: String..., env: [String: String]? = nil) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: work.path, environment: env)
    }

    func tree(_ server: FTPTestServer) throws {
        try server.makeFolder("/tree/sub/deep")
        try server.write(Data("hello".utf8), at: "/tree/a.txt")
        try server.write(Data("12".utf8), at: "/tree/sub/B.JPG")
        try server.write(Data("345".utf8), at: "/tree/sub/deep/c.bin")
    }

    /// A port that accepts connections (the kernel's backlog) and never says a word.
    static func silentPort() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0
            }
        }
        try #require(bound && listen(fd, 64) == 0)
        return (fd, Int(UInt16(bigEndian: addr.sin_port)))
    }

    /// Runs `ferry ARGS` on a pseudo-terminal (python's pty), typing `answer` after `prompt` appears.
    func onTerminal(_ args: [String], prompt: String? = nil, answer: String = "", env: [String: String] = [:]) throws
        -> TestProcess.Output
    {
        let script = """
            import os, pty, sys, time, select, json
            args = json.loads(sys.argv[1]); prompt = sys.argv[2].encode(); answer = sys.argv[3].encode()
            pid, fd = pty.fork()
            if pid == 0:
                env = dict(os.environ); env.pop("FERRY_PASSWORD", None); env.update(json.loads(sys.argv[4]))
                os.execve(args[0], args, env)
            out = b""; sent = not prompt; deadline = time.time() + 60
            while time.time() < deadline:
                r, _, _ = select.select([fd], [], [], 0.1)
                if r:
                    try: chunk = os.read(fd, 4096)
                    except OSError: break
                    if not chunk: break
                    out += chunk
                if not sent and prompt in out:
                    time.sleep(0.2); os.write(fd, answer + b"\\n"); sent = True
            _, status = os.waitpid(pid, 0)
            sys.stdout.write(out.decode(errors="replace"))
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        let json = { (v: Any) in String(decoding: try! JSONSerialization.data(withJSONObject: v), as: UTF8.self) }
        let python = try #require(TestProcess.which("python3"))
        return try TestProcess.run(
            python, ["-c", script, json([ferry] + args), prompt ?? "", answer, json(env)], cwd: work.path)
    }

    @Test func removeRecursivelySaysHowMuchAndWantsYesWithoutATerminal() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        try tree(server)
        let refused = try run("rm", "-r", server.url("/tree/"))
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("3 files (10 B) in 3 folders") && refused.stderr.contains("--yes"))
        #expect(FileManager.default.fileExists(atPath: server.local("/tree/sub/deep/c.bin")))

        let json = try run("rm", "-r", server.url("/tree"), "--json")
        #expect(json.status == 2)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
        #expect(object["type"] as? String == "error" && object["exitCode"] as? Int == 2)

        let deleted = try run("rm", "-r", "--yes", server.url("/tree"))
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: server.local("/tree")))
    }

    @Test func removeRecursivelyAsksOnATerminal() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        try tree(server)
        let no = try onTerminal(["rm", "-r", server.url("/tree/")], prompt: "[y/N]", answer: "n")
        #expect(no.stdout.contains("delete ") && no.stdout.contains("3 files (10 B)"), "\(no.stdout)")
        #expect(FileManager.default.fileExists(atPath: server.local("/tree/a.txt")))
        // Nothing redraws over the question while it waits (the answer's echo follows it).
        #expect(no.stdout.contains("[y/N] n"), "\(no.stdout.debugDescription)")
        let yes = try onTerminal(["rm", "-r", server.url("/tree/")], prompt: "[y/N]", answer: "y")
        #expect(yes.status == 0, "\(yes.stdout)")
        #expect(!FileManager.default.fileExists(atPath: server.local("/tree")))
    }

    @Test func listRecursivelyAndAsJSONLines() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        try tree(server)
        let plain = try run("ls", "-R", server.url("/tree/"))
        #expect(plain.status == 0, "\(plain.stderr)")
        let names = plain.stdout.split(separator: "\n").map { $0.components(separatedBy: "  ").last ?? "" }
        #expect(names == ["a.txt", "sub/", "sub/B.JPG", "sub/deep/", "sub/deep/c.bin"], "\(plain.stdout)")
        let lines = try run("ls", "-R", "--json", server.url("/tree"))
        let objects = try lines.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(
            objects.map { $0["path"] as? String } == [
                "/tree/a.txt", "/tree/sub", "/tree/sub/B.JPG", "/tree/sub/deep", "/tree/sub/deep/c.bin",
            ])
        // A pattern in any case, with --ignore-case.
        let jpg = try run("ls", server.url("/tree/sub/*.jpg"), "--ignore-case")
        #expect(jpg.status == 0 && jpg.stdout.contains("B.JPG"), "\(jpg.stderr)")
        #expect(try run("ls", server.url("/tree/sub/*.jpg")).status == 1)
    }

    @Test func verboseShowsTheConversationWithThePasswordMasked() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        try tree(server)
        for args in [
            ["-v", "ls", server.url("/tree/")], ["get", server.url("/tree/a.txt"), "--verbose", "-o", "a.txt"],
        ] {
            let out = try TestProcess.run(ferry, args, cwd: work.path)
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stderr.contains("> USER ferry") && out.stderr.contains("> PASS ****"), "\(out.stderr)")
            #expect(out.stderr.contains("< 230"), "\(out.stderr)")
            let password = try #require(server.password)
            #expect(!out.stderr.contains(password) && !out.stdout.contains(password))
            #expect(!out.stderr.contains(password.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!))
        }
        let quiet = try run("ls", server.url("/tree/"))
        #expect(!quiet.stderr.contains("> USER"))
    }

    @Test func timeoutsEndASilentServerAndRetriesShowOnATerminal() throws {
        let (fd, port) = try Self.silentPort()
        defer { close(fd) }
        let started = ContinuousClock.now
        let out = try run("ls", "ftp://127.0.0.1:\(port)/", "--connect-timeout", "1", "--timeout", "1")
        #expect(out.status == 1)
        #expect(out.stderr.contains("timed out"), "\(out.stderr)")
        // Without the options, each try waits 15 s for the greeting.
        #expect(ContinuousClock.now - started < .seconds(14))
        #expect(try run("ls", "ftp://127.0.0.1:\(port)/", "--timeout", "soon").status == 2)

        let get = try onTerminal(["get", "ftp://127.0.0.1:\(port)/x.bin", "--connect-timeout", "1", "--retries", "2"])
        #expect(get.status == 1)
        #expect(
            get.stdout.contains("retrying (1 of 2) in 0.5 s") && get.stdout.contains("retrying (2 of 2)"),
            "\(get.stdout)")
    }

    @Test func aRefusedLoginWithoutAPasswordAsksOnATerminalAndNamesTheWaysWithout() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        try tree(server)
        let home = try TempDir(prefix: "home")
        let env = ["HOME": home.path, "FERRY_PASSWORD": ""]
        let url = server.url("/tree/", credentials: false).replacingOccurrences(of: "://", with: "://ferry@")
        let without = try run("ls", url, env: env)
        #expect(without.status == 1)
        #expect(without.stderr.contains("FERRY_PASSWORD") && without.stderr.contains("~/.netrc"), "\(without.stderr)")
        let password = try #require(server.password)
        let asked = try onTerminal(
            ["ls", url], prompt: "Password for ferry@127.0.0.1: ", answer: password, env: ["HOME": home.path])
        #expect(asked.status == 0, "\(asked.stdout)")
        #expect(asked.stdout.contains("a.txt") && !asked.stdout.contains(password), "\(asked.stdout)")
    }

    @Test func habitsFromCurlAndWget() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        try tree(server)
        let c = try run("get", "-c", server.url("/tree/a.txt"))
        #expect(c.status == 0 && c.stderr.contains("resum"), "\(c.stderr)")
        #expect(FileManager.default.contents(atPath: work.file("a.txt")) == Data("hello".utf8))
        let o = try run("get", "-O", server.url("/tree/a.txt"))
        #expect(o.status == 2 && o.stderr.contains("-o DEST"), "\(o.stderr)")
        for flag in ["-v", "--verbose"] {
            let v = try run(flag)
            #expect(v.status == 2 && !v.stderr.contains("did you mean") && v.stderr.contains("-V"), "\(v.stderr)")
        }
        let version = try run("-V")
        #expect(version.status == 0 && version.stdout.hasPrefix("ferry "))
        #expect(try run("--help", "get").stdout == (try run("help", "get")).stdout)
        #expect(try run("--help", "get").stdout.contains("usage: ferry get"))
        let nonsense = try run("nonsense")
        #expect(nonsense.stderr.contains("no command 'nonsense'. See 'ferry --help'."), "\(nonsense.stderr)")
    }

    @Test func aBareHostAndPathIsHTTP() throws {
        let files = try TempDir(prefix: "www")
        try "page".write(toFile: files.file("p.txt"), atomically: true, encoding: .utf8)
        let nginx = try NginxServer(root: files.path)
        let out = try run("get", "127.0.0.1:\(nginx.port)/p.txt", "-o", "p.txt")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(FileManager.default.contents(atPath: work.file("p.txt")) == Data("page".utf8))
        // An existing local path stays one.
        try FileManager.default.createDirectory(atPath: work.file("127.0.0.1:1"), withIntermediateDirectories: true)
        let local = try run("ls", "127.0.0.1:1")
        #expect(local.status == 2 && local.stderr.contains("local path"), "\(local.stderr)")
    }

    /// A dry run names where a date-layout file will go, not the staging folder.
    @Test func aDryRunShowsTheFinalDestination() throws {
        let files = try TempDir(prefix: "www")
        try FileManager.default.createDirectory(atPath: files.file("cam"), withIntermediateDirectories: true)
        try "x".write(toFile: files.file("cam/IMG_1.JPG"), atomically: true, encoding: .utf8)
        // python's http.server lists no times: the date comes with the download.
        let server = try PythonHTTPServer(root: files.path)
        let dry = try run("sync", "http://127.0.0.1:\(server.port)/cam/", "photos", "--layout", "date", "--dry-run")
        #expect(dry.status == 0, "\(dry.stderr)")
        let all = dry.stdout + dry.stderr
        #expect(all.contains("-> <date taken>/IMG_1.JPG") && !all.contains(".ferry-sync-incoming"), "\(all)")
    }

    @Test func everyCommandTakesJSONAndErrorsAreObjects() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        try tree(server)
        let made = try run("mkdir", server.url("/tree/new"), "--json")
        #expect(made.status == 0)
        #expect(made.stdout.contains("\"type\":\"done\""), "\(made.stdout)")
        let refused = try run("ls", "ftp://127.0.0.1:\(Loopback.freePort())/", "--json")
        #expect(refused.status == 1)
        let error = try #require(
            try JSONSerialization.jsonObject(with: Data(refused.stdout.utf8)) as? [String: Any], "\(refused.stdout)")
        #expect(error["type"] as? String == "error" && error["exitCode"] as? Int == 1)
        #expect(error["errorCode"] as? String == "connection failed", "\(error)")
        let usage = try run("rmdir", "--json", "--bogus", server.url("/tree/new"))
        #expect(usage.status == 2 && usage.stdout.contains("\"exitCode\":2"), "\(usage.stdout)")
        for command in CLICommandNames.all {
            let help = try run("help", command)
            #expect(help.stdout.contains("--json"), "\(command)")
        }
    }
}

/// Issue 29, item 14: a first user finds the package lines, and the docs site opens FerryKit.
@Test func firstUseDocuments() throws {
    let root = TestProcess.packageRoot()
    let readme = try String(contentsOfFile: root + "/README.md", encoding: .utf8)
    let library = try #require(readme.components(separatedBy: "## Library").dropFirst().first)
    #expect(library.prefix(900).contains(".product(name: \"FerryKit\", package: \"ferry\")"))
    #expect(library.prefix(900).contains(".package(path: "))
    let catalog = try String(contentsOfFile: root + "/Sources/FerryKit/FerryKit.docc/FerryKit.md", encoding: .utf8)
    let sources = try #require(
        catalog.components(separatedBy: "### Sources").dropFirst().first?.components(separatedBy: "###").first)
    #expect(sources.contains("``SFTPFileSystem``"))
    // What a stopped `sync --watch` exits with is said (SyncServiceTests checks both).
    #expect(readme.contains("`sync --watch` exits 0 at once"))
    let docs = try String(contentsOfFile: root + "/scripts/docs.sh", encoding: .utf8)
    #expect(docs.contains("url=documentation/ferrykit/"))
}

/// The commands `ferry --help` lists.
enum CLICommandNames {
    static let all = ["ls", "get", "cat", "put", "rm", "mkdir", "rmdir", "mv", "info", "sync", "card", "serve", "demo"]
}
