import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A full disk in the middle of work, on a 1 MiB tmpfs: `ferry sync` from a card
/// into it, and `ferry put` to a card whose folder (or whose upload spool) is on
/// it. A clear error, nothing wrong under a final name, nothing half-written left
/// on the card, and the work completes once there is room.
@Suite(.serialized)
struct FullDiskTests {
    /// A 1 MiB tmpfs, unmounted when released.
    final class SmallDisk: Sendable {
        let dir: TempDir
        var path: String { dir.path }

        init() throws {
            dir = try TempDir(prefix: "small-disk")
            let m = try TestProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir.path])
            try #require(m.status == 0, "mounting a tmpfs is not permitted here: \(m.stderr)")
        }

        deinit {
            // A process still using the disk (a card serving from it) makes a plain
            // umount fail and leaves the tmpfs mounted: detach it lazily then.
            if (try? TestProcess.run("/bin/umount", [dir.path]))?.status != 0 {
                _ = try? TestProcess.run("/bin/umount", ["-l", dir.path])
            }
        }
    }

    static func ferry(_ arguments: [String], cwd: String) throws -> TestProcess.Output {
        try TestProcess.run(TestProcess.ferryExecutable(), arguments, cwd: cwd)
    }

    @Test func syncIntoAFullDisk() async throws {
        try await onThread {
            let card = try TempDir(prefix: "full-sync-card")
            let folder = card.file("DCIM/100__TSB")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            var expected: [String: Data] = [:]
            for i in 0..<6 {
                let name = "IMG_\(1000 + i).JPG"
                expected[name] = try TestData.file(folder + "/" + name, size: 200_000, seed: UInt64(i))
            }
            let process = try FerryCardProcess(folder: card.path)
            let disk = try SmallDisk()
            let out = disk.path + "/photos"
            let first = try Self.ferry(["sync", process.url("/"), out, "--quiet"], cwd: card.path)
            #expect(first.status == 1, "a full disk is a failure: \(first.status) \(first.stderr)")
            #expect(
                first.stderr.lowercased().contains("no space") || first.stderr.lowercased().contains("full"),
                "\(first.stderr)")
            // Whatever has its final name is whole.
            let imported = try FileManager.default.subpathsOfDirectory(atPath: out).filter { $0.hasSuffix(".JPG") }
            #expect(!imported.isEmpty && imported.count < 6, "\(imported)")
            for path in imported {
                let name = (path as NSString).lastPathComponent
                #expect(
                    FileManager.default.contents(atPath: out + "/" + path) == expected[name], "\(path) is not whole")
            }
            // Room again (the imported files moved away): the next sync finishes the rest.
            let kept = try TempDir(prefix: "full-sync-kept")
            for path in imported {
                try FileManager.default.moveItem(
                    atPath: out + "/" + path, toPath: kept.file((path as NSString).lastPathComponent))
            }
            let second = try Self.ferry(["sync", process.url("/"), out, "--quiet"], cwd: card.path)
            #expect(second.status == 0, "\(second.stderr)")
            let now = try FileManager.default.subpathsOfDirectory(atPath: out).filter { $0.hasSuffix(".JPG") }
            #expect(Set(now).union(imported).count == 6, "imported \(imported), then \(now)")
            #expect(try FileManager.default.subpathsOfDirectory(atPath: out).allSatisfy { !$0.hasSuffix(".part") })
            // A file saved while the history could not be written (the disk filled
            // between the rename and the record) is fetched again, and the first
            // run said so; every other file is fetched once.
            let unrecorded = imported.filter { first.stderr.contains("\($0) was saved but not recorded") }
            for path in now {
                let name = (path as NSString).lastPathComponent
                #expect(
                    FileManager.default.contents(atPath: out + "/" + path) == expected[name], "\(path) is not whole")
                #expect(!imported.contains(path) || unrecorded.contains(path), "\(path) was fetched twice")
            }
        }
    }

    @Test func putToACardWithAFullDisk() async throws {
        try await onThread {
            let disk = try SmallDisk()
            let cardFolder = disk.path + "/card"
            try FileManager.default.createDirectory(atPath: cardFolder, withIntermediateDirectories: true)
            let local = try TempDir(prefix: "full-put-local")
            let small = try TestData.file(local.file("small.jpg"), size: 200_000, seed: 1)
            let big = try TestData.file(local.file("big.jpg"), size: 600_000, seed: 2)
            // Something else already on the card's disk: 200 + 400 + 600 KB do not fit in 1 MiB.
            try Data(count: 400_000).write(to: URL(fileURLWithPath: disk.path + "/filler"))
            let process = try FerryCardProcess(folder: cardFolder)
            defer { _ = process.terminate() }
            let ok = try Self.ferry(["put", local.file("small.jpg"), process.url("/")], cwd: local.path)
            #expect(ok.status == 0, "\(ok.stderr)")
            let full = try Self.ferry(["put", local.file("big.jpg"), process.url("/")], cwd: local.path)
            #expect(full.status == 1, "\(full.status) \(full.stderr)")
            #expect(full.stderr.contains("big.jpg"), "\(full.stderr)")
            let names = try FileManager.default.contentsOfDirectory(atPath: cardFolder)
            #expect(!names.contains("big.jpg"), "a partial big.jpg is on the card")
            #expect(!names.contains { $0.hasPrefix(".ferry-card-upload") }, "temporary files left: \(names)")
            #expect(FileManager.default.contents(atPath: cardFolder + "/small.jpg") == small)
            #expect(process.isRunning)
            // Room again: the same put succeeds.
            try FileManager.default.removeItem(atPath: disk.path + "/filler")
            let again = try Self.ferry(["put", local.file("big.jpg"), process.url("/")], cwd: local.path)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(FileManager.default.contents(atPath: cardFolder + "/big.jpg") == big)
        }
    }

    @Test func putWhenTheCardsUploadSpoolIsFull() async throws {
        try await onThread {
            let disk = try SmallDisk()
            let card = try TempDir(prefix: "full-spool-card")
            let local = try TempDir(prefix: "full-spool-local")
            _ = try TestData.file(local.file("big.jpg"), size: 2_000_000, seed: 3)
            let process = try FerryCardProcess(folder: card.path, environment: ["TMPDIR": disk.path])
            defer { _ = process.terminate() }
            let start = ContinuousClock.now
            let r = try Self.ferry(["put", local.file("big.jpg"), process.url("/")], cwd: local.path)
            #expect(r.status == 1, "\(r.status) \(r.stderr)")
            #expect(r.stderr.contains("big.jpg"), "\(r.stderr)")
            // 507 with the card's reason, at once: no retrying what cannot fit.
            #expect(r.stderr.contains("507 Insufficient Storage") && r.stderr.contains("no space left"), "\(r.stderr)")
            #expect(ContinuousClock.now - start < .seconds(5))
            #expect(!FileManager.default.fileExists(atPath: card.file("big.jpg")))
            #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path).isEmpty, "spooled files left")
            #expect(process.isRunning)
        }
    }

    /// The spool fills 1 MiB into a 12 MB upload, with far more of the body to
    /// come than the server would drain before answering: it used to close
    /// without a status after `100 Continue`, and `ferry put` retried six times
    /// over 16 s and said "card not answering ... Broken pipe".
    @Test func putOfABigFileWhenTheCardsUploadSpoolFillsEarly() async throws {
        // Checked here, not on the thread: an #expect there is not counted against this test.
        let (r, elapsed, stored, spooled, running) = try await onThread {
            let disk = try SmallDisk()
            let card = try TempDir(prefix: "full-spool-big-card")
            let local = try TempDir(prefix: "full-spool-big-local")
            _ = try TestData.file(local.file("big.cr2"), size: 12_000_000, seed: 4)
            let process = try FerryCardProcess(folder: card.path, environment: ["TMPDIR": disk.path])
            defer { _ = process.terminate() }
            let start = ContinuousClock.now
            let r = try Self.ferry(["put", local.file("big.cr2"), process.url("/")], cwd: local.path)
            return (
                r, ContinuousClock.now - start, FileManager.default.fileExists(atPath: card.file("big.cr2")),
                try FileManager.default.contentsOfDirectory(atPath: disk.path), process.isRunning
            )
        }
        #expect(r.status == 1, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("big.cr2"), "\(r.stderr)")
        // At once, no retries, and in words that say what to do.
        #expect(r.stderr.contains("507 Insufficient Storage") && r.stderr.contains("the card is full"), "\(r.stderr)")
        #expect(!r.stderr.contains("not answering"), "\(r.stderr)")
        #expect(elapsed < .seconds(5), "\(elapsed)")
        #expect(!stored)
        #expect(spooled.isEmpty, "spooled files left: \(spooled)")
        #expect(running)
    }
}
