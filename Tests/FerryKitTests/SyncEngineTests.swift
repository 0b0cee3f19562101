import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryKit

#if canImport(Glibc)
    import Glibc
#endif

/// Collects a sync's events for the checks.
final class SyncEvents: Sendable {
    private let events = Mutex<[SyncEvent]>([])
    var handler: @Sendable (SyncEvent) -> Void { { e in self.events.withLock { $0.append(e) } } }
    var all: [SyncEvent] { events.withLock { $0 } }

    var imported: [(SyncItem, TransferResult)] {
        all.compactMap { if case .imported(let i, let r) = $0 { (i, r) } else { nil } }
    }
    var deleted: [String] {
        all.compactMap { if case .deletedFromSource(let i) = $0 { i.remotePath } else { nil } }
    }
}

/// `SyncEngine` against `ferry card` (a process on a free port, per test) and
/// local folders: first import, only new files after, nothing fetched twice,
/// changed files under new names, filters, dry run, layouts, delete-after.
///
/// Waits are `Task.sleep`, never `usleep`: a blocked thread of the small
/// cooperative pool would starve the very sync being waited for.
@Suite(.serialized)
struct SyncEngineTests {
    let root: TempDir
    let out: TempDir
    let fm = FileManager.default

    init() throws {
        root = try TempDir(prefix: "sync-card")
        out = try TempDir(prefix: "sync-out")
        try fm.createDirectory(atPath: root.file("DCIM/100__TSB"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root.file("DCIM/101__TSB"), withIntermediateDirectories: true)
        for i in 1...3 {
            try photo(
                "DCIM/100__TSB/IMG_000\(i).JPG", size: 100_000 * i, seed: UInt64(i), date: (2019, 7, 6, 5, 4, 2 * i))
        }
        try photo("DCIM/101__TSB/MOV_0001.MOV", size: 70_000, seed: 7, date: (2019, 7, 7, 8, 0, 0))
        try photo("DCIM/.hidden", size: 5, seed: 8, date: (2019, 7, 7, 8, 0, 0))
    }

    // MARK: Helpers

    /// Writes a file under the card folder with a local modification time.
    @discardableResult
    func photo(_ path: String, size: Int, seed: UInt64, date: (Int, Int, Int, Int, Int, Int)) throws -> Data {
        let data = try TestData.file(root.file(path), size: size, seed: seed)
        try fm.setAttributes([.modificationDate: SyncEngineTests.localDate(date)], ofItemAtPath: root.file(path))
        return data
    }

    static func localDate(_ d: (Int, Int, Int, Int, Int, Int)) -> Date {
        var c = DateComponents()
        (c.year, c.month, c.day, c.hour, c.minute, c.second) = d
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        return calendar.date(from: c)!
    }

    func startCard(_ arguments: [String] = []) throws -> FerryCardProcess {
        try FerryCardProcess(folder: root.path, arguments: arguments)
    }

    /// An engine for `card` + `path` into `out` with short test timeouts.
    func engine(
        _ card: FerryCardProcess, _ path: String = "/DCIM", into directory: String? = nil,
        _ configure: (inout SyncOptions) -> Void = { _ in }
    ) throws -> SyncEngine {
        var policy = FlashAirFileSystem.RequestPolicy()
        policy.retryDelay = .milliseconds(50)
        policy.stallTimeout = .seconds(5)
        let fs = FlashAirFileSystem(url: try RemoteURL(parsing: card.url(path)), policy: policy)
        var o = SyncOptions()
        o.download.retryDelay = .milliseconds(20)
        configure(&o)
        return SyncEngine(fileSystem: fs, directory: directory ?? out.path, options: o)
    }

    /// The card folder as an in-memory source, for tests about the sync and not
    /// about the card's protocol: no process to start, every file as it is on disk.
    func memoryCard() throws -> MemoryFileSystem {
        let fs = try MemoryFileSystem(url: try RemoteURL(parsing: "sftp://memory/DCIM"))
        for rel in fm.subpaths(atPath: root.path) ?? [] {
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: root.file(rel), isDirectory: &isDir), !isDir.boolValue else { continue }
            try put(rel, in: fs)
        }
        return fs
    }

    /// Copies the card folder's file `path` into the in-memory source, with its time.
    func put(_ path: String, in fs: MemoryFileSystem) throws {
        let time = try fm.attributesOfItem(atPath: root.file(path))[.modificationDate] as! Date
        fs.add("/" + path, try Data(contentsOf: URL(fileURLWithPath: root.file(path))), modified: time)
    }

    /// An engine for the in-memory source into `out` (or `directory`).
    func engine(
        _ fs: MemoryFileSystem, into directory: String? = nil, _ configure: (inout SyncOptions) -> Void = { _ in }
    ) -> SyncEngine {
        var o = SyncOptions()
        o.download.retryDelay = .milliseconds(20)
        configure(&o)
        return SyncEngine(fileSystem: fs, directory: directory ?? out.path, options: o)
    }

    func same(_ local: String, _ remote: String) -> Bool {
        fm.contentsEqual(atPath: out.file(local), andPath: root.file(remote))
    }

    func exists(_ local: String) -> Bool { fm.fileExists(atPath: out.file(local)) }

    /// The absolute path of a local file as the engine names it.
    func norm(_ local: String) -> String { (out.file(local) as NSString).standardizingPath }

    /// Every file under `out` except the history and lock, relative.
    func localFiles() -> [String] {
        (fm.subpaths(atPath: out.path) ?? []).filter { p in
            var isDir: ObjCBool = false
            _ = fm.fileExists(atPath: out.file(p), isDirectory: &isDir)
            return !isDir.boolValue && !p.hasPrefix(".ferry-sync")
        }.sorted()
    }

    // MARK: Tests

    @Test func firstImportThenOnlyWhatIsNewThenNothing() async throws {
        let card = try startCard()
        defer { card.stop() }
        let sync = try engine(card)
        let events = SyncEvents()
        let first = try await sync.runPass(events: events.handler)
        #expect(first.succeeded)
        #expect(first.listed == 4)  // .hidden is left out
        #expect(first.imported == 4 && first.alreadyImported == 0)
        #expect(first.bytes == 670_000 && first.bytesPerSecond > 0)
        #expect(first.sourceKey.hasPrefix("flashair-cid:"))
        #expect(
            localFiles() == [
                "100__TSB/IMG_0001.JPG", "100__TSB/IMG_0002.JPG", "100__TSB/IMG_0003.JPG", "101__TSB/MOV_0001.MOV",
            ])
        for i in 1...3 { #expect(same("100__TSB/IMG_000\(i).JPG", "DCIM/100__TSB/IMG_000\(i).JPG")) }
        // The local copy carries the camera's time.
        let mtime = try fm.attributesOfItem(atPath: out.file("100__TSB/IMG_0002.JPG"))[.modificationDate] as? Date
        #expect(mtime == SyncEngineTests.localDate((2019, 7, 6, 5, 4, 4)))
        #expect(events.imported.count == 4)

        try photo("DCIM/100__TSB/IMG_0004.JPG", size: 12_345, seed: 40, date: (2020, 1, 1, 0, 0, 0))
        let second = try await sync.runPass(events: events.handler)
        #expect(second.imported == 1 && second.alreadyImported == 4 && second.bytes == 12_345)
        #expect(second.items.map(\.remotePath) == ["/DCIM/100__TSB/IMG_0004.JPG"])
        #expect(same("100__TSB/IMG_0004.JPG", "DCIM/100__TSB/IMG_0004.JPG"))

        let third = try await sync.runPass()
        #expect(third.imported == 0 && third.bytes == 0 && third.alreadyImported == 5 && third.succeeded)
        let records = try #require(try SyncHistory.open(directory: out.path, create: false)).records()
        #expect(records.count == 5)
        #expect(Set(records.map(\.source)) == [first.sourceKey])
        #expect(records.allSatisfy { $0.origin == .downloaded })
    }

    @Test func aFileDeletedOrMovedLocallyIsNotFetchedAgain() async throws {
        let card = try startCard()
        defer { card.stop() }
        let sync = try engine(card)
        _ = try await sync.runPass()
        try fm.removeItem(atPath: out.file("100__TSB/IMG_0001.JPG"))
        try fm.moveItem(atPath: out.file("100__TSB/IMG_0002.JPG"), toPath: out.file("kept.jpg"))
        let again = try await sync.runPass()
        #expect(again.imported == 0 && again.alreadyImported == 4 && again.recorded == 0)
        #expect(!exists("100__TSB/IMG_0001.JPG") && !exists("100__TSB/IMG_0002.JPG"))
    }

    @Test func aChangedRemoteFileIsFetchedAgainUnderANameThatClobbersNothing() async throws {
        let card = try startCard()
        defer { card.stop() }
        let sync = try engine(card)
        _ = try await sync.runPass()
        let original = try Data(contentsOf: URL(fileURLWithPath: out.file("100__TSB/IMG_0001.JPG")))
        // One changes size; one keeps its size but gets new bytes and a new time.
        try photo("DCIM/100__TSB/IMG_0001.JPG", size: 150_000, seed: 11, date: (2019, 7, 6, 5, 4, 2))
        try photo("DCIM/100__TSB/IMG_0002.JPG", size: 200_000, seed: 12, date: (2021, 3, 3, 3, 3, 4))
        // A file whose local copy is gone comes back under its own name.
        try fm.removeItem(atPath: out.file("100__TSB/IMG_0002.JPG"))
        let second = try await sync.runPass()
        #expect(second.imported == 2 && second.changed == 2 && second.alreadyImported == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out.file("100__TSB/IMG_0001.JPG"))) == original)
        #expect(same("100__TSB/IMG_0001 (2).JPG", "DCIM/100__TSB/IMG_0001.JPG"))
        #expect(same("100__TSB/IMG_0002.JPG", "DCIM/100__TSB/IMG_0002.JPG"))

        try photo("DCIM/100__TSB/IMG_0001.JPG", size: 1_000, seed: 13, date: (2019, 7, 6, 5, 4, 2))
        let third = try await sync.runPass()
        #expect(third.imported == 1)
        #expect(same("100__TSB/IMG_0001 (3).JPG", "DCIM/100__TSB/IMG_0001.JPG"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: out.file("100__TSB/IMG_0001.JPG"))) == original)
        let records = try #require(try SyncHistory.open(directory: out.path, create: false)).records()
        #expect(records.filter { $0.path == "/DCIM/100__TSB/IMG_0001.JPG" }.count == 3)
    }

    /// Copies a card file into the output folder with the card's time, as `cp -p`
    /// or an earlier Ferry (which gives every download the source's time) leaves it.
    func copyWithTime(_ card: String, _ local: String) throws {
        try fm.copyItem(atPath: root.file(card), toPath: out.file(local))
        let time = try fm.attributesOfItem(atPath: root.file(card))[.modificationDate] as! Date
        try fm.setAttributes([.modificationDate: time], ofItemAtPath: out.file(local))
    }

    @Test func filesAlreadyInTheFolderWithTheSameSizeAndTimeAreRecordedNotFetched() async throws {
        try fm.createDirectory(atPath: out.file("100__TSB"), withIntermediateDirectories: true)
        try copyWithTime("DCIM/100__TSB/IMG_0001.JPG", "100__TSB/IMG_0001.JPG")
        try copyWithTime("DCIM/100__TSB/IMG_0002.JPG", "100__TSB/IMG_0002.JPG")
        // Same name, other size: a different file. It stays; the card's copy goes beside it.
        try TestData.file(out.file("100__TSB/IMG_0003.JPG"), size: 10, seed: 99)
        let card = try startCard()
        defer { card.stop() }
        let events = SyncEvents()
        let s = try await engine(card).runPass(events: events.handler)
        #expect(s.recorded == 2 && s.imported == 2)
        #expect(
            Set(s.items.filter { $0.action == .download }.map(\.destination)) == [
                norm("100__TSB/IMG_0003 (2).JPG"), norm("101__TSB/MOV_0001.MOV"),
            ])
        #expect(LocalFileSizes.of(out.file("100__TSB/IMG_0003.JPG")) == 10)
        #expect(same("100__TSB/IMG_0003 (2).JPG", "DCIM/100__TSB/IMG_0003.JPG"))
        let records = try #require(try SyncHistory.open(directory: out.path, create: false)).records()
        #expect(
            records.filter { $0.origin == .foundLocally }.map(\.localPath).sorted() == [
                "100__TSB/IMG_0001.JPG", "100__TSB/IMG_0002.JPG",
            ])
        let again = try await engine(card).runPass()
        #expect(again.imported == 0 && again.recorded == 0 && again.alreadyImported == 4)
    }

    @Test func onlyAndSinceFilters() async throws {
        try photo("DCIM/100__TSB/RAW_0001.CR2", size: 3_000, seed: 21, date: (2024, 5, 1, 12, 0, 0))
        try photo("DCIM/100__TSB/new.jpg", size: 2_000, seed: 22, date: (2024, 5, 2, 12, 0, 0))
        let card = try memoryCard()
        let byType = try await engine(card) { $0.extensions = SyncOptions.extensions(from: "JPG,cr2") }.runPass()
        #expect(byType.listed == 6 && byType.filtered == 1 && byType.imported == 5)
        #expect(!exists("101__TSB/MOV_0001.MOV") && exists("100__TSB/RAW_0001.CR2") && exists("100__TSB/new.jpg"))

        let other = try TempDir(prefix: "sync-since")
        let since = try await engine(card, into: other.path) {
            $0.since = SyncEngineTests.localDate((2024, 5, 1, 12, 0, 0))
        }.runPass()
        #expect(since.imported == 2 && since.filtered == 4)
        #expect(Set(since.items.map(\.remotePath)) == ["/DCIM/100__TSB/RAW_0001.CR2", "/DCIM/100__TSB/new.jpg"])
    }

    @Test func dryRunChangesNothing() async throws {
        let card = try memoryCard()
        let events = SyncEvents()
        let plan = try await engine(card) { $0.dryRun = true }.runPass(events: events.handler)
        #expect(plan.dryRun && plan.items.count == 4 && plan.imported == 0)
        #expect(events.all.filter { if case .planned = $0 { true } else { false } }.count == 4)
        #expect(try fm.contentsOfDirectory(atPath: out.path).isEmpty)  // no history, no lock, no files

        _ = try await engine(card).runPass()
        try fm.removeItem(atPath: out.file("100__TSB/IMG_0001.JPG"))
        try photo("DCIM/100__TSB/IMG_0002.JPG", size: 5, seed: 5, date: (2022, 1, 1, 0, 0, 0))
        try photo("DCIM/100__TSB/IMG_0009.JPG", size: 9, seed: 9, date: (2022, 1, 1, 0, 0, 0))
        try put("DCIM/100__TSB/IMG_0002.JPG", in: card)
        try put("DCIM/100__TSB/IMG_0009.JPG", in: card)
        let before = try snapshot()
        let dry = try await engine(card) {
            $0.dryRun = true
            $0.deleteAfter = true
        }.runPass()
        #expect(dry.alreadyImported == 3)
        #expect(Set(dry.items.map(\.action)) == [.download, .downloadChanged])
        #expect(dry.items.first { $0.action == .downloadChanged }?.destination == norm("100__TSB/IMG_0002 (2).JPG"))
        #expect(try snapshot() == before)
        #expect(card.contents("/DCIM/100__TSB/IMG_0003.JPG") != nil)
        #expect(card.calls["delete"] == nil)
    }

    /// Names, sizes, times and bytes of everything in `out`, history included.
    func snapshot() throws -> [String: String] {
        var s: [String: String] = [:]
        for p in fm.subpaths(atPath: out.path) ?? [] {
            let a = try fm.attributesOfItem(atPath: out.file(p))
            let data = (try? Data(contentsOf: URL(fileURLWithPath: out.file(p)))) ?? Data()
            s[p] = "\(a[.size] ?? 0) \(a[.modificationDate] ?? 0) \(data.hashValue)"
        }
        return s
    }

    @Test func dateLayoutFilesByDayWithoutClobbering() async throws {
        // Same name in two folders, same day.
        try photo("DCIM/101__TSB/IMG_0001.JPG", size: 4_444, seed: 44, date: (2019, 7, 6, 23, 0, 0))
        let card = try startCard()
        defer { card.stop() }
        let s = try await engine(card, "/") { $0.layout = .date }.runPass()
        #expect(s.imported == 5)
        #expect(
            localFiles() == [
                "2019-07-06/IMG_0001 (2).JPG", "2019-07-06/IMG_0001.JPG", "2019-07-06/IMG_0002.JPG",
                "2019-07-06/IMG_0003.JPG", "2019-07-07/MOV_0001.MOV",
            ])
        #expect(same("2019-07-06/IMG_0001.JPG", "DCIM/100__TSB/IMG_0001.JPG"))
        #expect(same("2019-07-06/IMG_0001 (2).JPG", "DCIM/101__TSB/IMG_0001.JPG"))
        #expect(try await engine(card, "/") { $0.layout = .date }.runPass().imported == 0)
    }

    @Test func dateLayoutWithoutRemoteDatesUsesTheDownloadedFilesTime() async throws {
        let fs = NoDatesFileSystem(inner: LocalFileSystem(url: try RemoteURL(parsing: root.file("DCIM"))))
        var o = SyncOptions()
        o.layout = .date
        let s = try await SyncEngine(fileSystem: fs, directory: out.path, options: o).runPass()
        #expect(s.imported == 4 && s.succeeded)
        // The listing has no dates, but each copy carries its source's time (as a
        // download carries Last-Modified), which decides the day.
        #expect(
            localFiles() == [
                "2019-07-06/IMG_0001.JPG", "2019-07-06/IMG_0002.JPG", "2019-07-06/IMG_0003.JPG",
                "2019-07-07/MOV_0001.MOV",
            ])
        #expect(!fm.fileExists(atPath: out.file(SyncEngine.stagingFolder)))
        #expect(
            fm.contentsEqual(
                atPath: out.file("2019-07-07/MOV_0001.MOV"), andPath: root.file("DCIM/101__TSB/MOV_0001.MOV")))
        #expect(try await SyncEngine(fileSystem: fs, directory: out.path, options: o).runPass().imported == 0)
    }

    @Test func deleteAfterRemovesOnlyVerifiedWritableFiles() async throws {
        chmod(root.file("DCIM/100__TSB/IMG_0003.JPG"), 0o444)
        let card = try startCard()
        defer { card.stop() }
        // An earlier import whose local copy is gone cannot be verified: it stays.
        try photo("DCIM/101__TSB/OLD.JPG", size: 800, seed: 80, date: (2018, 1, 1, 0, 0, 0))
        _ = try await engine(card) { $0.extensions = ["jpg"] }.runPass()
        try fm.removeItem(atPath: out.file("101__TSB/OLD.JPG"))

        let events = SyncEvents()
        let s = try await engine(card) { $0.deleteAfter = true }.runPass(events: events.handler)
        #expect(s.imported == 1 && s.succeeded)  // the .MOV
        #expect(
            Set(s.deleted) == [
                "/DCIM/100__TSB/IMG_0001.JPG", "/DCIM/100__TSB/IMG_0002.JPG", "/DCIM/101__TSB/MOV_0001.MOV",
            ])
        #expect(Set(events.deleted) == Set(s.deleted))
        #expect(Set(s.kept.map(\.remotePath)) == ["/DCIM/100__TSB/IMG_0003.JPG", "/DCIM/101__TSB/OLD.JPG"])
        #expect(s.kept.first { $0.remotePath.hasSuffix("IMG_0003.JPG") }?.reason.contains("read-only") == true)
        #expect(s.kept.first { $0.remotePath.hasSuffix("OLD.JPG") }?.reason.contains("missing") == true)
        #expect(!fm.fileExists(atPath: root.file("DCIM/100__TSB/IMG_0001.JPG")))
        #expect(fm.fileExists(atPath: root.file("DCIM/100__TSB/IMG_0003.JPG")))
        #expect(fm.fileExists(atPath: root.file("DCIM/101__TSB/OLD.JPG")))
        #expect(LocalFileSizes.of(out.file("100__TSB/IMG_0001.JPG")) == 100_000)
        let records = try #require(try SyncHistory.open(directory: out.path, create: false)).records()
        #expect(records.filter(\.deletedFromSource).count == 3)
    }

    @Test func deleteAfterNeverOnACardWithUploadsDisabled() async throws {
        let card = try startCard(["--no-upload"])
        defer { card.stop() }
        let s = try await engine(card) { $0.deleteAfter = true }.runPass()
        #expect(s.imported == 4 && s.deleted.isEmpty && s.kept.count == 4 && s.succeeded)
        #expect(s.kept.allSatisfy { $0.reason.contains("op=118") })
        #expect(fm.fileExists(atPath: root.file("DCIM/100__TSB/IMG_0001.JPG")))
    }

    @Test func deleteAfterFromALocalFolderLeavesReadOnlyFiles() async throws {
        chmod(root.file("DCIM/100__TSB/IMG_0002.JPG"), 0o444)
        var o = SyncOptions()
        o.deleteAfter = true
        let fs = LocalFileSystem(url: try RemoteURL(parsing: root.file("DCIM")))
        let s = try await SyncEngine(fileSystem: fs, directory: out.path, options: o).runPass()
        #expect(s.sourceKey == "file://" + root.file("DCIM"))
        #expect(
            s.imported == 4 && s.deleted.count == 3
                && s.kept.map(\.remotePath) == [root.file("DCIM/100__TSB/IMG_0002.JPG")])
        #expect(fm.fileExists(atPath: root.file("DCIM/100__TSB/IMG_0002.JPG")))
        #expect(!fm.fileExists(atPath: root.file("DCIM/100__TSB/IMG_0001.JPG")))
    }

    @Test func aFolderSyncedIntoItselfDoesNotImportItsImports() async throws {
        let fs = LocalFileSystem(url: try RemoteURL(parsing: root.path))
        let inside = root.file("imported")
        let first = try await SyncEngine(fileSystem: fs, directory: inside).runPass()
        #expect(first.imported == 4)
        let second = try await SyncEngine(fileSystem: fs, directory: inside).runPass()
        #expect(second.listed == 4 && second.imported == 0)
    }

    @Test func watchingAFolderThatDoesNotExistFailsAtOnce() async throws {
        let card = try startCard()
        defer { card.stop() }
        await #expect(throws: FerryError.self) {
            _ = try await engine(card, "/NOPE") { $0.interval = .milliseconds(100) }.watch()
        }
    }

    @Test func theHistoryKnowsCardsByTheirCID() async throws {
        let a = try startCard(["--cid", String(repeating: "a", count: 32)])
        let first = try await engine(a).runPass()
        a.stop()
        #expect(first.sourceKey == "flashair-cid:" + String(repeating: "a", count: 32))
        // Another card with the same photos at the same address: new to the history,
        // but the files are here already with the same size: recorded, not fetched.
        let b = try startCard(["--cid", String(repeating: "b", count: 32)])
        defer { b.stop() }
        let second = try await engine(b).runPass()
        #expect(second.sourceKey != first.sourceKey)
        #expect(second.imported == 0 && second.recorded == 4)
        // The same card at another port is the same card.
        let c = try startCard(["--cid", String(repeating: "a", count: 32)])
        defer { c.stop() }
        let third = try await engine(c).runPass()
        #expect(third.sourceKey == first.sourceKey && third.alreadyImported == 4 && third.recorded == 0)
    }

    @Test func anInterruptedPassKeepsItsPartialFileAndTheNextResumesIt() async throws {
        let big = try photo("DCIM/100__TSB/BIG.RAW", size: 2_000_000, seed: 50, date: (2020, 1, 1, 0, 0, 0))
        let card = try startCard(["--rate", "500000"])
        defer { card.stop() }
        let sync = try engine(card) { $0.extensions = ["raw"] }
        let pass = Task { try await sync.runPass() }
        let part = out.file("100__TSB/BIG.RAW.part")
        let deadline = Date().addingTimeInterval(20)
        while (LocalFileSizes.of(part) ?? 0) < 600_000 && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        pass.cancel()
        let interrupted = try await pass.value
        #expect(interrupted.interrupted && !interrupted.succeeded && interrupted.imported == 0)
        let kept = LocalFileSizes.of(part) ?? 0
        #expect(kept >= 600_000 && kept < 2_000_000)
        #expect(!exists("100__TSB/BIG.RAW"))

        let events = SyncEvents()
        let resumed = try await sync.runPass(events: events.handler)
        #expect(resumed.succeeded && resumed.imported == 1)
        let result = try #require(events.imported.first?.1)
        #expect(result.resumedFrom >= 600_000)
        #expect(result.bytesTransferred == 2_000_000 - result.resumedFrom)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out.file("100__TSB/BIG.RAW"))) == big)
        #expect(!fm.fileExists(atPath: part))
    }

    @Test func watchingAFolderPicksUpAFileOnceItStopsChanging() async throws {
        let fs = LocalFileSystem(url: try RemoteURL(parsing: root.file("DCIM")))
        var o = SyncOptions()
        o.interval = .milliseconds(200)
        let events = SyncEvents()
        let engine = SyncEngine(fileSystem: fs, directory: out.path, options: o)
        let watch = Task { try await engine.watch(events: events.handler) }
        defer { watch.cancel() }
        let deadline = Date().addingTimeInterval(10)
        while events.imported.count < 4 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(events.imported.count == 4)
        let added = Date()
        try photo("DCIM/101__TSB/NEW.JPG", size: 30_000, seed: 60, date: (2023, 1, 1, 0, 0, 0))
        while events.imported.count < 5 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(Date().timeIntervalSince(added) < 5)
        #expect(fm.contentsEqual(atPath: out.file("101__TSB/NEW.JPG"), andPath: root.file("DCIM/101__TSB/NEW.JPG")))
        // Seen once, then again unchanged: one pass deferred it.
        let summaries = events.all.compactMap { if case .passFinished(let s) = $0 { s } else { nil } }
        #expect(summaries.contains { $0.deferred == 1 })
        watch.cancel()
        let last = try await watch.value
        #expect(last?.succeeded == true)
    }
}

/// A local folder that reports no modification times, like a card with broken dates.
struct NoDatesFileSystem: RemoteFileSystem {
    let inner: LocalFileSystem
    var url: RemoteURL { inner.url }

    func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        try await inner.list(path).map { e in
            var e = e
            e.modified = nil
            return e
        }
    }

    func stat(_ path: String) async throws(FerryError) -> RemoteEntry { try await inner.stat(path) }

    func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
        inner.download(path, to: destination, options: options)
    }
}

enum LocalFileSizes {
    static func of(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }
}
