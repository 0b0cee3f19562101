import FerryTestSupport
import Foundation
import Testing

@testable import FerryCLI

#if canImport(Glibc)
    import Glibc
#endif

/// `ferry sync` run as a process against `ferry card` (both started by the test):
/// output and exit codes, watch mode (a new upload, the card going away and
/// coming back, Ctrl-C), an interrupted sync resumed, and the re-sync of 5,000
/// files timed.
@Suite(.serialized)
struct SyncCommandTests {
    let root: TempDir
    let work: TempDir
    let ferry = TestProcess.ferryExecutable()
    let fm = FileManager.default

    init() throws {
        root = try TempDir(prefix: "sync-cli-card")
        work = try TempDir(prefix: "sync-cli")
        try fm.createDirectory(atPath: root.file("DCIM/100__TSB"), withIntermediateDirectories: true)
        for i in 1...3 {
            try TestData.file(root.file("DCIM/100__TSB/IMG_000\(i).JPG"), size: 60_000 * i, seed: UInt64(i))
        }
        try TestData.file(root.file("DCIM/100__TSB/MOV_0001.MOV"), size: 10_000, seed: 9)
    }

    func run(_ args: [String]) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: work.path)
    }

    /// The JSON objects among the lines of `text` (stderr messages are skipped).
    static func jsonLines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{") else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    static func summaries(_ text: String) -> [[String: Any]] {
        jsonLines(text).filter { $0["type"] as? String == "summary" }
    }

    /// Waits until `predicate` holds for the process's output; returns whether it did.
    func wait(
        for process: ServerProcess, timeout: TimeInterval = 15, _ predicate: ([[String: Any]]) -> Bool
    ) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if predicate(SyncCommandTests.jsonLines(process.log)) { return true }
            if !process.process.isRunning { return predicate(SyncCommandTests.jsonLines(process.log)) }
            usleep(20_000)
        }
        return false
    }

    static func imported(_ lines: [[String: Any]]) -> [String] {
        lines.filter { $0["type"] as? String == "imported" }.compactMap { $0["path"] as? String }
    }

    @Test func importsThenOnlyWhatIsNewWithSummariesAndExitCodes() throws {
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        let first = try run(["sync", card.url("/DCIM"), "photos"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("imported 4 files"), "\(first.stdout)")
        #expect(first.stdout.contains("0 failed"))
        #expect(
            fm.contentsEqual(
                atPath: work.file("photos/100__TSB/IMG_0002.JPG"), andPath: root.file("DCIM/100__TSB/IMG_0002.JPG")))

        try TestData.file(root.file("DCIM/100__TSB/IMG_0004.JPG"), size: 5_000, seed: 4)
        let second = try run(["sync", card.url("/DCIM"), "photos", "--json"])
        #expect(second.status == 0, "\(second.stderr)")
        let lines = SyncCommandTests.jsonLines(second.stdout)
        #expect(SyncCommandTests.imported(lines) == ["/DCIM/100__TSB/IMG_0004.JPG"])
        let summary = try #require(SyncCommandTests.summaries(second.stdout).last)
        #expect(summary["imported"] as? Int == 1)
        #expect(summary["alreadyImported"] as? Int == 4)
        #expect(summary["bytes"] as? Int == 5_000)
        #expect(summary["failed"] as? Int == 0)
        #expect((summary["sourceKey"] as? String)?.hasPrefix("flashair-cid:") == true)

        // Filters and dry run on the command line.
        let dry = try run(["sync", card.url("/DCIM"), "other", "--only", "mov", "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("would import /DCIM/100__TSB/MOV_0001.MOV -> 100__TSB/MOV_0001.MOV"))
        #expect(!dry.stdout.contains("IMG_0001"))
        #expect(!fm.fileExists(atPath: work.file("other")))

        for bad in [
            ["sync", card.url("/DCIM"), "x", "--layout", "flat"], ["sync", card.url("/DCIM"), "x", "--since", "May 1"],
            ["sync", card.url("/DCIM")],
            ["sync", card.url("/DCIM"), "x", "--interval", "1"],
        ] {
            let out = try run(bad)
            #expect(out.status == 2, "\(bad): \(out.stderr)")
            #expect(out.stderr.contains("usage: ferry sync") || out.stderr.contains("ferry sync"))
        }
    }

    @Test func aFailedFileIsReportedWithItsReasonAndExits1() throws {
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        try fm.createDirectory(atPath: work.file("photos"), withIntermediateDirectories: true)
        // The folder the files go to is a plain file: nothing can be written there.
        try "x".write(toFile: work.file("photos/100__TSB"), atomically: true, encoding: .utf8)
        let out = try run(["sync", card.url("/DCIM"), "photos", "--json"])
        #expect(out.status == 1)
        let summary = try #require(SyncCommandTests.summaries(out.stdout).last)
        #expect(summary["failed"] as? Int == 4)
        let failures = summary["failures"] as? [[String: Any]] ?? []
        let reason = failures.first?["error"] as? String
        #expect(reason?.contains("photos/100__TSB") == true, "\(failures)")
        let human = try run(["sync", card.url("/DCIM"), "photos"])
        #expect(human.status == 1)
        #expect(human.stdout.contains("4 failed"))
        #expect(human.stderr.contains("photos/100__TSB"))
    }

    @Test func deleteAfterOnACardWithUploadsDisabledKeepsEverything() throws {
        let card = try FerryCardProcess(folder: root.path, arguments: ["--no-upload"])
        defer { card.stop() }
        let out = try run(["sync", card.url("/DCIM"), "photos", "--delete-after"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.contains("uploads are disabled"))
        #expect(out.stdout.contains("kept on the source: 4 files"))
        #expect(fm.fileExists(atPath: root.file("DCIM/100__TSB/IMG_0001.JPG")))

        let writable = try FerryCardProcess(folder: root.path)
        defer { writable.stop() }
        let deleting = try run(["sync", writable.url("/DCIM"), "photos", "--delete-after", "--json"])
        #expect(deleting.status == 0, "\(deleting.stderr)")
        let deleted = SyncCommandTests.jsonLines(deleting.stdout).filter { $0["type"] as? String == "deleted" }
        #expect(deleted.count == 4)
        #expect(try fm.contentsOfDirectory(atPath: root.file("DCIM/100__TSB")).isEmpty)
        #expect(try fm.contentsOfDirectory(atPath: work.file("photos/100__TSB")).count == 4)
    }

    @Test func watchPicksUpAFileUploadedWhileItRunsWithinFiveSeconds() throws {
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        let watch = try ServerProcess(
            ferry, ["sync", card.url("/DCIM"), "photos", "--watch", "--json"], cwd: work.path,
            logPath: work.file("watch.log"))
        defer { watch.stop() }
        #expect(wait(for: watch) { $0.contains { $0["type"] as? String == "summary" } }, "\(watch.log)")

        let local = work.file("NEW_0001.JPG")
        try TestData.file(local, size: 150_000, seed: 77)
        let put = try run(["put", local, card.url("/DCIM/100__TSB/")])
        #expect(put.status == 0, "\(put.stderr)")
        let uploaded = Date()
        let seen = wait(for: watch, timeout: 10) {
            SyncCommandTests.imported($0).contains("/DCIM/100__TSB/NEW_0001.JPG")
        }
        let elapsed = Date().timeIntervalSince(uploaded)
        #expect(seen, "\(watch.log)")
        #expect(elapsed < 5, "took \(elapsed) s")
        print("watch: an uploaded file was imported \(String(format: "%.2f", elapsed)) s after the upload")
        #expect(fm.contentsEqual(atPath: work.file("photos/100__TSB/NEW_0001.JPG"), andPath: local))

        // A second sync into the same folder is refused while this one runs.
        let second = try run(["sync", card.url("/DCIM"), "photos"])
        #expect(second.status == 1)
        #expect(second.stderr.contains("another ferry sync is importing into this folder"), "\(second.stderr)")

        // Ctrl-C while idle: a clean stop, exit 0.
        let stopAsked = Date()
        watch.signal(SIGINT)
        watch.process.waitWithoutRunLoop()
        #expect(Date().timeIntervalSince(stopAsked) < 3)
        #expect(watch.process.terminationStatus == 0, "\(watch.log)")
    }

    @Test func watchSurvivesTheCardStoppingAndComingBack() throws {
        let card = try FerryCardProcess(folder: root.path)
        let port = card.port
        let watch = try ServerProcess(
            ferry, ["sync", card.url("/DCIM"), "photos", "--watch", "--json", "--interval", "0.3"], cwd: work.path,
            logPath: work.file("watch.log"))
        defer { watch.stop() }
        #expect(wait(for: watch) { SyncCommandTests.imported($0).count == 4 }, "\(watch.log)")

        card.stop()  // the camera is switched off
        #expect(wait(for: watch) { $0.contains { $0["event"] as? String == "unavailable" } }, "\(watch.log)")
        try TestData.file(root.file("DCIM/100__TSB/IMG_0005.JPG"), size: 33_000, seed: 5)
        let back = try FerryCardProcess(folder: root.path, arguments: ["--port", String(port)])
        defer { back.stop() }
        #expect(
            wait(for: watch) { SyncCommandTests.imported($0).contains("/DCIM/100__TSB/IMG_0005.JPG") }, "\(watch.log)")
        let lines = SyncCommandTests.jsonLines(watch.log)
        #expect(lines.contains { $0["event"] as? String == "available" })
        #expect(SyncCommandTests.imported(lines).count == 5)  // nothing twice
        #expect(watch.process.isRunning)

        // The same address now answers as another card: noticed, and its files are new.
        back.stop()
        let other = try FerryCardProcess(
            folder: root.path, arguments: ["--port", String(port), "--cid", String(repeating: "c", count: 32)])
        defer { other.stop() }
        #expect(
            wait(for: watch) { $0.contains { $0["event"] as? String == "different-card" } },
            "\(watch.log.suffix(3000))")
        watch.signal(SIGINT)
        watch.process.waitWithoutRunLoop()
        #expect(watch.process.terminationStatus == 0, "\(watch.log)")
    }

    @Test func anInterruptedSyncResumesItsPartialFile() throws {
        let big = try TestData.file(root.file("DCIM/100__TSB/BIG.RAW"), size: 3_000_000, seed: 30)
        let card = try FerryCardProcess(folder: root.path, arguments: ["--rate", "600000"])
        defer { card.stop() }
        let first = try ServerProcess(
            ferry, ["sync", card.url("/DCIM"), "photos", "--only", "raw", "--json"], cwd: work.path,
            logPath: work.file("first.log"))
        let part = work.file("photos/100__TSB/BIG.RAW.part")
        let deadline = Date().addingTimeInterval(15)
        while (Self.size(part) ?? 0) < 1_000_000 && Date() < deadline { usleep(20_000) }
        first.signal(SIGINT)  // Ctrl-C
        first.process.waitWithoutRunLoop()
        #expect(first.process.terminationStatus == 130)
        #expect(first.log.contains("partial files kept"), "\(first.log)")
        let kept = Self.size(part) ?? 0
        #expect(kept >= 1_000_000 && kept < 3_000_000)
        #expect(!fm.fileExists(atPath: work.file("photos/100__TSB/BIG.RAW")))

        let again = try run(["sync", card.url("/DCIM"), "photos", "--only", "raw", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        let line = try #require(SyncCommandTests.jsonLines(again.stdout).first { $0["type"] as? String == "imported" })
        #expect((line["resumedFrom"] as? Int ?? 0) >= 1_000_000)
        #expect(line["bytesTransferred"] as? Int == 3_000_000 - (line["resumedFrom"] as? Int ?? 0))
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("photos/100__TSB/BIG.RAW"))) == big)
        #expect(!fm.fileExists(atPath: part))
    }

    @Test func aResyncOfFiveThousandFilesWithNothingNewTakesUnderTwoSeconds() throws {
        let many = try TempDir(prefix: "sync-5000")
        for folder in 0..<5 {
            let dir = many.file("DCIM/\(100 + folder)CANON")
            try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for i in 0..<1000 {
                try Data(repeating: UInt8(i & 0xFF), count: 100 + i % 7)
                    .write(to: URL(fileURLWithPath: dir + String(format: "/IMG_%04d.JPG", folder * 1000 + i)))
            }
        }
        let card = try FerryCardProcess(folder: many.path)
        defer { card.stop() }
        let first = try run(["sync", card.url("/DCIM"), "many", "--quiet"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("imported 5000 files"))

        let started = Date()
        let again = try run(["sync", card.url("/DCIM"), "many", "--json"])
        let seconds = Date().timeIntervalSince(started)
        #expect(again.status == 0, "\(again.stderr)")
        let summary = try #require(SyncCommandTests.summaries(again.stdout).last)
        #expect(summary["listed"] as? Int == 5000)
        #expect(summary["alreadyImported"] as? Int == 5000)
        #expect(summary["imported"] as? Int == 0 && summary["bytes"] as? Int == 0)
        #expect(SyncCommandTests.jsonLines(again.stdout).allSatisfy { $0["type"] as? String != "progress" })
        #expect(seconds < 2, "re-sync took \(seconds) s")
        print("re-sync of 5,000 files with nothing new: \(String(format: "%.3f", seconds)) s (whole ferry process)")
    }

    @Test func syncsFromAnFTPServerWithParallelDownloads() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        for i in 0..<12 {
            try server.write(TestData.bytes(20_000 + i, seed: UInt64(i)), at: "/pub/cam/\(100 + i % 2)/P\(i).JPG")
        }
        let first = try run(["sync", server.url("/pub/cam"), "ftp-photos", "-j", "4", "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        let summary = try #require(SyncCommandTests.summaries(first.stdout).last)
        #expect(summary["imported"] as? Int == 12)
        #expect((summary["sourceKey"] as? String) == "ftp://127.0.0.1:\(server.port)/pub/cam")
        #expect(
            !first.stdout.contains(FTPTestServer.testPassword) && !first.stderr.contains(FTPTestServer.testPassword))
        #expect(
            fm.contentsEqual(atPath: work.file("ftp-photos/101/P3.JPG"), andPath: server.local("/pub/cam/101/P3.JPG")))
        let again = try run(["sync", server.url("/pub/cam"), "ftp-photos", "-j", "4"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("imported 0 files; skipped 12 (12 imported before)"), "\(again.stdout)")
    }

    @Test func sinceDates() throws {
        let utc = TimeZone(identifier: "UTC")!
        let day = try #require(SyncCommand.parseDate("2024-05-01", zone: utc))
        #expect(day.timeIntervalSince1970 == 1_714_521_600)
        #expect(SyncCommand.parseDate("2024-05-01T13:45", zone: utc) == day.addingTimeInterval(13 * 3600 + 45 * 60))
        #expect(SyncCommand.parseDate("2024-05-01 13:45:10", zone: utc) == day.addingTimeInterval(49_510))
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        #expect(SyncCommand.parseDate("2024-05-01", zone: tokyo) == day.addingTimeInterval(-9 * 3600))
        #expect(SyncCommand.parseDate("2024-05-01T00:00:00Z", zone: tokyo) == day)
        for bad in ["May 1", "2024-13-01", "2024-02-30", "2024-05", "yesterday", ""] {
            #expect(SyncCommand.parseDate(bad) == nil, "\(bad)")
        }
    }

    static func size(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }
}
