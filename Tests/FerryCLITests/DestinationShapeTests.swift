import FerryTestSupport
import Foundation
import Testing

/// `get -o DEST` for every shape of DEST, and `-o -` / `ferry cat`, through the
/// built binary against real servers (issue 29 items 1, 4 and 5).
@Suite(.serialized)
struct DestinationShapeTests {
    let files: TempDir
    let work: TempDir
    let ferry = TestProcess.ferryExecutable()
    let small: Data
    /// Larger than 1 MiB, and than PartFile's 256 KiB buffer and journal threshold.
    let big: Data

    init() throws {
        files = try TempDir(prefix: "shapes-www")
        work = try TempDir(prefix: "shapes-work")
        small = try TestData.file(files.file("small.txt"), size: 1_234, seed: 1)
        big = try TestData.file(files.file("big.bin"), size: 3_000_000, seed: 2)
    }

    func run(_ args: [String], cwd: String? = nil) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: cwd ?? work.path)
    }

    /// What is in the work folder, recursively (hidden files included).
    func leftInWork() -> [String] {
        (FileManager.default.subpaths(atPath: work.path) ?? []).sorted()
    }

    func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// Runs `ferry ARGS | cat > FILE` (standard output a pipe) and returns the bytes and the result.
    func piped(_ args: [String], into name: String, cwd: String) throws -> (Data, TestProcess.Output) {
        let out = try TempDir(prefix: "shapes-out")
        let script = "\"$0\" \"$@\" | cat > \(out.file(name)); exit ${PIPESTATUS[0]}"
        let result = try TestProcess.run("/bin/bash", ["-c", script, ferry] + args, cwd: cwd)
        return (contents(out.file(name)) ?? Data(), result)
    }

    /// `ROOT` is a file directly under `/` (the `/a` shape: its folder exists), `ABS` the work folder.
    @Test(arguments: ["a", "./a", "./-", "a/", "ABS/a", "ROOT", "sub/deeper/a"])
    func everyShapeOfDestinationOverHTTP(shape: String) throws {
        let nginx = try NginxServer(root: files.path)
        defer { nginx.stop() }
        let root = "/ferry-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let dest = shape == "ROOT" ? root : shape.replacingOccurrences(of: "ABS", with: work.path)
        let out = try run(["get", nginx.url("/small.txt"), "-o", dest])
        #expect(out.status == 0, "\(shape): \(out.status) \(out.stderr)")
        let saved: String
        switch shape {
        case "a/": saved = work.file("a/small.txt")
        case "ROOT": saved = root
        case "ABS/a": saved = work.file("a")
        default: saved = work.file(dest)
        }
        #expect(contents(saved) == small, "\(shape) saved at \(saved): \(leftInWork())")
        #expect(!leftInWork().contains { $0.hasSuffix(".part") || $0.hasSuffix(".journal") }, "\(leftInWork())")
    }

    @Test(arguments: [FTPServerKind.pyftpdlib, .vsftpd])
    func oneCharacterDestinationsOverFTP(kind: FTPServerKind) async throws {
        let server = try await FTPTestServer(kind)
        defer { server.stop() }
        let data = try server.write(TestData.bytes(5_000, seed: 3), at: "/pub/one.bin")
        let out = try run(["get", server.url("/pub/one.bin"), "-o", "a"])
        #expect(out.status == 0, "\(out.status) \(out.stderr)")
        #expect(contents(work.file("a")) == data)
        let again = try run(["get", server.url("/pub/one.bin"), "-o", "a"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.isEmpty || !again.stderr.contains("differs"), "\(again.stderr)")
    }

    @Test func anEmptyDestinationIsAUsageErrorAndWritesNothing() throws {
        let nginx = try NginxServer(root: files.path)
        defer { nginx.stop() }
        let out = try run(["get", nginx.url("/small.txt"), "-o", ""])
        #expect(out.status == 2, "\(out.status) \(out.stderr)")
        #expect(out.stderr.contains("-o '' names no file"), "\(out.stderr)")
        #expect(!out.stderr.contains("link"), "\(out.stderr)")
        #expect(leftInWork().isEmpty, "\(leftInWork())")
    }

    @Test func missingFoldersDirectlyUnderRootAreRefusedAndNamed() throws {
        let nginx = try NginxServer(root: files.path)
        defer { nginx.stop() }
        let top = "/ferry-test-missing-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: top) }
        for dest in [top + "/dir/x", top + "/dir/"] {
            let out = try run(["get", nginx.url("/small.txt"), "-o", dest])
            #expect(out.status == 1, "\(dest): \(out.status) \(out.stderr)")
            #expect(out.stderr.contains("no such folder"), "\(out.stderr)")
            #expect(out.stderr.contains("folder \(top);") || out.stderr.contains("\(top): "), "\(out.stderr)")
            #expect(!FileManager.default.fileExists(atPath: top), "\(top) was created")
        }
        #expect(leftInWork().isEmpty, "\(leftInWork())")
        // Inside an existing folder, the missing ones are made, as before.
        let out = try run(["get", nginx.url("/small.txt"), "-o", "new/deeper/x"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(contents(work.file("new/deeper/x")) == small)
    }

    @Test func dashWritesToStandardOutputOverHTTP() throws {
        let nginx = try NginxServer(root: files.path)
        defer { nginx.stop() }
        let (bytes, out) = try piped(["get", nginx.url("/big.bin"), "-o", "-"], into: "big", cwd: work.path)
        #expect(out.status == 0, "\(out.status) \(out.stderr)")
        #expect(bytes.count == big.count)
        #expect(bytes == big)
        #expect(leftInWork().isEmpty, "left on disk: \(leftInWork())")
        // Never "saved big.bin": nothing was saved (on a terminal: "wrote big.bin to standard output").
        #expect(!out.stderr.contains("saved"), "\(out.stderr)")

        // `ferry cat` is the short form; several files one after another, in order.
        let (both, cat) = try piped(
            ["cat", nginx.url("/small.txt"), nginx.url("/big.bin"), nginx.url("/small.txt")], into: "cat",
            cwd: work.path)
        #expect(cat.status == 0, "\(cat.status) \(cat.stderr)")
        #expect(both == small + big + small)
        #expect(leftInWork().isEmpty, "left on disk: \(leftInWork())")
        // As cat: the files and nothing else; an error names `cat`.
        #expect(cat.stderr.isEmpty, "\(cat.stderr)")
        let missing = try run(["cat", nginx.url("/nothere.txt")])
        #expect(missing.status == 1 && missing.stderr.hasPrefix("ferry cat: "), "\(missing.stderr)")

        // To a regular file as standard output too; progress and messages never reach it.
        try "hello from nginx\n".write(toFile: files.file("hello.txt"), atomically: true, encoding: .utf8)
        let plain = try run(["cat", nginx.url("/hello.txt")])
        #expect(plain.status == 0)
        #expect(plain.stdout == "hello from nginx\n")
        #expect(leftInWork().isEmpty, "left on disk: \(leftInWork())")
    }

    @Test(arguments: [FTPServerKind.pyftpdlib, .vsftpd])
    func dashWritesToStandardOutputOverFTP(kind: FTPServerKind) async throws {
        let server = try await FTPTestServer(kind)
        defer { server.stop() }
        let data = try server.write(TestData.bytes(2_500_000, seed: 4), at: "/pub/big.bin")
        let (bytes, out) = try piped(["get", server.url("/pub/big.bin"), "-o", "-"], into: "ftp", cwd: work.path)
        #expect(out.status == 0, "\(out.status) \(out.stderr)")
        #expect(bytes == data, "\(bytes.count) of \(data.count) bytes")
        let (again, cat) = try piped(["cat", server.url("/pub/big.bin")], into: "ftp2", cwd: work.path)
        #expect(cat.status == 0, "\(cat.stderr)")
        #expect(again == data)
        #expect(leftInWork().isEmpty, "left on disk: \(leftInWork())")
        #expect(
            !(FileManager.default.subpaths(atPath: server.local("/pub")) ?? []).contains { $0.contains(".part") })
    }

    @Test func oneCharacterDestinationAndStandardOutputOverSFTP() async throws {
        let server = try await AsyncSSHTestServer()
        let home = try TempDir(prefix: "shapes-home")
        try FileManager.default.createDirectory(atPath: home.file(".ssh"), withIntermediateDirectories: true)
        try (server.knownHostsLine() + "\n").write(
            toFile: home.file(".ssh/known_hosts"), atomically: true, encoding: .utf8)
        let data = TestData.bytes(1_500_000, seed: 5)
        try server.write(data, at: "/big.bin")
        let env = [
            "HOME": home.path, "SSH_AUTH_SOCK": "", "NETRC": home.file("no-netrc"),
            "FERRY_PASSWORD": AsyncSSHTestServer.password,
        ]
        let a = try TestProcess.run(
            ferry, ["get", server.url("/big.bin"), "-o", "a"], cwd: work.path, environment: env)
        #expect(a.status == 0, "\(a.status) \(a.stderr)")
        #expect(contents(work.file("a")) == data)
        try FileManager.default.removeItem(atPath: work.file("a"))
        let out = try TempDir(prefix: "shapes-out")
        let script = "\"$0\" cat \"$1\" | cat > \(out.file("sftp")); exit ${PIPESTATUS[0]}"
        let cat = try TestProcess.run(
            "/bin/bash", ["-c", script, ferry, server.url("/big.bin")], cwd: work.path, environment: env)
        #expect(cat.status == 0, "\(cat.status) \(cat.stderr)")
        #expect(contents(out.file("sftp")) == data)
        #expect(leftInWork().isEmpty, "left on disk: \(leftInWork())")
    }

    /// A connection cut mid-file is continued from the bytes already written
    /// (`Range`); a server that would send the file from its start again fails
    /// the download, and standard output holds no byte twice.
    @Test func aCutConnectionContinuesOnStandardOutputAndARestartFails() throws {
        let nginx = try NginxServer(root: files.path)
        defer { nginx.stop() }
        let proxy = try FaultProxy(upstreamPort: nginx.port, faultyConnections: 1, cutAfter: 700_000...900_000)
        defer { proxy.stop() }
        let url = "http://127.0.0.1:\(proxy.port)"
        let (bytes, out) = try piped(["get", url + "/big.bin", "-o", "-"], into: "cut", cwd: work.path)
        #expect(out.status == 0, "\(out.status) \(out.stderr)")
        #expect(bytes == big, "\(bytes.count) of \(big.count) bytes")
        #expect(proxy.cutCount == 1, "the first connection was cut")

        let again = try FaultProxy(upstreamPort: nginx.port, faultyConnections: 1, cutAfter: 700_000...900_000)
        defer { again.stop() }
        let (partial, failed) = try piped(
            ["get", "http://127.0.0.1:\(again.port)/norange/big.bin", "-o", "-"], into: "norange", cwd: work.path)
        #expect(failed.status == 1, "\(failed.status) \(failed.stderr)")
        #expect(failed.stderr.contains("cannot be taken back"), "\(failed.stderr)")
        #expect(partial.count > 0 && partial.count < big.count)
        #expect(partial == big.prefix(partial.count), "standard output holds the file's first bytes, once")
        #expect(leftInWork().isEmpty, "left on disk: \(leftInWork())")
    }

    @Test func dashIsNoPlaceForJSONOrFolders() throws {
        let nginx = try NginxServer(root: files.path)
        defer { nginx.stop() }
        let json = try run(["get", nginx.url("/small.txt"), "-o", "-", "--json"])
        #expect(json.status == 2, "\(json.stderr)")
        // No file bytes: only the error, as every --json failure is (one object).
        let lines = json.stdout.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("\"type\":\"error\"") && lines[0].contains("\"exitCode\":2"))
        let recursive = try run(["get", "-r", nginx.url("/index/"), "-o", "-"])
        #expect(recursive.status == 2, "\(recursive.stderr)")
        #expect(leftInWork().isEmpty, "\(leftInWork())")
    }
}
