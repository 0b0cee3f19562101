import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// `--layout date` by the day a photo was taken (issue 26 item 4) and "imported
/// once" through a clock change (item 7), with photos as cameras write them
/// (exiftool's tags on a real JPEG) copied to a folder whose times are the day of
/// the copy, as a NAS or an FTP server has them.
@Suite(.serialized)
struct SyncDateTakenTests {
    let root: TempDir
    let out: TempDir
    let fm = FileManager.default

    init() throws {
        root = try TempDir(prefix: "taken-src")
        out = try TempDir(prefix: "taken-out")
        try fm.createDirectory(atPath: root.file("DCIM/100CANON"), withIntermediateDirectories: true)
    }

    /// A camera JPEG taken at `taken` (Exif), with the file's time set to `copied`.
    func cameraJPEG(_ name: String, taken: String, copied: (Int, Int, Int, Int, Int, Int)) throws {
        let bytes = try CaptureDateTests.exiftool(
            SampleJPEG.withThumbnail(width: 640, height: 480, orientation: 1), name, in: root,
            ["-DateTimeOriginal=\(taken)", "-SubSecTimeOriginal=25"])
        try Data(bytes).write(to: URL(fileURLWithPath: root.file("DCIM/100CANON/" + name)))
        try fm.setAttributes(
            [.modificationDate: SyncEngineTests.localDate(copied)], ofItemAtPath: root.file("DCIM/100CANON/" + name))
    }

    func files() -> [String] { filesBelow(out) }

    func engine() throws -> SyncEngine {
        var o = SyncOptions()
        o.layout = .date
        return SyncEngine(
            fileSystem: LocalFileSystem(url: try RemoteURL(parsing: root.file("DCIM"))), directory: out.path,
            options: o)
    }

    /// Many small photos filed by date at once: every download stages in a folder
    /// of its own under one staging root, which a finished photo used to remove
    /// while a download beside it had made it and not yet its own folder in it
    /// (2-3 of 500 photos failed "mkdir ... The file doesn't exist", found by
    /// bench/photo_bench.py).
    @Test func manySmallPhotosFiledByDateAtOnceAllArrive() async throws {
        try cameraJPEG("SEED.JPG", taken: "2024:06:01 12:00:00", copied: (2026, 11, 30, 9, 0, 0))
        let seed = try Data(contentsOf: URL(fileURLWithPath: root.file("DCIM/100CANON/SEED.JPG")))
        try fm.removeItem(atPath: root.file("DCIM/100CANON/SEED.JPG"))
        for i in 0..<400 {
            try seed.write(to: URL(fileURLWithPath: root.file(String(format: "DCIM/100CANON/IMG_%04d.JPG", i))))
        }
        var o = SyncOptions()
        o.layout = .date
        o.jobs = 8
        let summary = try await SyncEngine(
            fileSystem: LocalFileSystem(url: try RemoteURL(parsing: root.file("DCIM"))), directory: out.path,
            options: o
        ).runPass()
        #expect(summary.failures.isEmpty, "\(summary.failures.prefix(3).map { "\($0.remotePath): \($0.error)" })")
        #expect(summary.imported == 400)
        #expect(files().filter { $0.hasPrefix("2024-06-01/") }.count == 400, "\(files().prefix(5))")
        // The staging root is gone once the pass is over.
        #expect(!fm.fileExists(atPath: out.file(SyncEngine.stagingFolder)))
    }

    /// A photo waits for its date in one flat file of the staging folder,
    /// `HASH-NAME`, with no folder of its own to make and remove per photo; a
    /// name too long for that keeps `HASH/NAME`. Either way the name shown is
    /// the photo's own, and the same key gives the same place (a rerun resumes).
    @Test func stagingPathsAreFlatAndStable() {
        let a = SyncNaming.stagingPath(in: "/out", key: "card\n/DCIM/IMG_0001.JPG\n100", name: "IMG_0001.JPG")
        let again = SyncNaming.stagingPath(in: "/out", key: "card\n/DCIM/IMG_0001.JPG\n100", name: "IMG_0001.JPG")
        let other = SyncNaming.stagingPath(in: "/out", key: "card\n/DCIM/IMG_0001.JPG\n101", name: "IMG_0001.JPG")
        #expect(a == again && a != other)
        #expect(LocalPath.parent(a) == "/out/" + SyncEngine.stagingFolder)
        #expect(LocalPath.lastComponent(a).hasSuffix("-IMG_0001.JPG"))
        #expect(SyncNaming.stagedName(a) == "IMG_0001.JPG")
        // A name of its own that looks like a hash and a dash stays whole when
        // it is not in that form (no 16 hex digits before the dash).
        #expect(SyncNaming.stagedName("/out/x/2024-06-01-trip.jpg") == "2024-06-01-trip.jpg")
        let long = String(repeating: "n", count: 240) + ".JPG"
        let l = SyncNaming.stagingPath(in: "/out", key: "k", name: long)
        #expect(LocalPath.lastComponent(l) == long)
        #expect(LocalPath.lastComponent(LocalPath.parent(LocalPath.parent(l))) == SyncEngine.stagingFolder)
        #expect(SyncNaming.stagedName(l) == long)
    }

    /// Placing a staged photo removes only a folder it had to itself, never the
    /// staging root: other downloads of the pass write there, and their unnamed
    /// files (`O_TMPFILE`) leave it looking empty until their final link (a
    /// photo group's placing removed it, and the photo beside it failed with
    /// "link .../HASH-IMG_0002.JPG: No such file or directory" about one pass in three).
    @Test func placingAStagedPhotoKeepsTheStagingRoot() throws {
        let out = try TempDir(prefix: "staging-root")
        let flat = SyncNaming.stagingPath(in: out.path, key: "k", name: "IMG_0001.JPG")
        let long = SyncNaming.stagingPath(in: out.path, key: "k", name: String(repeating: "n", count: 240) + ".JPG")
        let fm = FileManager.default
        try fm.createDirectory(atPath: LocalPath.parent(long), withIntermediateDirectories: true)
        let root = out.file(SyncEngine.stagingFolder)
        SyncEngine.dropStagingFolder(of: flat)
        #expect(fm.fileExists(atPath: root), "the staging root stays while the pass runs")
        SyncEngine.dropStagingFolder(of: long)
        #expect(!fm.fileExists(atPath: LocalPath.parent(long)), "a long name's own folder goes")
        #expect(fm.fileExists(atPath: root))
    }

    /// A photo with a short name (flat staging file) and one whose name is too
    /// long for that (a staging folder of its own) both land in their day, and
    /// the staging folder is gone afterwards.
    @Test func shortAndLongNamesBothLandInTheirDay() async throws {
        try cameraJPEG("IMG_0001.JPG", taken: "2024:06:01 10:00:00", copied: (2026, 11, 30, 9, 0, 0))
        let long = String(repeating: "L", count: 236) + ".JPG"
        try cameraJPEG(long, taken: "2024:06:02 10:00:00", copied: (2026, 11, 30, 9, 0, 0))
        let first = try await engine().runPass()
        #expect(first.failures.isEmpty && first.imported == 2)
        #expect(files().contains("2024-06-01/IMG_0001.JPG"), "\(files())")
        #expect(files().contains("2024-06-02/" + long), "\(files())")
        #expect(!fm.fileExists(atPath: out.file(SyncEngine.stagingFolder)))
    }

    @Test func photosGoToTheDayTheyWereTakenNotTheDayTheyWereCopied() async throws {
        try cameraJPEG("IMG_0001.JPG", taken: "2024:06:01 23:45:12", copied: (2026, 11, 30, 9, 0, 0))
        try cameraJPEG("IMG_0002.JPG", taken: "2024:06:02 00:10:00", copied: (2026, 11, 30, 9, 0, 1))
        // A video (no Exif Ferry reads) and a JPEG without a date: by their time.
        try TestData.file(root.file("DCIM/100CANON/MVI_0003.MOV"), size: 30_000, seed: 3)
        try fm.setAttributes(
            [.modificationDate: SyncEngineTests.localDate((2024, 6, 3, 12, 0, 0))],
            ofItemAtPath: root.file("DCIM/100CANON/MVI_0003.MOV"))
        try Data(SampleJPEG.withThumbnail(width: 320, height: 240, orientation: 1)).write(
            to: URL(fileURLWithPath: root.file("DCIM/100CANON/NODATE.JPG")))
        try fm.setAttributes(
            [.modificationDate: SyncEngineTests.localDate((2025, 1, 1, 8, 0, 0))],
            ofItemAtPath: root.file("DCIM/100CANON/NODATE.JPG"))
        // A dry run says where each would go, read from the photos' first bytes.
        var dry = SyncOptions()
        dry.layout = .date
        dry.dryRun = true
        let plan = try await SyncEngine(
            fileSystem: LocalFileSystem(url: try RemoteURL(parsing: root.file("DCIM"))), directory: out.path,
            options: dry
        ).runPass()
        #expect(
            Set(plan.items.map { $0.destination.split(separator: "/").suffix(2).joined(separator: "/") }) == [
                "2024-06-01/IMG_0001.JPG", "2024-06-02/IMG_0002.JPG", "2024-06-03/MVI_0003.MOV",
                "2025-01-01/NODATE.JPG",
            ], "\(plan.items.map(\.destination))")
        #expect(files().isEmpty)
        let first = try await engine().runPass()
        #expect(first.imported == 4 && first.succeeded, "\(first)")
        #expect(
            files() == [
                "2024-06-01/IMG_0001.JPG", "2024-06-02/IMG_0002.JPG", "2024-06-03/MVI_0003.MOV",
                "2025-01-01/NODATE.JPG",
            ])
        #expect(!fm.fileExists(atPath: out.file(SyncEngine.stagingFolder)))
        #expect(
            fm.contentsEqual(
                atPath: out.file("2024-06-01/IMG_0001.JPG"), andPath: root.file("DCIM/100CANON/IMG_0001.JPG")))
        let again = try await engine().runPass()
        #expect(again.imported == 0 && again.alreadyImported == 4)

        // Every record lost: the photos come once more (their day is in their
        // bytes), are found identical by their SHA-256 where they belong, and
        // leave no second copy.
        let db = try SQLiteDatabase(path: out.file(SyncHistory.fileName), create: false)
        try db.execute("DELETE FROM imports")
        let recovered = try await engine().runPass()
        #expect(recovered.failures.isEmpty, "\(recovered)")
        #expect(
            files() == [
                "2024-06-01/IMG_0001.JPG", "2024-06-02/IMG_0002.JPG", "2024-06-03/MVI_0003.MOV",
                "2025-01-01/NODATE.JPG",
            ])
        let records = try #require(try SyncHistory.open(directory: out.path, create: false)).records()
        #expect(records.count == 4)
        #expect(records.filter { $0.path.hasSuffix("IMG_0001.JPG") }.first?.localPath == "2024-06-01/IMG_0001.JPG")
        #expect(try await engine().runPass().imported == 0)
    }

    /// After a time-zone or daylight-saving change the card's FAT times of the same
    /// files are an hour off: still imported, never deleted on that match; a time
    /// off by anything else is another version.
    @Test func aCardTimeOffByWholeQuarterHoursIsTheSameFile() async throws {
        let card = try TempDir(prefix: "taken-card")
        try fm.createDirectory(atPath: card.file("DCIM/100__TSB"), withIntermediateDirectories: true)
        func photo(_ name: String, _ seed: UInt64, _ date: (Int, Int, Int, Int, Int, Int)) throws {
            try TestData.file(card.file("DCIM/100__TSB/" + name), size: 40_000, seed: seed)
            try fm.setAttributes(
                [.modificationDate: SyncEngineTests.localDate(date)], ofItemAtPath: card.file("DCIM/100__TSB/" + name))
        }
        try photo("IMG_0001.JPG", 1, (2026, 10, 24, 10, 0, 0))
        try photo("IMG_0002.JPG", 2, (2026, 10, 24, 10, 0, 2))
        let process = try FerryCardProcess(folder: card.path)
        defer { process.stop() }
        func sync(deleteAfter: Bool = false) async throws -> SyncPassSummary {
            let fs = FlashAirFileSystem(url: try RemoteURL(parsing: process.url("/DCIM")))
            var o = SyncOptions()
            o.deleteAfter = deleteAfter
            return try await SyncEngine(fileSystem: fs, directory: out.path, options: o).runPass()
        }
        #expect(try await sync().imported == 2)
        // Clocks went back an hour for one file, 7 minutes for the other.
        try fm.setAttributes(
            [.modificationDate: SyncEngineTests.localDate((2026, 10, 24, 9, 0, 0))],
            ofItemAtPath: card.file("DCIM/100__TSB/IMG_0001.JPG"))
        try fm.setAttributes(
            [.modificationDate: SyncEngineTests.localDate((2026, 10, 24, 9, 53, 2))],
            ofItemAtPath: card.file("DCIM/100__TSB/IMG_0002.JPG"))
        let s = try await sync(deleteAfter: true)
        #expect(s.alreadyImported == 1 && s.imported == 1 && s.changed == 1, "\(s)")
        #expect(files().contains("100__TSB/IMG_0002 (2).JPG"))
        #expect(!files().contains("100__TSB/IMG_0001 (2).JPG"))
        // The shifted match stays on the card; the really new version was fetched
        // and verified, so it may go.
        #expect(s.kept.map(\.remotePath) == ["/DCIM/100__TSB/IMG_0001.JPG"], "\(s.kept)")
        #expect(s.kept.first?.reason.contains("shifted") == true)
        #expect(fm.fileExists(atPath: card.file("DCIM/100__TSB/IMG_0001.JPG")))
        #expect(s.deleted == ["/DCIM/100__TSB/IMG_0002.JPG"])
    }

    @Test func theShiftRule() {
        func t(_ h: Int, _ m: Int, _ s: Int = 0, zone: RemoteTimestamp.Zone = .floating) -> RemoteTimestamp {
            RemoteTimestamp(year: 2026, month: 3, day: 29, hour: h, minute: m, second: s, zone: zone)!
        }
        let recorded = t(2, 30).iso8601
        func shifted(_ e: RemoteTimestamp, size: Int64 = 10) -> Bool {
            SyncHistory.matchesShifted(size: 10, mtime: recorded, entrySize: size, entryModified: e)
        }
        #expect(shifted(t(3, 30)) && shifted(t(1, 30)) && shifted(t(3, 0)) && shifted(t(2, 45)))
        #expect(!shifted(t(2, 30)), "the same time is an exact match, not a shift")
        #expect(!shifted(t(2, 37)) && !shifted(t(3, 30, 2)))
        #expect(!shifted(t(3, 30), size: 11))
        #expect(!shifted(t(3, 30, zone: .utc)), "a server's UTC time does not move with the clocks")
        let dayLater = RemoteTimestamp(year: 2026, month: 3, day: 30, hour: 2, minute: 30, zone: .floating)!
        let overADay = RemoteTimestamp(year: 2026, month: 3, day: 30, hour: 2, minute: 45, zone: .floating)!
        #expect(shifted(dayLater) && !shifted(overADay))
    }
}

/// Raw + JPEG pairs and sidecars travel together (issue 26 item 6).
@Suite(.serialized)
struct PhotoGroupTests {
    let root: TempDir
    let out: TempDir
    let fm = FileManager.default

    init() throws {
        root = try TempDir(prefix: "groups-src")
        out = try TempDir(prefix: "groups-out")
        try fm.createDirectory(atPath: root.file("DCIM/100CANON"), withIntermediateDirectories: true)
    }

    @Test func groupsByFolderAndStem() {
        let g = PhotoGroups.groups([
            "/D/IMG_0001.CR2", "/D/IMG_0001.JPG", "/D/img_0001.xmp", "/D/IMG_0002.JPG", "/E/IMG_0001.JPG",
            "/D/IMG_0003.CR3", "/D/IMG_0003.CR3.xmp", "/D/MVI_0004.MOV", "/D/MVI_0004.THM",
        ])
        #expect(g.count == 3)
        #expect(g[PhotoGroups.key("/D/IMG_0001.JPG")] == ["/D/IMG_0001.CR2", "/D/IMG_0001.JPG", "/D/img_0001.xmp"])
        #expect(g[PhotoGroups.key("/D/IMG_0003.CR3")] == ["/D/IMG_0003.CR3", "/D/IMG_0003.CR3.xmp"])
        #expect(g[PhotoGroups.key("/D/MVI_0004.MOV")] == ["/D/MVI_0004.MOV", "/D/MVI_0004.THM"])
        #expect(PhotoGroups.key("/E/IMG_0001.JPG") != PhotoGroups.key("/D/IMG_0001.JPG"))
        #expect(PhotoGroups.numbered("/o/IMG_0003.CR3.xmp", 2) == "/o/IMG_0003 (2).CR3.xmp")
        #expect(PhotoGroups.numbered("/o/IMG_0003.xmp", 2) == "/o/IMG_0003 (2).xmp")
        #expect(PhotoGroups.numbered("/o/IMG_0003.CR2", 1) == "/o/IMG_0003.CR2")
    }

    func file(_ name: String, size: Int, seed: UInt64, _ date: (Int, Int, Int, Int, Int, Int)) throws {
        try TestData.file(root.file("DCIM/100CANON/" + name), size: size, seed: seed)
        try fm.setAttributes(
            [.modificationDate: SyncEngineTests.localDate(date)], ofItemAtPath: root.file("DCIM/100CANON/" + name))
    }

    func files() -> [String] { filesBelow(out) }

    func engine(_ configure: (inout SyncOptions) -> Void = { _ in }) throws -> SyncEngine {
        var o = SyncOptions()
        configure(&o)
        return SyncEngine(
            fileSystem: LocalFileSystem(url: try RemoteURL(parsing: root.file("DCIM"))), directory: out.path,
            options: o)
    }

    /// A new RAW+JPEG pair whose raw collides with an older local file: the whole
    /// group takes the same number.
    @Test func aPairAndItsSidecarShareOneNumber() async throws {
        try file("IMG_0001.CR2", size: 300_000, seed: 1, (2026, 11, 30, 10, 0, 0))
        try file("IMG_0001.JPG", size: 90_000, seed: 2, (2026, 11, 30, 10, 0, 0))
        try file("IMG_0001.XMP", size: 2_000, seed: 3, (2026, 11, 30, 10, 5, 0))
        try fm.createDirectory(atPath: out.file("100CANON"), withIntermediateDirectories: true)
        try TestData.file(out.file("100CANON/IMG_0001.CR2"), size: 300_000, seed: 9)
        let s = try await engine().runPass()
        #expect(s.imported == 3 && s.succeeded, "\(s)")
        #expect(
            files() == [
                "100CANON/IMG_0001 (2).CR2", "100CANON/IMG_0001 (2).JPG", "100CANON/IMG_0001 (2).XMP",
                "100CANON/IMG_0001.CR2",
            ])
        #expect(try await engine().runPass().imported == 0)
    }

    /// Date layout: the sidecar (edited later, its own time) goes to the day its
    /// photo was taken.
    @Test func aSidecarFollowsItsPhotosDayTaken() async throws {
        let jpeg = try CaptureDateTests.exiftool(
            SampleJPEG.withThumbnail(width: 640, height: 480, orientation: 1), "IMG_0007.JPG", in: root,
            ["-DateTimeOriginal=2024:06:01 12:00:00"])
        try Data(jpeg).write(to: URL(fileURLWithPath: root.file("DCIM/100CANON/IMG_0007.JPG")))
        try file("IMG_0007.XMP", size: 1_500, seed: 7, (2026, 11, 30, 20, 0, 0))
        try file("IMG_0008.XMP", size: 1_500, seed: 8, (2026, 11, 30, 20, 0, 0))
        let s = try await engine { $0.layout = .date }.runPass()
        #expect(s.imported == 3 && s.succeeded, "\(s)")
        #expect(files() == ["2024-06-01/IMG_0007.JPG", "2024-06-01/IMG_0007.XMP", "2026-11-30/IMG_0008.XMP"])
        #expect(!fm.fileExists(atPath: out.file(SyncEngine.stagingFolder)))
        #expect(try await engine { $0.layout = .date }.runPass().imported == 0)
    }

    /// delete-after takes a group from the source only when every member is verified.
    @Test func deleteAfterTakesAGroupOnlyWhole() async throws {
        try file("IMG_0001.CR2", size: 300_000, seed: 1, (2026, 11, 30, 10, 0, 0))
        try file("IMG_0001.JPG", size: 90_000, seed: 2, (2026, 11, 30, 10, 0, 0))
        try file("IMG_0002.CR2", size: 300_000, seed: 3, (2026, 11, 30, 10, 1, 0))
        try file("IMG_0002.JPG", size: 90_000, seed: 4, (2026, 11, 30, 10, 1, 0))
        chmod(root.file("DCIM/100CANON/IMG_0002.JPG"), 0o444)
        let s = try await engine { $0.deleteAfter = true }.runPass()
        #expect(s.imported == 4)
        #expect(Set(s.deleted) == [root.file("DCIM/100CANON/IMG_0001.CR2"), root.file("DCIM/100CANON/IMG_0001.JPG")])
        #expect(fm.fileExists(atPath: root.file("DCIM/100CANON/IMG_0002.CR2")))
        #expect(
            s.kept.first { $0.remotePath.hasSuffix("IMG_0002.CR2") }?.reason.contains("IMG_0002.JPG") == true,
            "\(s.kept)")
    }
}

/// Names and folders from templates (issue 26 item 5).
@Suite(.serialized)
struct NameTemplateTests {
    let root: TempDir
    let out: TempDir
    let fm = FileManager.default

    init() throws {
        root = try TempDir(prefix: "tpl-src")
        out = try TempDir(prefix: "tpl-out")
        try fm.createDirectory(atPath: root.file("DCIM/100CANON"), withIntermediateDirectories: true)
    }

    @Test func rendersTokens() throws {
        let t = try #require(
            RemoteTimestamp(year: 2024, month: 6, day: 1, hour: 23, minute: 45, second: 12, zone: .floating))
        let context = NameTemplate.Context(
            taken: t, name: "IMG_0001.CR2", folder: "100CANON", camera: CameraFacts(make: "Canon", model: "EOS R6"),
            sequence: 7, daySequence: 2, tag: "wedding")
        func render(_ s: String) throws -> String { try NameTemplate(s).render(context) }
        #expect(try render("{taken:%Y}/{taken:%Y-%m-%d}") == "2024/2024-06-01")
        #expect(try render("{taken:%Y%m%d-%H%M%S}_{name}") == "20240601-234512_IMG_0001.CR2")
        #expect(try render("{tag}-{seq:4}-{dayseq:3}.{ext}") == "wedding-0007-002.CR2")
        #expect(try render("{make} {model}/{folder}/{stem}") == "Canon EOS R6/100CANON/IMG_0001")
        #expect(try render("{taken:%a %b %j}") == "Sat Jun 153")
        #expect(try NameTemplate("{taken}").readsThePhoto && !NameTemplate("{tag}_{name}").readsThePhoto)
        // A value never makes a folder of its own.
        let slashed = NameTemplate.Context(
            taken: t, name: "a.jpg", folder: "x", camera: CameraFacts(make: "A/B"), tag: "../up")
        #expect(try NameTemplate("{make}_{tag}").render(slashed) == "A_B_.._up")
        #expect(
            !NameTemplate.isSafeFolder("../x") && !NameTemplate.isSafeFolder("/x") && !NameTemplate.isSafeFolder("a//b")
        )
        #expect(NameTemplate.isSafeFolder("2024/06"))
        for bad in ["{nope}", "{taken", "}", "{seq:x}"] {
            #expect(throws: FerryError.self) { try NameTemplate(bad) }
        }
        do {
            _ = try NameTemplate("{nope}")
        } catch {
            #expect(error.code == .invalidTemplate && error.detail?.contains("{taken:FORMAT}") == true)
        }
    }

    func cameraJPEG(_ name: String, taken: String, seed: UInt8) throws {
        var bytes = try CaptureDateTests.exiftool(
            SampleJPEG.withThumbnail(width: 640, height: 480, orientation: 1), name, in: root,
            ["-DateTimeOriginal=\(taken)", "-Make=Canon", "-Model=Canon EOS R6"])
        bytes.append(seed)  // distinct bytes per photo
        try Data(bytes).write(to: URL(fileURLWithPath: root.file("DCIM/100CANON/" + name)))
    }

    func files() -> [String] { filesBelow(out) }

    func engine(folder: String, name: String?) throws -> SyncEngine {
        var o = SyncOptions()
        o.folderTemplate = try NameTemplate(folder)
        o.nameTemplate = try name.map { try NameTemplate($0) }
        o.tag = "trip"
        return SyncEngine(
            fileSystem: LocalFileSystem(url: try RemoteURL(parsing: root.file("DCIM"))), directory: out.path,
            options: o)
    }

    @Test func syncFilesByTemplatesAndImportsOnce() async throws {
        try cameraJPEG("IMG_0001.JPG", taken: "2024:06:01 23:45:12", seed: 1)
        try cameraJPEG("IMG_0002.JPG", taken: "2024:06:01 23:45:12", seed: 2)  // the same second
        try TestData.file(root.file("DCIM/100CANON/IMG_0001.XMP"), size: 800, seed: 3)
        let sync = try engine(
            folder: "{taken:%Y}/{taken:%Y-%m-%d} {tag}", name: "{taken:%Y%m%d-%H%M%S}_{model}_{name}")
        // The dry run shows the names the templates make.
        var dry = sync.options
        dry.dryRun = true
        let plan = try await SyncEngine(
            fileSystem: LocalFileSystem(url: try RemoteURL(parsing: root.file("DCIM"))), directory: out.path,
            options: dry
        ).runPass()
        #expect(
            plan.items.contains {
                $0.destination.hasSuffix("2024/2024-06-01 trip/20240601-234512_Canon EOS R6_IMG_0001.JPG")
            }, "\(plan.items.map(\.destination))")
        let s = try await sync.runPass()
        #expect(s.imported == 3 && s.succeeded, "\(s)")
        #expect(
            files()
                == [
                    "2024/2024-06-01 trip/20240601-234512_Canon EOS R6_IMG_0001.JPG",
                    "2024/2024-06-01 trip/20240601-234512_Canon EOS R6_IMG_0002.JPG",
                    // The sidecar follows its photo: its day, its camera.
                    "2024/2024-06-01 trip/20240601-234512_Canon EOS R6_IMG_0001.XMP",
                ].sorted(), "\(files())")
        #expect(try await sync.runPass().imported == 0)
        // Another template next time imports nothing again: the history knows them.
        let other = try engine(folder: "{taken:%Y-%m}", name: nil)
        let again = try await other.runPass()
        #expect(again.imported == 0 && again.alreadyImported == 3, "\(again)")
    }

    @Test func namesThatWouldCollideAreNumbered() async throws {
        try cameraJPEG("IMG_0001.JPG", taken: "2024:06:01 10:00:00", seed: 1)
        try fm.createDirectory(atPath: root.file("DCIM/101CANON"), withIntermediateDirectories: true)
        var other = try CaptureDateTests.exiftool(
            SampleJPEG.withThumbnail(width: 640, height: 480, orientation: 1), "IMG_0001.JPG", in: root,
            ["-DateTimeOriginal=2024:06:01 10:00:00"])
        other.append(9)
        try Data(other).write(to: URL(fileURLWithPath: root.file("DCIM/101CANON/IMG_0001.JPG")))
        let s = try await engine(folder: "{taken:%Y-%m-%d}", name: "{taken:%H%M%S}.{ext}").runPass()
        #expect(s.imported == 2)
        #expect(files() == ["2024-06-01/100000 (2).JPG", "2024-06-01/100000.JPG"])
    }
}
