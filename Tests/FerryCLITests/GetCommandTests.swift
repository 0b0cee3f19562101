import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ferry get` run as a process, against nginx started by the test.
@Suite(.serialized)
struct GetCommandTests {
    let files: TempDir
    let work: TempDir
    let nginx: NginxServer
    let ferry = TestProcess.ferryExecutable()

    init() throws {
        files = try TempDir(prefix: "www")
        work = try TempDir(prefix: "cli")
        nginx = try NginxServer(root: files.path, slowRate: 2_000_000)
    }

    func run(_ args: String..., env: [String: String]? = nil) throws -> TestProcess.Output {
        try run(args, env: env)
    }

    func run(_ args: [String], env: [String: String]? = nil) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: work.path, environment: env)
    }

    @Test func downloadsIntoTheCurrentFolderAndPrintsJSON() throws {
        let data = try TestData.file(files.file("one.bin"), size: 200_000)
        let out = try run("get", nginx.url("/one.bin"), "--json")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("one.bin"))) == data)
        let lines = out.stdout.split(separator: "\n")
        let result = try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as! [String: Any]
        #expect(result["type"] as? String == "result")
        #expect(result["ok"] as? Bool == true)
        #expect(result["size"] as? Int == 200_000)
        #expect(result["destination"] as? String == "one.bin")
    }

    @Test func severalURLsIntoAFolderWithParallelJobs() throws {
        for i in 0..<6 { try TestData.file(files.file("f\(i).bin"), size: 50_000 + i, seed: UInt64(i)) }
        let urls = (0..<6).map { nginx.url("/f\($0).bin") }
        let out = try TestProcess.run(ferry, ["get"] + urls + ["-o", "dl", "-j", "3", "--quiet"], cwd: work.path)
        #expect(out.status == 0, "\(out.stderr)")
        for i in 0..<6 {
            #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("dl/f\(i).bin"))).count == 50_000 + i)
        }
    }

    /// Without `-j`, a web server 25 ms away gets 8 transfers at once (twice the
    /// default); `-j 4` named is kept, far or not.
    @Test func aFarServerGetsEightAtOnceUnlessJobsAreNamed() throws {
        for i in 0..<40 { try TestData.file(files.file("far\(i).bin"), size: 20_000, seed: UInt64(i)) }
        for jobs in [nil, "4"] as [String?] {
            let proxy = try FaultProxy(upstreamPort: nginx.port, requestDelay: .milliseconds(25))
            defer { proxy.stop() }
            let urls = (0..<40).map { proxy.url("/far\($0).bin") }
            let dir = "far-\(jobs ?? "default")"
            let out = try run(["get"] + urls + ["-o", dir, "--quiet"] + (jobs.map { ["-j", $0] } ?? []))
            #expect(out.status == 0, "\(out.stderr)")
            #expect(proxy.maxConcurrentConnections == (jobs == nil ? 8 : 4), "-j \(jobs ?? "not given")")
            #expect(FileManager.default.contents(atPath: work.file(dir + "/far39.bin"))?.count == 20_000)
        }
    }

    @Test func namesFromURLsStayFlatInTheDestinationFolder() throws {
        try FileManager.default.createDirectory(atPath: files.file("docs"), withIntermediateDirectories: true)
        let readme = try TestData.file(files.file("docs/readme.txt"), size: 1000, seed: 1)
        let query = try TestData.file(files.file("q.bin"), size: 1000, seed: 2)
        let japanese = try TestData.file(files.file("日本.txt"), size: 1000, seed: 3)
        // nginx reads the escaped slash as a folder; the name keeps it escaped.
        let urls = [
            nginx.url("/docs%2Freadme.txt"), nginx.url("/q.bin?name=/../x&y=1"), nginx.url("/%E6%97%A5%E6%9C%AC.txt"),
        ]
        let out = try run(["get"] + urls + ["-o", "into/"])
        #expect(out.status == 0, "\(out.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: work.file("into")).sorted()
        #expect(names == ["docs%2Freadme.txt", "q.bin", "日本.txt"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("into/docs%2Freadme.txt"))) == readme)
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("into/q.bin"))) == query)
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("into/日本.txt"))) == japanese)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == ["into"])
    }

    @Test func aURLEndingInASlashIsSavedAsIndexHTML() throws {
        try FileManager.default.createDirectory(atPath: files.file("site"), withIntermediateDirectories: true)
        let page = try TestData.file(files.file("site/index.html"), size: 500)
        let out = try run("get", nginx.url("/site/"))
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == ["index.html"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("index.html"))) == page)
    }

    @Test func existingDestinationIsRefusedUnlessOverwrite() throws {
        try TestData.file(files.file("x.bin"), size: 1000)
        try "keep me".write(toFile: work.file("x.bin"), atomically: true, encoding: .utf8)
        let refused = try run("get", nginx.url("/x.bin"))
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("x.bin") && refused.stderr.contains("--overwrite"))
        #expect(try String(contentsOfFile: work.file("x.bin"), encoding: .utf8) == "keep me")
        #expect(try run("get", nginx.url("/x.bin"), "--overwrite").status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("x.bin"))).count == 1000)
    }

    @Test func exitCodesAndMessages() throws {
        let missing = try run("get", nginx.url("/missing.bin"))
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("404") && missing.stderr.contains("missing.bin"))
        #expect(!FileManager.default.fileExists(atPath: work.file("missing.bin")))

        let refused = try run("get", "http://127.0.0.1:\(Loopback.freePort())/a.bin")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("a.bin") && refused.stderr.lowercased().contains("connect"))

        let malformed = try run("get", "http://127.0.0.1:99999/a.bin")
        #expect(malformed.status == 2)
        #expect(malformed.stderr.contains("bad port"))

        let scheme = try run("get", "gopher://host/a")
        #expect(scheme.status == 2)
        #expect(scheme.stderr.contains("gopher"))

        let usage = try run("get", "--frobnicate", nginx.url("/a"))
        #expect(usage.status == 2)
        #expect(usage.stderr.contains("usage: ferry get"))

        try TestData.file(files.file("w.bin"), size: 10)
        // Tests may run as root, which ignores permissions: a path under a plain
        // file is unwritable for everyone.
        try "x".write(toFile: work.file("plainfile"), atomically: true, encoding: .utf8)
        let unwritable = try run("get", nginx.url("/w.bin"), "-o", work.file("plainfile/w.bin"))
        #expect(unwritable.status == 1)
        #expect(unwritable.stderr.contains("plainfile/w.bin"))
    }

    @Test func passwordsNeverAppearInMessages() throws {
        let out = try run("get", "http://alice:s3cret-pw@127.0.0.1:\(nginx.port)/nothing-here.bin", "--json")
        #expect(out.status == 1)
        #expect(!out.stdout.contains("s3cret-pw") && !out.stderr.contains("s3cret-pw"))
        #expect(out.stdout.contains("alice:***@"))
    }

    @Test func killNineThenTheSameCommandResumesByteIdentical() throws {
        let data = try TestData.file(files.file("big.bin"), size: 8_000_000, seed: 9)
        let url = nginx.url("/slow/big.bin")
        let server = try ServerProcess(ferry, ["get", url, "--quiet"], cwd: work.path, logPath: work.file("first.log"))
        // Wait until a good part of the file is on disk, then kill -9.
        let part = work.file("big.bin.part")
        let deadline = Date().addingTimeInterval(10)
        while (LocalFileSize.of(part) ?? 0) < 3_000_000 && Date() < deadline { usleep(20_000) }
        server.signal(SIGKILL)
        server.stop()
        let partSize = LocalFileSize.of(part) ?? 0
        #expect(partSize >= 3_000_000 && partSize < 8_000_000)
        #expect(!FileManager.default.fileExists(atPath: work.file("big.bin")))

        let again = try run("get", url, "--json")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("big.bin"))) == data)
        #expect(!FileManager.default.fileExists(atPath: part))
        // The second run asked for the rest, from exactly where the .part ended.
        let ranged = nginx.accessLog.filter { $0.contains("/slow/big.bin") && $0.contains("range=\"bytes=") }
        #expect(ranged.count == 1)
        let line = ranged.first ?? ""
        #expect(line.contains("range=\"bytes=\(partSize)-\""), "\(line)")
        #expect(line.contains("status=206"))
        #expect(line.contains("sent=\(8_000_000 - partSize)"))
        let result =
            try JSONSerialization.jsonObject(with: Data(again.stdout.split(separator: "\n").last!.utf8))
            as! [String: Any]
        #expect(result["resumedFrom"] as? Int == Int(partSize))
    }

    @Test func helpAndVersion() throws {
        let help = try run("--help")
        #expect(help.status == 0 && help.stdout.contains("get"))
        let getHelp = try run("help", "get")
        #expect(getHelp.status == 0 && getHelp.stdout.contains("--overwrite"))
        let bare = try run()
        #expect(bare.status == 2)
    }
}

enum LocalFileSize {
    static func of(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }
}
