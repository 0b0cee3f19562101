import FerryTestSupport
import Foundation
import Testing

/// Times on nginx's autoindex page (`15-Nov-2026 20:16`) are kept to the minute
/// and compared so (issue 29 item 3): `ls`, `ls --json`, `sync --since`, and a
/// second `get -r` that finds the files already here. Run with `TZ=UTC`, the
/// zone nginx writes its page in (`autoindex_localtime off`).
@Suite(.serialized)
struct HTTPIndexTimesCommandTests {
    let files: TempDir
    let work: TempDir
    let ferry = TestProcess.ferryExecutable()
    static let newTime = ISO8601DateFormatter().date(from: "2026-11-15T20:16:37Z")!
    static let oldTime = ISO8601DateFormatter().date(from: "2026-10-01T08:00:30Z")!

    init() throws {
        files = try TempDir(prefix: "times-www")
        work = try TempDir(prefix: "times-work")
        try FileManager.default.createDirectory(atPath: files.file("photos"), withIntermediateDirectories: true)
        try TestData.file(files.file("photos/new.jpg"), size: 5_000, seed: 1)
        try TestData.file(files.file("photos/old.jpg"), size: 6_000, seed: 2)
        try FileManager.default.setAttributes(
            [.modificationDate: Self.newTime], ofItemAtPath: files.file("photos/new.jpg"))
        try FileManager.default.setAttributes(
            [.modificationDate: Self.oldTime], ofItemAtPath: files.file("photos/old.jpg"))
    }

    func run(_ args: String...) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: work.path, environment: ["TZ": "UTC"])
    }

    func modified(_ path: String) throws -> Date? {
        try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
    }

    @Test func lsShowsTheMinuteAndJSONSaysSo() throws {
        let nginx = try NginxServer(root: files.path)
        defer { nginx.stop() }
        let plain = try run("ls", nginx.url("/index/photos/"))
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.contains("2026-11-15 20:16  new.jpg"), "\(plain.stdout)")
        #expect(plain.stdout.contains("2026-10-01 08:00  old.jpg"), "\(plain.stdout)")
        #expect(!plain.stdout.contains("????"), "\(plain.stdout)")

        let long = try run("ls", "-l", nginx.url("/index/photos/"))
        #expect(long.status == 0, "\(long.stderr)")
        #expect(long.stdout.contains("2026-11-15 20:16     new.jpg"), "only the minute: \(long.stdout)")
        #expect(!long.stdout.contains("20:16:"), "\(long.stdout)")

        let json = try run("ls", "--json", nginx.url("/index/photos/"))
        #expect(json.status == 0, "\(json.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let new = try #require(rows.first { $0["name"] as? String == "new.jpg" })
        #expect(new["modified"] as? String == "2026-11-15T20:16:00", "\(new)")
        #expect(new["modifiedPrecision"] as? String == "minute", "\(new)")
        #expect(new["size"] as? Int == 5_000)

        // nginx's JSON index has seconds, and says so.
        let exact = try run("ls", "--json", nginx.url("/index-json/photos/"))
        let exactRows = try #require(
            try JSONSerialization.jsonObject(with: Data(exact.stdout.utf8)) as? [[String: Any]])
        let exactNew = try #require(exactRows.first { $0["name"] as? String == "new.jpg" })
        #expect(exactNew["modified"] as? String == "2026-11-15T20:16:37Z", "\(exactNew)")
        #expect(exactNew["modifiedPrecision"] as? String == "second", "\(exactNew)")
    }

    @Test func syncSinceFiltersByTheMinuteThePageShows() throws {
        let nginx = try NginxServer(root: files.path)
        defer { nginx.stop() }
        let out = try run("sync", nginx.url("/index/photos/"), "mirror", "--since", "2026-11-01")
        #expect(out.status == 0, "\(out.stderr)")
        let got = (FileManager.default.subpaths(atPath: work.file("mirror")) ?? []).filter { $0.hasSuffix(".jpg") }
        #expect(got.map { $0.split(separator: "/").last.map(String.init) ?? $0 } == ["new.jpg"], "\(got) \(out.stderr)")

        // 20:16:45 is inside the minute the page shows (20:16): the file may be that new.
        let within = try run(
            "sync", nginx.url("/index/photos/"), "within", "--since", "2026-11-15T20:16:45", "--dry-run")
        #expect(within.status == 0, "\(within.stderr)")
        #expect(within.stdout.contains("new.jpg"), "\(within.stdout) \(within.stderr)")
        #expect(!within.stdout.contains("old.jpg"), "\(within.stdout)")
        let after = try run(
            "sync", nginx.url("/index/photos/"), "after", "--since", "2026-11-15T20:17:00", "--dry-run")
        #expect(after.status == 0, "\(after.stderr)")
        #expect(!after.stdout.contains("new.jpg"), "\(after.stdout)")
    }

    @Test func aSecondGetFindsTheFilesAlreadyHereAndKeepsTheirExactTime() throws {
        let nginx = try NginxServer(root: files.path)
        defer { nginx.stop() }
        let first = try run("get", "-r", nginx.url("/index/photos/"), "-o", "copy")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("2 downloaded"), "\(first.stderr)")
        // The server's exact time (Last-Modified), not the page's minute, is on the file.
        #expect(try modified(work.file("copy/new.jpg")) == Self.newTime)
        #expect(try modified(work.file("copy/old.jpg")) == Self.oldTime)
        let second = try run("get", "-r", nginx.url("/index/photos/"), "-o", "copy")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("0 downloaded, 2 already here"), "\(second.stderr)")
        // A file whose time is outside the minute the page shows differs.
        try FileManager.default.setAttributes(
            [.modificationDate: Self.newTime.addingTimeInterval(60)], ofItemAtPath: work.file("copy/new.jpg"))
        let third = try run("get", "-r", nginx.url("/index/photos/"), "-o", "copy")
        #expect(third.status == 1, "\(third.stderr)")
        #expect(third.stderr.contains("new.jpg differs"), "\(third.stderr)")
    }
}
