import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// Never lose a photo (issue 25, items 1, 3 and 7; docs/RELIABILITY.md): a file is
/// deleted from a source only when Ferry wrote its local copy and the copy still
/// has the size and SHA-256 recorded when it was written; a file found in the
/// folder is never a reason to delete; a lost history row brings no duplicate;
/// the browser UI's badges answer "imported?" by the rule sync plans by.
@Suite(.serialized)
struct SyncSafetyTests {
    let root: TempDir
    let out: TempDir
    let fm = FileManager.default

    init() throws {
        root = try TempDir(prefix: "safety-card")
        out = try TempDir(prefix: "safety-out")
        try fm.createDirectory(atPath: root.file("DCIM/100__TSB"), withIntermediateDirectories: true)
    }

    /// A file of `size` bytes on the card with a camera's time.
    @discardableResult
    func photo(_ path: String, size: Int, seed: UInt64, date: (Int, Int, Int, Int, Int, Int)) throws -> Data {
        let data = try TestData.file(root.file(path), size: size, seed: seed)
        try fm.setAttributes([.modificationDate: SyncEngineTests.localDate(date)], ofItemAtPath: root.file(path))
        return data
    }

    func engine(
        _ card: FerryCardProcess, _ configure: (inout SyncOptions) -> Void = { _ in }
    ) throws -> SyncEngine {
        var policy = FlashAirFileSystem.RequestPolicy()
        policy.retryDelay = .milliseconds(50)
        policy.stallTimeout = .seconds(5)
        let fs = FlashAirFileSystem(url: try RemoteURL(parsing: card.url("/DCIM")), policy: policy)
        var o = SyncOptions()
        o.download.retryDelay = .milliseconds(20)
        configure(&o)
        return SyncEngine(fileSystem: fs, directory: out.path, options: o)
    }

    func bytes(_ path: String) -> Data? { fm.contents(atPath: path) }

    func history() throws -> SyncHistory { try #require(try SyncHistory.open(directory: out.path, create: false)) }

    /// The case: the card's new `IMG_0001.CR2` and an older, different
    /// `IMG_0001.CR2` of the same size (raw files have one size per camera; the
    /// numbering starts again after a format) already in the folder.
    @Test func deleteAfterNeverDeletesAPhotoThatOnlyMatchesAnOlderLocalFileBySize() async throws {
        let new = try photo("DCIM/100__TSB/IMG_0001.CR2", size: 250_000, seed: 1, date: (2026, 11, 30, 10, 0, 0))
        try fm.createDirectory(atPath: out.file("100__TSB"), withIntermediateDirectories: true)
        let old = try TestData.file(out.file("100__TSB/IMG_0001.CR2"), size: 250_000, seed: 2)
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        let s = try await engine(card) { $0.deleteAfter = true }.runPass()
        // Same size, another time: another photo. It is fetched beside the old one
        // under a new name, verified, and only then deleted from the card.
        #expect(s.recorded == 0 && s.imported == 1, "\(s)")
        #expect(bytes(out.file("100__TSB/IMG_0001.CR2")) == old)
        #expect(bytes(out.file("100__TSB/IMG_0001 (2).CR2")) == new)
        #expect(s.deleted == ["/DCIM/100__TSB/IMG_0001.CR2"])
        #expect(!fm.fileExists(atPath: root.file("DCIM/100__TSB/IMG_0001.CR2")))
    }

    /// Worst case: name, size and time all match, the bytes differ. The file is
    /// taken as found (recorded, not fetched) but that is never a reason to delete.
    @Test func aFileFoundInTheFolderIsNeverDeletedFromTheSource() async throws {
        let new = try photo("DCIM/100__TSB/IMG_0001.CR2", size: 250_000, seed: 1, date: (2026, 11, 30, 10, 0, 0))
        try fm.createDirectory(atPath: out.file("100__TSB"), withIntermediateDirectories: true)
        try TestData.file(out.file("100__TSB/IMG_0001.CR2"), size: 250_000, seed: 2)
        try fm.setAttributes(
            [.modificationDate: SyncEngineTests.localDate((2026, 11, 30, 10, 0, 0))],
            ofItemAtPath: out.file("100__TSB/IMG_0001.CR2"))
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        let sync = try engine(card) { $0.deleteAfter = true }
        let s = try await sync.runPass()
        #expect(s.recorded == 1 && s.imported == 0 && s.deleted.isEmpty, "\(s)")
        #expect(s.kept.map(\.remotePath) == ["/DCIM/100__TSB/IMG_0001.CR2"])
        #expect(s.kept.first?.reason.contains("not copied by Ferry") == true, "\(s.kept)")
        #expect(bytes(root.file("DCIM/100__TSB/IMG_0001.CR2")) == new)
        // And on every later run too.
        let again = try await sync.runPass()
        #expect(again.alreadyImported == 1 && again.deleted.isEmpty && again.kept.count == 1)
        #expect(fm.fileExists(atPath: root.file("DCIM/100__TSB/IMG_0001.CR2")))
        #expect(try history().records().map(\.origin) == [.foundLocally])
    }

    /// The history keeps the SHA-256 of each copy, computed while the bytes streamed;
    /// a copy whose bytes changed since (same size) keeps the card's photo.
    @Test func deleteAfterChecksTheCopysChecksum() async throws {
        let a = try photo("DCIM/100__TSB/IMG_0001.JPG", size: 400_000, seed: 3, date: (2026, 11, 30, 10, 0, 0))
        try photo("DCIM/100__TSB/IMG_0002.JPG", size: 300_000, seed: 4, date: (2026, 11, 30, 10, 0, 2))
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        let first = try await engine(card).runPass()
        #expect(first.imported == 2)
        let records = try history().records()
        #expect(records.count == 2)
        for r in records {
            let copy = out.file(r.localPath)
            #expect(r.origin == .downloaded)
            #expect(r.localSize == Int64(try #require(bytes(copy)).count))
            #expect(r.sha256 != nil && r.sha256 == Digest.sha256(ofFileAt: copy), "\(r)")
        }
        #expect(records.first { $0.path.hasSuffix("IMG_0001.JPG") }?.sha256 == Digest.hex(Digest.hash(Array(a))))
        // Someone edits one copy in place, keeping its size.
        var edited = try #require(bytes(out.file("100__TSB/IMG_0002.JPG")))
        edited[1000] ^= 0xff
        try edited.write(to: URL(fileURLWithPath: out.file("100__TSB/IMG_0002.JPG")))
        let s = try await engine(card) { $0.deleteAfter = true }.runPass()
        #expect(s.deleted == ["/DCIM/100__TSB/IMG_0001.JPG"], "\(s)")
        #expect(s.kept.map(\.remotePath) == ["/DCIM/100__TSB/IMG_0002.JPG"])
        #expect(s.kept.first?.reason.contains("SHA-256") == true, "\(s.kept)")
        #expect(fm.fileExists(atPath: root.file("DCIM/100__TSB/IMG_0002.JPG")))
    }

    /// A resumed download's checksum covers the bytes kept from before as well.
    @Test func aResumedDownloadsChecksumCoversTheWholeFile() async throws {
        let big = try photo("DCIM/100__TSB/BIG.RAW", size: 2_000_000, seed: 50, date: (2020, 1, 1, 0, 0, 0))
        let card = try FerryCardProcess(folder: root.path, arguments: ["--rate", "500000"])
        defer { card.stop() }
        let sync = try engine(card)
        let pass = Task { try await sync.runPass() }
        let part = out.file("100__TSB/BIG.RAW.part")
        let deadline = Date().addingTimeInterval(20)
        while (LocalFileSizes.of(part) ?? 0) < 600_000 && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        pass.cancel()
        #expect(try await pass.value.interrupted)
        let resumed = try await sync.runPass()
        #expect(resumed.imported == 1)
        let record = try #require(try history().records().first)
        #expect(record.sha256 == Digest.hex(Digest.hash(Array(big))))
    }

    /// A run that lost its history rows (a crash between the rename and the
    /// history write, a power cut losing the last WAL records) finds every copy
    /// again, numbered names included, and fetches nothing twice.
    @Test func lostHistoryRowsBringNoDuplicatesNumberedNamesIncluded() async throws {
        // Two IMG_0005.JPG of one day in two folders, date layout: the second is
        // `IMG_0005 (2).JPG`.
        try fm.createDirectory(atPath: root.file("DCIM/101__TSB"), withIntermediateDirectories: true)
        try photo("DCIM/100__TSB/IMG_0005.JPG", size: 50_000, seed: 5, date: (2026, 11, 29, 9, 0, 0))
        try photo("DCIM/101__TSB/IMG_0005.JPG", size: 60_000, seed: 6, date: (2026, 11, 29, 17, 0, 0))
        try photo("DCIM/101__TSB/IMG_0006.JPG", size: 70_000, seed: 7, date: (2026, 11, 29, 17, 1, 0))
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        let sync = try engine(card) { $0.layout = .date }
        let first = try await sync.runPass()
        #expect(first.imported == 3)
        let names = ["2026-11-29/IMG_0005 (2).JPG", "2026-11-29/IMG_0005.JPG", "2026-11-29/IMG_0006.JPG"]
        #expect(files() == names)
        // Every row lost, and a kill between a rename and its journal's unlink left
        // a journal without its part (issue 25 item 10).
        let db = try SQLiteDatabase(path: out.file(SyncHistory.fileName), create: false)
        try db.execute("DELETE FROM imports")
        let orphan = out.file("2026-11-29/IMG_0006.JPG.part.journal")
        try Data("{}".utf8).write(to: URL(fileURLWithPath: orphan))
        let second = try await sync.runPass()
        #expect(second.imported == 0 && second.recorded == 3, "\(second)")
        #expect(files() == names)
        #expect(!fm.fileExists(atPath: orphan), "the stale journal is gone")
        // The rows are back (as found): a third run has nothing to do.
        let third = try await sync.runPass()
        #expect(third.alreadyImported == 3 && third.imported == 0 && third.recorded == 0)
        #expect(files() == names)
    }

    func files() -> [String] { filesBelow(out) }

    /// The page's badges and counts ask the history by sync's rule: a file
    /// rewritten with the same size is new; what a listing does not say (python's
    /// http.server gives no size or time) cannot make a file new.
    @Test func importedFilesAnswerBySyncsRule() throws {
        let history = try #require(try SyncHistory.open(directory: out.path))
        let t = try #require(RemoteTimestamp(year: 2026, month: 11, day: 30, hour: 10, zone: .floating))
        let t2 = try #require(RemoteTimestamp(year: 2026, month: 11, day: 30, hour: 10, minute: 7, zone: .floating))
        try history.record([
            .init(source: "s", path: "/a.jpg", size: 100, modified: t, localPath: "a.jpg", origin: .downloaded),
            .init(source: "s", path: "/b.jpg", size: -1, modified: nil, localPath: "b.jpg", origin: .downloaded),
        ])
        let known = try history.imported(source: "s")
        func entry(_ p: String, _ size: Int64?, _ m: RemoteTimestamp?) -> RemoteEntry {
            RemoteEntry(name: String(p.dropFirst()), path: p, kind: .file, size: size, modified: m)
        }
        #expect(known.count == 2)
        #expect(known.contains(entry("/a.jpg", 100, t)))
        #expect(!known.contains(entry("/a.jpg", 100, t2)))  // rewritten, same size
        // The same file an hour off (a clock change of the card) counts as imported.
        let t3 = try #require(RemoteTimestamp(year: 2026, month: 11, day: 30, hour: 11, zone: .floating))
        #expect(known.contains(entry("/a.jpg", 100, t3)))
        #expect(!known.contains(entry("/a.jpg", 101, t)))
        #expect(known.contains(entry("/b.jpg", nil, nil)))
        #expect(!known.contains(entry("/c.jpg", 100, t)))
        #expect(try !history.imported(source: "other").contains(entry("/a.jpg", 100, t)))
    }

    /// `python3 -m http.server` lists neither sizes nor times: three syncs leave one
    /// copy of each file (issue 29 item 2).
    @Test func syncFromPythonHTTPServerImportsEachFileOnce() async throws {
        try photo("DCIM/100__TSB/FER_0001.JPG", size: 30_000, seed: 11, date: (2026, 11, 30, 10, 0, 0))
        try photo("DCIM/100__TSB/FER_0002.JPG", size: 40_000, seed: 12, date: (2026, 11, 30, 10, 0, 2))
        let python = try PythonHTTPServer(root: root.path)
        let fs = try Ferry.fileSystem(for: try RemoteURL(parsing: python.url("/DCIM/")))
        for run in 1...3 {
            let s = try await SyncEngine(fileSystem: fs, directory: out.path).runPass()
            #expect(s.succeeded, "\(s)")
            #expect(s.imported == (run == 1 ? 2 : 0) && s.changed == 0, "run \(run): \(s)")
        }
        #expect(files() == ["100__TSB/FER_0001.JPG", "100__TSB/FER_0002.JPG"])
    }

    /// A version 1 history (before checksums) is upgraded in place; its records
    /// stay imported but never prove a copy for delete-after.
    @Test func aVersionOneHistoryIsUpgradedAndItsCopiesAreNotDeleted() async throws {
        try photo("DCIM/100__TSB/IMG_0001.JPG", size: 10_000, seed: 1, date: (2026, 11, 30, 10, 0, 0))
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        _ = try await engine(card).runPass()
        // Make it what version 1 wrote: the same table without the copy's columns.
        do {
            let db = try SQLiteDatabase(path: out.file(SyncHistory.fileName), create: false)
            try db.execute(
                """
                CREATE TABLE v1(source TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL,
                    mtime TEXT NOT NULL, local TEXT NOT NULL, origin TEXT NOT NULL, imported_at REAL NOT NULL,
                    deleted_from_source INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(source, path, size, mtime)
                ) WITHOUT ROWID;
                INSERT INTO v1 SELECT source, path, size, mtime, local, origin, imported_at, deleted_from_source
                    FROM imports;
                DROP TABLE imports;
                ALTER TABLE v1 RENAME TO imports;
                CREATE INDEX imports_by_local ON imports(local);
                PRAGMA user_version=1;
                """)
        }
        // A dry run reads it as it is.
        let dry = try await engine(card) {
            $0.dryRun = true
            $0.deleteAfter = true
        }.runPass()
        #expect(dry.alreadyImported == 1)
        #expect(try history().records().first?.sha256 == nil)
        let s = try await engine(card) { $0.deleteAfter = true }.runPass()
        #expect(s.alreadyImported == 1 && s.deleted.isEmpty)
        #expect(s.kept.first?.reason.contains("older Ferry") == true, "\(s.kept)")
        #expect(fm.fileExists(atPath: root.file("DCIM/100__TSB/IMG_0001.JPG")))
    }

    /// A record that kept no time (nginx's and Apache's pages before times to the
    /// minute; a listing without times) is still this file when the listing now
    /// gives one: nothing is fetched again, and the record learns the time.
    @Test func aRecordWithoutATimeMatchesAndLearnsIt() async throws {
        try photo("DCIM/100__TSB/IMG_0001.JPG", size: 10_000, seed: 1, date: (2026, 11, 30, 10, 0, 0))
        let fs = LocalFileSystem(url: try RemoteURL(parsing: root.file("DCIM")))
        let key = "file://" + root.file("DCIM")
        let history = try #require(try SyncHistory.open(directory: out.path))
        try history.record([
            .init(
                source: key, path: root.file("DCIM/100__TSB/IMG_0001.JPG"), size: 10_000, modified: nil,
                localPath: "100__TSB/IMG_0001.JPG", origin: .downloaded)
        ])
        let s = try await SyncEngine(fileSystem: fs, directory: out.path).runPass()
        #expect(s.sourceKey == key && s.alreadyImported == 1 && s.imported == 0, "\(s)")
        let records = try history.records()
        #expect(records.count == 1 && records.first?.modified != nil, "\(records)")
        // Now that it knows the time, a rewrite of the same size is new.
        try photo("DCIM/100__TSB/IMG_0001.JPG", size: 10_000, seed: 2, date: (2026, 11, 30, 12, 0, 0))
        let changed = try await SyncEngine(fileSystem: fs, directory: out.path).runPass()
        #expect(changed.imported == 1 && changed.changed == 1, "\(changed)")
    }

    /// A sync interrupted through one spelling of the card's address and run again
    /// through another (`localhost`, another port: DHCP, the card's own access
    /// point) resumes its `.part` instead of fetching the file again beside it
    /// (issue 25 item 6).
    @Test func aPartIsResumedThroughAnotherSpellingOfTheAddress() async throws {
        let big = try photo("DCIM/100__TSB/BIG.RAW", size: 2_000_000, seed: 50, date: (2020, 1, 1, 0, 0, 0))
        let cid = String(repeating: "c", count: 32)
        let slow = try FerryCardProcess(folder: root.path, arguments: ["--rate", "500000", "--cid", cid])
        let sync = try engine(slow)
        let pass = Task { try await sync.runPass() }
        let part = out.file("100__TSB/BIG.RAW.part")
        let deadline = Date().addingTimeInterval(20)
        while (LocalFileSizes.of(part) ?? 0) < 600_000 && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        pass.cancel()
        #expect(try await pass.value.interrupted)
        slow.stop()
        // The same card (its CID) at another port, spelt `localhost`.
        let card = try FerryCardProcess(folder: root.path, arguments: ["--cid", cid])
        defer { card.stop() }
        let url = card.url("/DCIM").replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let fs = FlashAirFileSystem(url: try RemoteURL(parsing: url))
        let events = SyncEvents()
        let resumed = try await SyncEngine(fileSystem: fs, directory: out.path).runPass(events: events.handler)
        #expect(resumed.imported == 1, "\(resumed)")
        let result = try #require(events.imported.first?.1)
        #expect(result.resumedFrom >= 600_000, "\(result)")
        #expect(files() == ["100__TSB/BIG.RAW"], "no second copy, no .part left")
        #expect(bytes(out.file("100__TSB/BIG.RAW")) == big)
        #expect(try history().records().first?.sha256 == Digest.hex(Digest.hash(Array(big))))
    }
}

/// A second copy while importing (issue 26 item 8): both from the one download,
/// each verified, the backup folder's own history; delete-after only when both
/// copies are proven; a missing backup disk is reported and keeps the photos.
@Suite(.serialized)
struct SyncBackupTests {
    let root: TempDir
    let out: TempDir
    let backup: TempDir
    let fm = FileManager.default

    init() throws {
        root = try TempDir(prefix: "backup-src")
        out = try TempDir(prefix: "backup-out")
        backup = try TempDir(prefix: "backup-two")
        try fm.createDirectory(atPath: root.file("DCIM/100CANON"), withIntermediateDirectories: true)
        for i in 1...3 {
            try TestData.file(root.file("DCIM/100CANON/IMG_000\(i).CR2"), size: 200_000 * i, seed: UInt64(i))
        }
    }

    func engine(backup folder: String, deleteAfter: Bool = false) throws -> SyncEngine {
        var o = SyncOptions()
        o.backupDirectory = folder
        o.deleteAfter = deleteAfter
        return SyncEngine(
            fileSystem: LocalFileSystem(url: try RemoteURL(parsing: root.file("DCIM"))), directory: out.path,
            options: o)
    }

    @Test func bothCopiesFromOneDownloadThenDeleteAfterBothAreProven() async throws {
        let s = try await engine(backup: backup.path).runPass()
        #expect(s.imported == 3 && s.backedUp == 3 && s.succeeded, "\(s)")
        #expect(filesBelow(out) == filesBelow(backup))
        for f in filesBelow(out) {
            #expect(fm.contentsEqual(atPath: out.file(f), andPath: backup.file(f)))
        }
        let records = try #require(try SyncHistory.open(directory: backup.path, create: false)).records()
        #expect(records.count == 3 && records.allSatisfy { $0.sha256 != nil })
        // Someone edits one backup copy: its photo stays on the source.
        var bytes = try #require(fm.contents(atPath: backup.file("100CANON/IMG_0002.CR2")))
        bytes[10] ^= 1
        try bytes.write(to: URL(fileURLWithPath: backup.file("100CANON/IMG_0002.CR2")))
        let d = try await engine(backup: backup.path, deleteAfter: true).runPass()
        #expect(d.backedUp == 0 && d.deleted.count == 2, "\(d)")
        #expect(d.kept.map(\.remotePath) == [root.file("DCIM/100CANON/IMG_0002.CR2")])
        #expect(d.kept.first?.reason.contains("backup copy") == true, "\(d.kept)")
    }

    @Test func aMissingBackupDiskIsReportedAndCaughtUpLater() async throws {
        let gone = backup.file("not-mounted/photos")
        let s = try await engine(backup: gone, deleteAfter: true).runPass()
        #expect(s.imported == 3 && s.backedUp == 0 && s.failures.count == 3, "\(s)")
        #expect(s.failures.first?.error.description.contains("disk connected") == true)
        #expect(s.deleted.isEmpty, "no photo deleted without its second copy")
        #expect(!fm.fileExists(atPath: gone))
        // The disk is back: the next run copies what it missed, from the first copies.
        try fm.createDirectory(atPath: backup.file("not-mounted"), withIntermediateDirectories: true)
        let later = try await engine(backup: gone).runPass()
        #expect(later.imported == 0 && later.backedUp == 3 && later.succeeded, "\(later)")
        #expect(filesBelow(out).count == 3)
    }
}
