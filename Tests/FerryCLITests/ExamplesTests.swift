import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Runs the programs in Examples/ as a user would, against real servers (ferry
/// card, nginx, pyftpdlib, vsftpd), and checks what they print.
@Suite(.serialized) struct ExamplesTests {
    static func example(_ name: String) -> String {
        (TestProcess.ferryExecutable() as NSString).deletingLastPathComponent + "/" + name
    }

    static func run(_ name: String, _ arguments: [String]) throws -> TestProcess.Output {
        let out = try TestProcess.run(example(name), arguments)
        print("$ \(name) \(arguments.joined(separator: " "))\n\(out.stdout)\(out.stderr)")
        return out
    }

    static func lines(_ out: TestProcess.Output) -> [String] { out.stdout.split(separator: "\n").map(String.init) }

    @Test func cardBrowserOnACardAndAnFTPServer() async throws {
        let root = try TempDir(prefix: "ex-card")
        try FileManager.default.createDirectory(atPath: root.file("DCIM/100__TSB"), withIntermediateDirectories: true)
        try Data(SampleJPEG.withThumbnail()).write(to: URL(fileURLWithPath: root.file("DCIM/100__TSB/IMG_0001.JPG")))
        try Data("x".utf8).write(to: URL(fileURLWithPath: root.file("DCIM/NOTES.TXT")))
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        let out = try Self.run("card-browser", [card.url("/DCIM")])
        #expect(out.status == 0)
        #expect(
            Self.lines(out).filter { !$0.hasPrefix("  ") } == [
                "/DCIM: 2 entries", "enter 100__TSB", "/DCIM/100__TSB: 1 entries", "up", "/DCIM: 2 entries",
            ] + Self.lines(out).filter { $0.hasPrefix("card: firmware") })
        #expect(out.stdout.contains("  IMG_0001.JPG  \(SampleJPEG.withThumbnail().count) bytes"))
        #expect(out.stdout.contains("card: firmware"))
        let missing = try Self.run("card-browser", [card.url("/NOPE")])
        #expect(missing.status == 1 && missing.stdout.contains("failed: ") && missing.stdout.contains("not found"))

        let ftp = try await FTPTestServer(.pyftpdlib)
        defer { ftp.stop() }
        try ftp.makeFolder("/pub/photos")
        let listed = try Self.run("card-browser", [ftp.url("/pub")])
        #expect(listed.status == 0 && listed.stdout.contains("enter photos"), "\(listed.stdout)")
    }

    @Test func downloaderPausesResumesAndCompletes() async throws {
        let root = try TempDir(prefix: "ex-dl")
        let body = Data((0..<3_000_000).map { UInt8($0 % 251) })
        try body.write(to: URL(fileURLWithPath: root.file("big.bin")))
        let nginx = try NginxServer(root: root.path, slowRate: 2_000_000)
        let out = try TempDir(prefix: "ex-dl-out")
        let done = try Self.run("downloader", [nginx.url("/slow/big.bin"), out.file("sub/big.bin")])
        #expect(done.status == 0)
        let lines = Self.lines(done)
        let paused = try #require(lines.firstIndex { $0.hasPrefix("paused at ") })
        #expect(lines[paused + 1] == "resumed")
        #expect(lines.contains { $0.hasPrefix("progress 100% 3000000/3000000") })
        #expect(lines.last?.hasPrefix("completed: 3000000 bytes") == true)
        #expect(FileManager.default.contents(atPath: out.file("sub/big.bin")) == body)
        // The resume after the pause asked for the rest with Range.
        #expect(nginx.accessLog.contains { $0.contains("/slow/big.bin") && $0.contains("status=206") })

        let failed = try Self.run("downloader", [nginx.url("/missing.bin"), out.file("m.bin")])
        #expect(failed.status == 1 && failed.stdout.contains("failed: ") && failed.stdout.contains("404"))
    }

    @Test(arguments: [FTPServerKind.pyftpdlib, .vsftpd])
    func ftpClientSession(_ kind: FTPServerKind) async throws {
        let ftp = try await FTPTestServer(kind)
        defer { ftp.stop() }
        let out = try Self.run("ftp-client", [ftp.url("/pub")])
        #expect(out.status == 0)
        let steps = Self.lines(out).map { $0.components(separatedBy: ": ").prefix(2).joined(separator: ": ") }
        #expect(
            steps.map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == [
                "mkdir /pub/ferry-example:", "upload #1:", "upload #2:", "list: completed", "download: completed",
                "rename: completed", "delete missing:", "delete: completed", "rmdir: completed",
            ], "\(out.stdout)")
        #expect(out.stdout.contains("upload #1: completed 24 bytes"))
        #expect(out.stdout.contains("upload #2: completed 24 bytes (it existed: overwritten)"))
        #expect(out.stdout.contains("list: completed hello.txt"))
        // The server's own reply for the refused delete.
        #expect(out.stdout.contains("delete missing: failed: ") && out.stdout.contains("550"), "\(out.stdout)")
        #expect(!FileManager.default.fileExists(atPath: ftp.local("/pub/ferry-example")))
    }

    @Test func imageLoaderCancelsTheStaleLoad() async throws {
        let root = try TempDir(prefix: "ex-img")
        // A JPEG with an Exif thumbnail, made large (2 MB of data after it).
        let photo = SampleJPEG.withThumbnail() + [UInt8](repeating: 0x55, count: 2_000_000)
        try Data(photo).write(to: URL(fileURLWithPath: root.file("a.jpg")))
        try Data(photo).write(to: URL(fileURLWithPath: root.file("b.jpg")))
        let nginx = try NginxServer(root: root.path, slowRate: 500_000)
        // a.jpg from /slow/ takes 4 s: b.jpg is asked for 0.3 s later.
        let out = try Self.run("image-loader", [nginx.url("/slow/a.jpg"), nginx.url("/b.jpg")])
        #expect(out.status == 0)
        let thumb = "thumbnail \(SampleJPEG.thumbnail.count) bytes of a 4000x3000 photo"
        #expect(out.stdout.contains("a.jpg: \(thumb)") && out.stdout.contains("b.jpg: \(thumb)"), "\(out.stdout)")
        #expect(out.stdout.contains("/slow/a.jpg: cancelled, a newer photo was asked for"))
        #expect(out.stdout.contains("b.jpg: loaded \(photo.count) bytes"))
        // The cancelled load stopped early: nginx did not send all of a.jpg.
        let sent = nginx.accessLog.filter { $0.hasPrefix("GET /slow/a.jpg") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("sent=") }.flatMap { Int($0.dropFirst(5)) }
        }
        #expect(sent.reduce(0, +) < photo.count, "\(sent)")
    }
}
