import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The third-party FlashAir client `tfatool` (PyPI, installed into
/// `.build/test-venv` when missing) against `ferry card`: proof that the emulator
/// speaks the protocol real tools speak.
///
/// tfatool's command-line tool only knows the card as `http://flashair/`; it
/// reaches `ferry card` through `HTTP_PROXY`, which the card accepts (requests in
/// absolute form). Its library calls take the card's URL directly.
@Suite(.serialized)
struct CardTfatoolTests {
    let root: TempDir
    let work: TempDir
    let card: FerryCardProcess

    init() throws {
        try TestVenv.require(module: "tfatool", package: "tfatool")
        root = try TempDir(prefix: "tfa-card")
        work = try TempDir(prefix: "tfa-work")
        try FileManager.default.createDirectory(atPath: root.file("DCIM/100__TSB"), withIntermediateDirectories: true)
        for i in 1...3 {
            try TestData.file(root.file("DCIM/100__TSB/IMG_000\(i).JPG"), size: 50_000 * i, seed: UInt64(i))
        }
        try TestData.file(root.file("DCIM/100__TSB/.hidden"), size: 5)
        card = try FerryCardProcess(folder: root.path)
    }

    /// Runs Python code in the venv with `URL` bound to the card's address.
    func python(_ code: String) throws -> TestProcess.Output {
        let prelude = "URL = 'http://127.0.0.1:\(card.port)/'\n"
        return try TestProcess.run(TestVenv.program("python"), ["-c", prelude + code], cwd: work.path)
    }

    /// Runs `flashair-util` with the card as its `http://flashair/`.
    func flashairUtil(_ args: [String], port: Int? = nil) throws -> TestProcess.Output {
        let proxy = "http://127.0.0.1:\(port ?? card.port)"
        return try TestProcess.run(
            TestVenv.program("flashair-util"), args, cwd: work.path,
            environment: ["HTTP_PROXY": proxy, "http_proxy": proxy, "NO_PROXY": "", "no_proxy": ""])
    }

    @Test func listsAndCounts() throws {
        let out = try python(
            """
            from tfatool import command
            files = sorted(command.list_files(remote_dir='/DCIM/100__TSB', url=URL), key=lambda f: f.filename)
            for f in files:
                print(f.filename, f.size, f.directory, f.attribute.hidden_file, f.datetime.format('YYYY-MM-DD'))
            print('count', command.count_files(remote_dir='/DCIM/100__TSB', url=URL))
            """)
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        #expect(lines[0].hasPrefix(".hidden 5 /DCIM/100__TSB True"))
        #expect(lines[1].hasPrefix("IMG_0001.JPG 50000 /DCIM/100__TSB False"))
        #expect(lines[3].hasPrefix("IMG_0003.JPG 150000 /DCIM/100__TSB False"))
        #expect(lines[4] == "count 3")

        let cli = try flashairUtil(["-l", "-r", "/DCIM/100__TSB"])
        #expect(cli.status == 0, "\(cli.stderr)")
        #expect(cli.stdout.contains("IMG_0002.JPG"))
        #expect(cli.stdout.contains("(4 files, 0.30 MB total)"))
        let count = try flashairUtil(["-c", "-r", "/DCIM/100__TSB"])
        #expect(count.stdout.contains("(4 files"))
    }

    @Test func updateFlag() throws {
        let first = try python(
            "from tfatool import command\nprint(command.memory_changed(url=URL), command.memory_changed(url=URL))")
        #expect(first.stdout == "False False\n", "\(first.stderr)")
        try TestData.file(root.file("DCIM/100__TSB/NEW.JPG"), size: 100)
        let after = try python(
            "from tfatool import command\nprint(command.memory_changed(url=URL), command.memory_changed(url=URL))")
        #expect(after.stdout == "True False\n", "\(after.stderr)")
    }

    @Test func uploadWithItsFullPathFieldAndDelete() throws {
        let local = work.file("from tfatool.jpg")
        let data = try TestData.file(local, size: 70_000, seed: 11)
        var c = DateComponents()
        (c.year, c.month, c.day, c.hour, c.minute, c.second) = (2022, 8, 9, 10, 11, 12)
        let mtime = Calendar(identifier: .gregorian).date(from: c)!
        try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: local)

        let up = try python(
            """
            from tfatool import upload, command
            upload.upload_file('\(local)', url=URL, remote_dir='/DCIM/100__TSB')
            print(command.memory_changed(url=URL))
            """)
        #expect(up.status == 0, "\(up.stderr)")
        #expect(up.stdout == "True\n")
        let stored = root.file("DCIM/100__TSB/from tfatool.jpg")
        #expect(try Data(contentsOf: URL(fileURLWithPath: stored)) == data)
        // FTIME from tfatool: local time, two-second steps.
        let date = try FileManager.default.attributesOfItem(atPath: stored)[.modificationDate] as? Date
        #expect(date == mtime)

        let del = try python(
            """
            from tfatool import upload
            print(upload.delete_file('/DCIM/100__TSB/from tfatool.jpg', url=URL).text)
            """)
        #expect(del.stdout == "SUCCESS\n", "\(del.stderr)")
        #expect(!FileManager.default.fileExists(atPath: stored))
    }

    @Test func syncDownAndUp() throws {
        let down = try flashairUtil(["-S", "all", "-r", "/DCIM/100__TSB", "-d", work.file("down")])
        #expect(down.status == 0, "\(down.stderr)")
        for i in 1...3 {
            let name = "IMG_000\(i).JPG"
            #expect(
                FileManager.default.contentsEqual(
                    atPath: work.file("down/" + name), andPath: root.file("DCIM/100__TSB/" + name)))
        }

        try FileManager.default.createDirectory(atPath: work.file("up"), withIntermediateDirectories: true)
        let a = try TestData.file(work.file("up/UP_A.JPG"), size: 30_000, seed: 21)
        try TestData.file(work.file("up/UP_B.JPG"), size: 20_000, seed: 22)
        let up = try flashairUtil(["-S", "all", "-y", "up", "-r", "/DCIM/100__TSB", "-d", work.file("up")])
        #expect(up.status == 0, "\(up.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: root.file("DCIM/100__TSB/UP_A.JPG"))) == a)
        #expect(LocalFile.size(root.file("DCIM/100__TSB/UP_B.JPG")) == 20_000)
    }

    /// tfatool keeps one kept-alive connection for command.cgi and opens a
    /// new one per download, closing it after. On a two-connection card each
    /// new download connection arrives while the last one is still being
    /// cleaned up; it must wait for that slot instead of being reset.
    @Test func syncThroughATwoConnectionCard() async throws {
        let folder = try TempDir(prefix: "tfa-tight")
        try FileManager.default.createDirectory(
            atPath: folder.file("DCIM/100__TSB"), withIntermediateDirectories: true)
        let names = (1...12).map { "IMG_\(1000 + $0).JPG" }
        for (i, name) in names.enumerated() {
            try TestData.file(folder.file("DCIM/100__TSB/" + name), size: 300_000, seed: UInt64(100 + i))
        }
        // On a thread of its own: waiting for the processes must not hold a
        // cooperative thread, which in-process servers of other tests need.
        let down = try await onThread { [self] in
            let tight = try FerryCardProcess(
                folder: folder.path, arguments: ["--max-connections", "2", "--latency", "20"])
            defer { tight.stop() }
            return try flashairUtil(["-S", "all", "-r", "/DCIM/100__TSB", "-d", work.file("tight")], port: tight.port)
        }
        #expect(down.status == 0, "\(down.stderr)")
        for name in names {
            #expect(
                FileManager.default.contentsEqual(
                    atPath: work.file("tight/" + name), andPath: folder.file("DCIM/100__TSB/" + name)))
        }
    }
}

/// Size of a local file, for the checks above.
private enum LocalFile {
    static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
    }
}
