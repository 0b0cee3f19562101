import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// Ferry's FlashAir client against `ferry card`, started as a process on a free
/// port for each test: every operation, through the real HTTP API.
@Suite(.serialized)
struct FlashAirCardTests {
    let root: TempDir
    let out: TempDir

    init() throws {
        root = try TempDir(prefix: "card-root")
        out = try TempDir(prefix: "card-out")
        let fm = FileManager.default
        try fm.createDirectory(atPath: root.file("DCIM/100__TSB"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root.file("Empty Folder"), withIntermediateDirectories: true)
        try TestData.file(root.file("DCIM/100__TSB/IMG_0001.JPG"), size: 300_000, seed: 1)
        try Data(SampleJPEG.withThumbnail()).write(to: URL(fileURLWithPath: root.file("DCIM/100__TSB/THUMB.JPG")))
        try TestData.file(root.file("DCIM/100__TSB/a, b #1 %.jpg"), size: 1234, seed: 2)
        try TestData.file(root.file("DCIM/100__TSB/写真.jpg"), size: 10, seed: 3)
        try TestData.file(root.file(".hidden"), size: 5, seed: 4)
        try TestData.file(root.file("readonly.txt"), size: 6, seed: 5)
        chmod(root.file("readonly.txt"), 0o444)
        // 2019-07-06 05:04:02 local time.
        try fm.setAttributes(
            [.modificationDate: FlashAirCardTests.localDate(2019, 7, 6, 5, 4, 2)],
            ofItemAtPath: root.file("DCIM/100__TSB/IMG_0001.JPG"))
    }

    static func localDate(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int) -> Date {
        var c = DateComponents()
        (c.year, c.month, c.day, c.hour, c.minute, c.second) = (y, mo, d, h, mi, s)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        return calendar.date(from: c)!
    }

    func card(_ arguments: [String] = []) throws -> (FerryCardProcess, FlashAirFileSystem) {
        let process = try FerryCardProcess(folder: root.path, arguments: arguments)
        var policy = FlashAirFileSystem.RequestPolicy()
        policy.retryDelay = .milliseconds(50)
        policy.stallTimeout = .seconds(5)
        return (process, FlashAirFileSystem(url: try RemoteURL(parsing: process.url()), policy: policy))
    }

    @Test func listsWithFATAttributesAndLocalDates() async throws {
        let (card, fs) = try card()
        defer { card.stop() }
        let top = try await fs.list("/")
        #expect(top.map(\.name) == [".hidden", "DCIM", "Empty Folder", "readonly.txt"])
        let byName = Dictionary(uniqueKeysWithValues: top.map { ($0.name, $0) })
        #expect(byName[".hidden"]?.isHidden == true)
        #expect(byName["DCIM"]?.kind == .directory)
        #expect(byName["readonly.txt"]?.isReadOnly == true)
        #expect(byName["readonly.txt"]?.size == 6)

        let photos = try await fs.list("/DCIM/100__TSB/")
        let names = Set(photos.map(\.name))
        #expect(names == ["IMG_0001.JPG", "THUMB.JPG", "a, b #1 %.jpg", "写真.jpg"])
        let img = try #require(photos.first { $0.name == "IMG_0001.JPG" })
        #expect(img.size == 300_000)
        #expect(img.modified?.iso8601 == "2019-07-06T05:04:02")
        #expect(img.path == "/DCIM/100__TSB/IMG_0001.JPG")
        #expect(try await fs.list("/Empty Folder").isEmpty)
    }

    @Test func countStatAndMissing() async throws {
        let (card, fs) = try card()
        defer { card.stop() }
        #expect(try await fs.count("/") == 3)  // .hidden is not counted
        #expect(try await fs.count("/DCIM/100__TSB") == 4)
        // A card counts 0 for a missing folder: count says notFound, as list does.
        #expect(try await fs.count("/Empty Folder") == 0)
        for missing in ["/NOPE", "/DCIM/100__TSB/THUMB.JPG"] {
            do {
                _ = try await fs.count(missing)
                Issue.record("count of \(missing) succeeded")
            } catch let e {
                #expect(e.code == .notFound && e.operation == "count", "\(e)")
            }
        }
        let s = try await fs.stat("/DCIM/100__TSB/a, b #1 %.jpg")
        #expect(s.size == 1234)
        #expect(try await fs.stat("/Empty Folder").isDirectory)
        await #expect(throws: FerryError.self) { try await fs.stat("/DCIM/nope.jpg") }
        do {
            _ = try await fs.list("/DCIM/nope")
            Issue.record("listing a missing folder succeeded")
        } catch let e {
            #expect(e.code == .notFound)
        }
    }

    @Test func downloadsAwkwardNamesByteIdentical() async throws {
        let (card, fs) = try card()
        defer { card.stop() }
        for name in ["IMG_0001.JPG", "a, b #1 %.jpg", "写真.jpg"] {
            let dest = out.file(name)
            let r = try await fs.download("/DCIM/100__TSB/" + name, to: dest, options: .init()).result
            #expect(r.size == LocalFile.size(atPath: root.file("DCIM/100__TSB/" + name)))
            #expect(FileManager.default.contentsEqual(atPath: dest, andPath: root.file("DCIM/100__TSB/" + name)))
        }
    }

    @Test(arguments: [false, true])
    func resumesWithRangeOrRestartsWithout(noRange: Bool) async throws {
        let (card, _) = try card(noRange ? ["--no-range"] : [])
        defer { card.stop() }
        // The first connection is cut partway through the file.
        let proxy = try FaultProxy(upstreamPort: card.port, faultyConnections: 1, cutAfter: 100_000...150_000)
        let fs = FlashAirFileSystem(url: try RemoteURL(parsing: "flashair://127.0.0.1:\(proxy.port)/"))
        var options = DownloadOptions()
        options.retryDelay = .milliseconds(20)
        let dest = out.file("cut.jpg")
        let r = try await fs.download("/DCIM/100__TSB/IMG_0001.JPG", to: dest, options: options).result
        #expect(FileManager.default.contentsEqual(atPath: dest, andPath: root.file("DCIM/100__TSB/IMG_0001.JPG")))
        #expect(proxy.cutCount == 1)
        #expect(r.retries == 1)
        if noRange {
            #expect(r.restarts == 1)
            #expect(r.bytesTransferred > 300_000)
        } else {
            #expect(r.restarts == 0)
            #expect(r.bytesTransferred == 300_000)
        }
    }

    @Test func uploadStoresBytesAndTime() async throws {
        let (card, fs) = try card()
        defer { card.stop() }
        let local = out.file("up load.jpg")
        let data = try TestData.file(local, size: 200_000, seed: 9)
        let mtime = FlashAirCardTests.localDate(2020, 2, 29, 23, 59, 58)
        try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: local)

        let r = try await fs.upload(local, to: "/DCIM/100__TSB/", options: .init()).result
        #expect(r.size == 200_000)
        let stored = root.file("DCIM/100__TSB/up load.jpg")
        #expect(try Data(contentsOf: URL(fileURLWithPath: stored)) == data)
        let attrs = try FileManager.default.attributesOfItem(atPath: stored)
        #expect((attrs[.modificationDate] as? Date) == mtime)
        #expect(try await fs.stat("/DCIM/100__TSB/up load.jpg").modified?.iso8601 == "2020-02-29T23:59:58")

        // Exists now: refused, skipped, replaced.
        do throws(FerryError) {
            _ = try await fs.upload(local, to: "/DCIM/100__TSB/up load.jpg", options: .init()).result
            Issue.record("overwrote without --overwrite")
        } catch {
            #expect(error.code == .destinationExists)
        }
        var options = UploadOptions()
        options.overwrite = .skip
        #expect(try await fs.upload(local, to: "/DCIM/100__TSB/up load.jpg", options: options).result.skipped)
        let other = out.file("other.jpg")
        let replacement = try TestData.file(other, size: 5000, seed: 10)
        options.overwrite = .overwrite
        _ = try await fs.upload(other, to: "/DCIM/100__TSB/up load.jpg", options: options).result
        #expect(try Data(contentsOf: URL(fileURLWithPath: stored)) == replacement)
    }

    @Test func uploadCreatesParentsWhenAsked() async throws {
        let (card, fs) = try card()
        defer { card.stop() }
        let local = out.file("deep.txt")
        try TestData.file(local, size: 100)
        var without = UploadOptions()
        without.createParents = false  // the default creates them
        do throws(FerryError) {
            _ = try await fs.upload(local, to: "/A/B/C/deep.txt", options: without).result
            Issue.record("uploaded into a missing folder")
        } catch {
            #expect(error.code == .notFound)
        }
        var options = UploadOptions()
        options.createParents = true
        _ = try await fs.upload(local, to: "/A/B/C/deep.txt", options: options).result
        #expect(LocalFile.size(atPath: root.file("A/B/C/deep.txt")) == 100)
    }

    @Test func concurrentUploadsDoNotMixFoldersOrTimes() async throws {
        let (card, fs) = try card()
        defer { card.stop() }
        try await fs.makeDirectory("/X", createParents: false)
        try await fs.makeDirectory("/Y", createParents: false)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<6 {
                let local = out.file("c\(i).bin")
                try TestData.file(local, size: 50_000 + i, seed: UInt64(i))
                let date = FlashAirCardTests.localDate(2010 + i, 1, 1, 0, 0, 0)
                try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: local)
                group.addTask {
                    _ = try await fs.upload(local, to: i % 2 == 0 ? "/X/" : "/Y/", options: .init()).result
                }
            }
            try await group.waitForAll()
        }
        for i in 0..<6 {
            let stored = root.file((i % 2 == 0 ? "X/" : "Y/") + "c\(i).bin")
            #expect(LocalFile.size(atPath: stored) == Int64(50_000 + i))
            let date = try FileManager.default.attributesOfItem(atPath: stored)[.modificationDate] as? Date
            #expect(date == FlashAirCardTests.localDate(2010 + i, 1, 1, 0, 0, 0))
        }
    }

    @Test func deleteMkdirRmdirAndRename() async throws {
        let (card, fs) = try card()
        defer { card.stop() }
        try await fs.delete("/DCIM/100__TSB/写真.jpg")
        #expect(!FileManager.default.fileExists(atPath: root.file("DCIM/100__TSB/写真.jpg")))
        do {
            try await fs.delete("/DCIM/100__TSB/写真.jpg")
            Issue.record("deleted a missing file")
        } catch let e {
            #expect(e.code == .notFound)
        }

        try await fs.makeDirectory("/New", createParents: false)
        #expect(try await fs.stat("/New").isDirectory)
        do {
            try await fs.makeDirectory("/New", createParents: false)
            Issue.record("mkdir of an existing folder succeeded")
        } catch let e {
            #expect(e.code == .destinationExists)
        }
        do {
            try await fs.makeDirectory("/P/Q", createParents: false)
            Issue.record("mkdir without its parent succeeded")
        } catch let e {
            #expect(e.code == .notFound)
        }
        try await fs.makeDirectory("/P/Q/R", createParents: true)
        try await fs.makeDirectory("/P/Q/R", createParents: true)  // exists: fine with -p
        #expect(try await fs.stat("/P/Q/R").isDirectory)

        do {
            try await fs.removeDirectory("/P/Q")
            Issue.record("removed a folder that is not empty")
        } catch let e {
            #expect(e.code == .directoryNotEmpty)
        }
        try await fs.removeDirectory("/P/Q/R")
        try await fs.removeDirectory("/Empty Folder")
        #expect(!FileManager.default.fileExists(atPath: root.file("Empty Folder")))
        #expect(!FileManager.default.fileExists(atPath: root.file("P/Q/R")))

        do {
            try await fs.rename("/readonly.txt", to: "/other.txt")
            Issue.record("rename succeeded on a card")
        } catch let e {
            #expect(e.code == .unsupportedOperation)
        }
    }

    @Test func thumbnailWithExifHeaders() async throws {
        let (card, fs) = try card()
        defer { card.stop() }
        let t = try #require(try await fs.thumbnail("/DCIM/100__TSB/THUMB.JPG"))
        #expect(Array(t.jpeg) == SampleJPEG.thumbnail)
        #expect(t.width == 4000)
        #expect(t.height == 3000)
        #expect(t.orientation == 6)
        // Random bytes, no Exif: no thumbnail. A missing file: notFound.
        #expect(try await fs.thumbnail("/DCIM/100__TSB/IMG_0001.JPG") == nil)
        do {
            _ = try await fs.thumbnail("/DCIM/100__TSB/NONE.JPG")
            Issue.record("a thumbnail of a missing file")
        } catch let e {
            #expect(e.code == .notFound)
        }
    }

    @Test func infoReportsSettingsAndProbesOperations() async throws {
        let cid = "0123456789abcdef0123456789abcdef"
        let (card, fs) = try card(["--firmware", "F19BAW3AW2.00.00", "--cid", cid, "--no-upload"])
        defer { card.stop() }
        let info = try await fs.info()
        #expect(info.firmware == "F19BAW3AW2.00.00")
        #expect(info.generation == "W-02")
        #expect(info.cid == cid)
        #expect(info.ssid?.hasPrefix("flashair_") == true)
        #expect(info.uploadEnabled == false)
        #expect((info.capacity?.totalBytes ?? 0) > 0)
        // 2.00.00 has 109–118 but not 121 (2.00.02) nor 220/221 (3.00).
        #expect(info.supportedOperations.contains(109))
        #expect(info.unsupportedOperations == [121, 220, 221])
        #expect(info.timeZoneQuarterHours == nil)

        let local = out.file("no.txt")
        try TestData.file(local, size: 10)
        do throws(FerryError) {
            _ = try await fs.upload(local, to: "/no.txt", options: .init()).result
            Issue.record("uploaded to a card with uploads disabled")
        } catch {
            #expect(error.code == .unsupportedOperation)
        }

        let (w4, fs4) = try self.card()
        defer { w4.stop() }
        let info4 = try await fs4.info()
        #expect(info4.unsupportedOperations.isEmpty)
        #expect(info4.timeZoneQuarterHours == TimeZone.current.secondsFromGMT() / 900)
        #expect(info4.cid != cid && info4.cid?.count == 32)
        // The same folder is the same card: a stable CID.
        let (again, fsAgain) = try self.card()
        defer { again.stop() }
        #expect(try await fsAgain.info().cid == info4.cid)
    }

    @Test func changeFlagAndLastWrite() async throws {
        let (card, fs) = try card()
        defer { card.stop() }
        _ = try await fs.hasChanged()
        #expect(try await fs.hasChanged() == false)
        #expect(try await fs.lastWriteTime() == .zero)

        let local = out.file("flag.txt")
        try TestData.file(local, size: 10)
        _ = try await fs.upload(local, to: "/flag.txt", options: .init()).result
        #expect(try await fs.hasChanged() == true)
        #expect(try await fs.hasChanged() == false)
        let afterUpload = try await fs.lastWriteTime()
        #expect(afterUpload > .zero)

        // A change on disk, as the camera would make.
        try await Task.sleep(for: .milliseconds(20))
        try TestData.file(root.file("DCIM/100__TSB/IMG_0002.JPG"), size: 10)
        #expect(try await fs.hasChanged() == true)
        #expect(try await fs.lastWriteTime() > afterUpload)

        try await fs.delete("/flag.txt")
        #expect(try await fs.hasChanged() == true)
    }

    @Test func oneConnectionCardServesEveryOperation() async throws {
        let (card, _) = try card(["--max-connections", "1"])
        defer { card.stop() }
        let proxy = try FaultProxy(upstreamPort: card.port)
        let fs = FlashAirFileSystem(url: try RemoteURL(parsing: "flashair://127.0.0.1:\(proxy.port)/"))
        let local = out.file("one.bin")
        try TestData.file(local, size: 100_000)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<3 {
                group.addTask {
                    _ = try await fs.download(
                        "/DCIM/100__TSB/IMG_0001.JPG", to: out.file("one\(i).jpg"), options: .init()
                    ).result
                }
                group.addTask { _ = try await fs.list("/DCIM/100__TSB") }
                group.addTask { _ = try await fs.count("/") }
            }
            group.addTask { _ = try await fs.upload(local, to: "/one.bin", options: .init()).result }
            group.addTask { _ = try await fs.thumbnail("/DCIM/100__TSB/THUMB.JPG") }
            try await group.waitForAll()
        }
        #expect(proxy.maxConcurrentConnections == 1)
    }

    @Test func latencyAndRateOptions() async throws {
        let (card, fs) = try card(["--latency", "150", "--rate", "200000"])
        defer { card.stop() }
        var started = ContinuousClock.now
        _ = try await fs.count("/")
        #expect(ContinuousClock.now - started >= .milliseconds(150))
        started = .now
        _ = try await fs.download("/DCIM/100__TSB/IMG_0001.JPG", to: out.file("slow.jpg"), options: .init()).result
        // 300 kB at 200 kB/s.
        #expect(ContinuousClock.now - started >= .milliseconds(1200))
    }

    @Test func stoppedCardIsNotAnswering() async throws {
        let (card, _) = try card()
        let port = card.port
        card.stop()
        var policy = FlashAirFileSystem.RequestPolicy()
        policy.tries = 2
        policy.retryDelay = .milliseconds(20)
        let fs = FlashAirFileSystem(url: try RemoteURL(parsing: "flashair://127.0.0.1:\(port)/"), policy: policy)
        do {
            _ = try await fs.list("/")
            Issue.record("a stopped card answered")
        } catch let e {
            #expect(e.code == .notAnswering)
            #expect(e.description.contains("card not answering after 2 tries"))
        }
    }
}
