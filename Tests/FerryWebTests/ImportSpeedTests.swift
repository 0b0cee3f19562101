import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit
@testable import FerryWeb

/// The import panel's speed and time left are those of the bytes actually moved
/// over the last seconds, across files (issue 28 item 10): on a one-connection
/// card whose downloads are paused for the page's thumbnails, the old figure
/// (a sum of per-file smoothed speeds, each remembering its own pauses) showed
/// 66-430 KB/s while 520 KB/s moved.
@Suite struct ImportSpeedTests {
    @Test func rateWindowMeasuresWhatMovedLately() {
        let t0 = ContinuousClock.now
        var w = RateWindow(span: .seconds(3))
        #expect(w.bytesPerSecond(at: t0) == nil)
        // 1 MB/s in 100 ms steps.
        for i in 0...50 { w.record(Int64(i) * 100_000, at: t0 + .milliseconds(100 * i)) }
        let steady = try! #require(w.bytesPerSecond(at: t0 + .seconds(5)))
        #expect(abs(steady - 1_000_000) < 20_000, "\(steady)")
        // Nothing for 1.5 s (a pause): half the window moved nothing.
        let paused = try! #require(w.bytesPerSecond(at: t0 + .milliseconds(6_500)))
        #expect(abs(paused - 500_000) < 50_000, "\(paused)")
        // A whole window of nothing: zero, not the last figure.
        #expect(w.bytesPerSecond(at: t0 + .seconds(9)) == 0)
        // Moving again at 2 MB/s: right again one window later.
        for i in 0...40 { w.record(5_000_000 + Int64(i) * 200_000, at: t0 + .seconds(9) + .milliseconds(100 * i)) }
        let again = try! #require(w.bytesPerSecond(at: t0 + .seconds(13)))
        #expect(abs(again - 2_000_000) < 80_000, "\(again)")
        // Too short a time behind it: unknown.
        var fresh = RateWindow()
        fresh.record(0, at: t0)
        fresh.record(400_000, at: t0 + .milliseconds(300))
        #expect(fresh.bytesPerSecond(at: t0 + .milliseconds(300)) == nil)
    }

    @Test func aFilesSpeedLeavesOutTheBytesItResumedFrom() {
        let t0 = ContinuousClock.now
        var meter = SpeedMeter()
        // Resumed at 10 MB, then 1 MB/s.
        for i in 0...20 { meter.sample(bytes: 10_000_000 + Int64(i) * 100_000, now: t0 + .milliseconds(100 * i)) }
        #expect(abs(meter.bytesPerSecond - 1_000_000) < 50_000, "\(meter.bytesPerSecond)")
        // A restart from zero counts on from there, at the same speed.
        meter.rebase(bytes: 0, now: t0 + .milliseconds(2_100))
        for i in 0...20 { meter.sample(bytes: Int64(i) * 100_000, now: t0 + .milliseconds(2_100 + 100 * i)) }
        #expect(abs(meter.bytesPerSecond - 1_000_000) < 50_000, "\(meter.bytesPerSecond)")
    }

    /// A card at 1 MB/s with one connection, the page asking for thumbnails all
    /// along (each pauses the import's download): the reported speed follows
    /// what the test itself sees move.
    @Test func theSpeedShownIsTheSpeedMovedBesideThePage() async throws {
        let folder = try TempDir(prefix: "ferry-import-speed")
        let root = folder.file("card")
        try FileManager.default.createDirectory(atPath: root + "/DCIM/100__TSB", withIntermediateDirectories: true)
        for i in 1...6 {
            try TestData.file(root + "/DCIM/100__TSB/IMG_000\(i).JPG", size: 1_500_000, seed: UInt64(i))
        }
        try await onThread {
            for i in 1...3 {
                try Data(SamplePhotos.jpeg(index: i, width: 640, height: 480)).write(
                    to: URL(fileURLWithPath: root + "/DCIM/100__TSB/PIC_000\(i).JPG"))
            }
        }
        let card = try FerryCardProcess(
            folder: root, arguments: ["--rate", "1000000", "--max-connections", "1"])
        defer { card.stop() }
        var configuration = WebConfiguration(source: try RemoteURL(parsing: card.url("/")), host: "127.0.0.1", port: 0)
        configuration.cacheDirectory = folder.file("cache")
        configuration.importDirectory = folder.file("imported")
        let api = try WebAPI(configuration: configuration)
        _ = await api.handle(APITests.request("/api/list?path=%2FDCIM%2F100__TSB&page=p1"))
        let paths = (1...6).map { "/DCIM/100__TSB/IMG_000\($0).JPG" }
        let started = await api.handle(ImportAPITests.post("/api/import", ["paths": paths]))
        #expect(started.status == 202)

        // The page: thumbnails, each new (so the card is asked), every 400 ms.
        let page = Task {
            var n = 0
            while !Task.isCancelled {
                n += 1
                let name = "PIC_000\(n % 3 + 1).JPG"
                _ = await api.handle(APITests.request("/api/thumb?path=%2FDCIM%2F100__TSB%2F\(name)&page=p1&v=\(n)"))
                try? await Task.sleep(for: .milliseconds(400))
            }
        }
        defer { page.cancel() }
        var seen: [(at: ContinuousClock.Instant, done: Int, speed: Double)] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let status = APITests.object(await api.handle(APITests.request("/api/import")))
            guard status["state"] as? String == "running" else { break }
            seen.append((.now, status["bytesDone"] as? Int ?? 0, status["bytesPerSecond"] as? Double ?? 0))
            try await Task.sleep(for: .milliseconds(250))
        }
        page.cancel()
        let status = try await ImportAPITests.finished(api)
        #expect(status["done"] as? Int == 6, "\(status)")
        // Each figure after the first window against the bytes the test saw move over
        // the same three seconds.
        var ratios: [Double] = []
        for s in seen {
            guard let base = seen.last(where: { s.at - $0.at >= .seconds(3) }), s.at - seen[0].at >= .seconds(4)
            else { continue }
            let moved = Double(s.done - base.done) / ((s.at - base.at) / .seconds(1))
            guard moved > 0 else { continue }
            ratios.append(s.speed / moved)
        }
        #expect(ratios.count >= 4, "\(seen.count) figures")
        let median = ratios.sorted()[ratios.count / 2]
        #expect(median > 0.8 && median < 1.25, "median shown / moved \(median); all \(ratios)")
        // Dips: the old figure fell to an eighth of what moved for seconds at a time;
        // one poll in ten may land on a file's edge on a loaded machine.
        let dips = ratios.filter { $0 < 0.5 }.count
        #expect(dips * 10 <= ratios.count, "\(dips) figures under half of what moved: \(ratios)")
    }
}
