import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// The import history (SQLite) and the small rules sync is built on: names that
/// clobber nothing, date folders, filters, source identities.
struct SyncHistoryTests {
    static let t1 = RemoteTimestamp(year: 2024, month: 5, day: 1, hour: 10, minute: 0, second: 2, zone: .floating)!
    static let t2 = RemoteTimestamp(year: 2024, month: 5, day: 2, hour: 11, minute: 0, second: 0, zone: .floating)!

    @Test func recordsAndLooksUpBySourcePathSizeAndTime() throws {
        let dir = try TempDir(prefix: "history")
        #expect(try SyncHistory.open(directory: dir.path, create: false) == nil)
        #expect(!FileManager.default.fileExists(atPath: dir.file(SyncHistory.fileName)))
        let h = try #require(try SyncHistory.open(directory: dir.path))
        try h.record([
            .init(
                source: "card-a", path: "/DCIM/A.JPG", size: 100, modified: Self.t1, localPath: "A.JPG",
                origin: .downloaded),
            .init(
                source: "card-a", path: "/DCIM/B.JPG", size: nil, modified: nil, localPath: "B.JPG",
                origin: .foundLocally),
        ])
        let known = try h.transaction(write: false) { (tx) throws(FerryError) -> [SyncHistory.Known] in
            [
                try tx.known(source: "card-a", path: "/DCIM/A.JPG", size: 100, modified: Self.t1),
                try tx.known(source: "card-a", path: "/DCIM/A.JPG", size: 101, modified: Self.t1),
                try tx.known(source: "card-a", path: "/DCIM/A.JPG", size: 100, modified: Self.t2),
                try tx.known(source: "card-b", path: "/DCIM/A.JPG", size: 100, modified: Self.t1),
                try tx.known(source: "card-a", path: "/DCIM/C.JPG", size: 100, modified: Self.t1),
                try tx.known(source: "card-a", path: "/DCIM/B.JPG", size: nil, modified: nil),
            ]
        }
        #expect(
            known == [.imported(localPath: "A.JPG"), .changed, .changed, .new, .new, .imported(localPath: "B.JPG")])
        let claimed = try h.transaction(write: false) { (tx) throws(FerryError) -> [Bool] in
            [try tx.isClaimed(localPath: "A.JPG"), try tx.isClaimed(localPath: "Z.JPG")]
        }
        #expect(claimed == [true, false])

        // Reopened (another run): the same records, WAL mode.
        let again = try #require(try SyncHistory.open(directory: dir.path, create: false))
        let records = try again.records(source: "card-a")
        #expect(records.map(\.path) == ["/DCIM/A.JPG", "/DCIM/B.JPG"])
        #expect(records[0].size == 100 && records[0].modified == Self.t1 && records[0].origin == .downloaded)
        #expect(records[1].size == nil && records[1].modified == nil && records[1].origin == .foundLocally)
        let mode = try TestProcess.run(
            "/usr/bin/env", ["sqlite3", dir.file(SyncHistory.fileName), "PRAGMA journal_mode"])
        if mode.status == 0 { #expect(mode.stdout == "wal\n") }
    }

    @Test func aFileThatIsNotAHistoryIsAClearError() throws {
        let dir = try TempDir(prefix: "history")
        try "not sqlite at all, just text".write(
            toFile: dir.file(SyncHistory.fileName), atomically: true, encoding: .utf8)
        do {
            _ = try SyncHistory.open(directory: dir.path)
            Issue.record("opened a text file as a history")
        } catch {
            #expect(error.code == .localIO)
            #expect(error.description.contains(SyncHistory.fileName))
        }
    }

    @Test func namesThatClobberNothing() throws {
        #expect(SyncNaming.numbered("IMG_0001.JPG", 1) == "IMG_0001.JPG")
        #expect(SyncNaming.numbered("IMG_0001.JPG", 2) == "IMG_0001 (2).JPG")
        #expect(SyncNaming.numbered("/a/b.c/IMG.tar.gz", 3) == "/a/b.c/IMG.tar (3).gz")
        #expect(SyncNaming.numbered("README", 2) == "README (2)")
        #expect(SyncNaming.numbered("/out/my.photos/README", 2) == "/out/my.photos/README (2)")
        #expect(SyncNaming.numbered("/out/d/.profile", 2) == "/out/d/.profile (2)")
        #expect(SyncNaming.relative("/DCIM/100__TSB/A.JPG", root: "/DCIM") == "100__TSB/A.JPG")
        #expect(SyncNaming.relative("/DCIM/100__TSB/A.JPG", root: "/DCIM/") == "100__TSB/A.JPG")
        #expect(SyncNaming.relative("/DCIM/A.JPG", root: "/") == "DCIM/A.JPG")

        let dir = try TempDir(prefix: "names")
        let target = dir.file("A.JPG")
        #expect(SyncNaming.isFree(target, source: "flashair://h/A.JPG"))
        // A .part of another download (its journal names another source) is not ours.
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: target + ".part"))
        let journal = DownloadJournal(source: "flashair://h/OTHER.JPG", bootID: DownloadJournal.currentBootID)
        try journal.save(to: target + ".part.journal")
        #expect(!SyncNaming.isFree(target, source: "flashair://h/A.JPG"))
        #expect(SyncNaming.isFree(target, source: "flashair://h/OTHER.JPG"))
        try Data().write(to: URL(fileURLWithPath: target))
        #expect(!SyncNaming.isFree(target, source: "flashair://h/OTHER.JPG"))
    }

    @Test func dayFoldersFiltersAndIdentities() throws {
        let utc = TimeZone(identifier: "UTC")!
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        #expect(SyncNaming.dayFolder(Self.t1, zone: tokyo) == "2024-05-01")
        let late = RemoteTimestamp(year: 2024, month: 5, day: 1, hour: 20, zone: .utc)!
        #expect(SyncNaming.dayFolder(late, zone: utc) == "2024-05-01")
        #expect(SyncNaming.dayFolder(late, zone: tokyo) == "2024-05-02")

        #expect(SyncOptions.extensions(from: "jpg,.CR2, raw,,") == ["jpg", "cr2", "raw"])
        var o = SyncOptions()
        #expect(o.accepts(name: "anything"))
        o.extensions = ["jpg", "cr2"]
        #expect(o.accepts(name: "IMG_1.JPG") && o.accepts(name: "x.Cr2"))
        #expect(!o.accepts(name: "MOV_1.MOV") && !o.accepts(name: "jpg") && !o.accepts(name: ".jpg"))

        let a = SyncSourceIdentity(url: try RemoteURL(parsing: "ftp://bob:pw@Example.ORG/DCIM/"))
        #expect(a.key == "ftp://example.org:21/DCIM")
        #expect(!a.key.contains("pw"))
        #expect(SyncSourceIdentity(url: try RemoteURL(parsing: "/media/card/")).key == "file:///media/card")
        let card = SyncSourceIdentity(cid: "0353ABCDEF")
        #expect(card.key == "flashair-cid:0353abcdef" && card.cid == "0353abcdef")
    }
}
