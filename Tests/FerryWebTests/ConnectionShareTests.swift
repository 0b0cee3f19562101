import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryWeb

/// The priorities on a card's only connection (page > prefetch > import), carried out by
/// the engine's queue (`Admission`, `LanePolicy.oneConnectionCard`), and the truthful
/// "waiting for the card", against `ferry card --max-connections 1 --latency 30
/// --rate 2500000` (a 4 MB file takes 1.6 s on its link).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ConnectionShareTests {
    let folder: TempDir
    let out: TempDir
    let card: FerryCardProcess
    let fs: any RemoteFileSystem

    init() throws {
        folder = try TempDir(prefix: "ferry-share")
        out = try TempDir(prefix: "ferry-share-out")
        for (name, size) in [("BIG_A.BIN", 4_000_000), ("BIG_B.BIN", 4_000_000), ("SMALL.BIN", 500_000)] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ name.count &+ $0 >> 9) }
            try Data(bytes).write(to: URL(fileURLWithPath: folder.path + "/" + name))
        }
        card = try FerryCardProcess(
            folder: folder.path, arguments: ["--max-connections", "1", "--latency", "30", "--rate", "2500000"])
        fs = try Ferry.fileSystem(for: RemoteURL(parsing: card.url("/")))
    }

    func same(_ name: String, _ local: String) -> Bool {
        FileManager.default.contentsEqual(atPath: folder.path + "/" + name, andPath: local)
    }

    /// Starts a download at `priority`.
    func download(_ name: String, _ priority: TransferPriority) -> Transfer {
        TransferPriority.$current.withValue(priority) {
            fs.download("/" + name, to: out.path + "/" + name, options: DownloadOptions())
        }
    }

    /// The share of this test's card.
    func makeShare() -> ConnectionShare { ConnectionShare(isSingleConnection: true, url: fs.url) }

    /// Waits until `condition` holds (polling), or fails after `limit`.
    func until(_ what: String, within limit: Duration = .seconds(10), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out waiting for \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test func requestsTakeTheirPriorityFromRouteAndHeader() {
        func request(_ target: String, prefetch: Bool = false) -> HTTPRequest {
            APITests.request(target, headers: prefetch ? [("X-Ferry-Priority", "prefetch")] : [])
        }
        func priority(_ name: String, _ r: HTTPRequest, method: String = "GET") -> TransferPriority? {
            (try? WebAPI.Route.find(name, method: method).get())?.priority(for: r)
        }
        #expect(priority("thumb", request("/api/thumb?path=/a.jpg")) == .browsing)
        #expect(priority("list", request("/api/list?path=/")) == .interactive)
        #expect(priority("preview", request("/api/preview?path=/a.jpg", prefetch: true)) == .prefetch)
        #expect(priority("file", request("/api/file?path=/a.jpg", prefetch: true)) == .prefetch)
        // Only the viewer's reads can be prefetches; a background refresh takes its turn behind the import.
        #expect(priority("list", request("/api/list?path=/", prefetch: true)) == .interactive)
        #expect(priority("list", request("/api/list?path=/&background=1")) == .bulk)
        #expect(priority("new", request("/api/new?background=1")) == .bulk)
        #expect(priority("import", request("/api/import")) == nil)
        #expect(priority("import", request("/api/import"), method: "POST") == nil)
        #expect(priority("waiting", request("/api/waiting?page=x")) == nil)
        #expect(priority("delete", request("/api/delete"), method: "POST") == .interactive)
    }

    @Test func everyRouteHasOneMethodAndAWrongMethodSaysWhichToUse() {
        for route in WebAPI.Route.allCases {
            let found = try? WebAPI.Route.find(route.name, method: route.reads ? "GET" : "POST").get()
            #expect(found == route, "\(route.name)")
        }
        #expect((try? WebAPI.Route.find("import", method: "HEAD").get()) == .importStatus)
        #expect((try? WebAPI.Route.find("import", method: "POST").get()) == .startImport)
        func refusal(_ name: String, _ method: String) -> (Int, String)? {
            guard case .failure(let r) = WebAPI.Route.find(name, method: method) else { return nil }
            guard case .data(let body) = r.response.body else { return (r.response.status, "") }
            return (r.response.status, String(decoding: body, as: UTF8.self))
        }
        #expect(refusal("list", "POST")?.0 == 405 && refusal("list", "POST")?.1.contains("use GET") == true)
        #expect(refusal("delete", "GET")?.0 == 405 && refusal("delete", "GET")?.1.contains("use POST") == true)
        #expect(refusal("nothing", "GET")?.0 == 404)
    }

    @Test func aPrefetchYieldsToThePageAndResumesWithRange() async throws {
        let share = makeShare()
        let prefetch = Task {
            await share.run(.prefetch, page: "p") { () -> TransferResult? in
                let t = fs.download("/BIG_A.BIN", to: out.path + "/BIG_A.BIN", options: DownloadOptions())
                return try? await t.result
            }
        }
        try await Task.sleep(for: .milliseconds(400))
        // The page lists the card in the middle of the prefetch's 1.6 s download.
        let started = ContinuousClock.now
        let (listed, prefetchPaused) = await share.run(.interactive, page: "p") {
            let listed = try? await fs.list("/")
            return (listed?.count, share.prefetchPauses)
        }
        let took = ContinuousClock.now - started
        #expect(listed == 3)
        #expect(prefetchPaused == 1, "the prefetch's download was not stopped for the listing")
        #expect(took < .milliseconds(1000), "the listing waited \(took) behind the prefetch")
        let result = try #require(await prefetch.value, "the prefetch failed")
        #expect(result.restarts == 0 && result.resumedFrom > 0, "resumed from \(result.resumedFrom)")
        #expect(same("BIG_A.BIN", out.path + "/BIG_A.BIN"))
    }

    @Test func anImportWaitsForThePrefetchAndResumesAfterIt() async throws {
        let share = makeShare()
        let bulk = download("BIG_A.BIN", .bulk)
        // Past the 400 ms a download runs before it can be stopped (`LanePolicy.holdOff`).
        try await until("the import's bytes") { bulk.currentProgress.bytesDone > 1_200_000 }
        let (before, after) = await share.run(.prefetch, page: "p") { () -> (Int64, Int64) in
            let t = fs.download("/SMALL.BIN", to: out.path + "/SMALL.BIN", options: DownloadOptions())
            // Asked after the prefetch's submit: what the import had then, give or take a buffer.
            try? await Task.sleep(for: .milliseconds(60))
            let before = bulk.currentProgress.bytesDone
            _ = try? await t.result
            return (before, bulk.currentProgress.bytesDone)
        }
        #expect(after - before < 64_000, "the import ran beside the prefetch: \(after - before) bytes")
        #expect(share.pauses == 1 && share.prefetchPauses == 0)
        #expect(same("SMALL.BIN", out.path + "/SMALL.BIN"))
        let result = try await bulk.result
        #expect(result.restarts == 0 && result.resumedFrom > 0, "resumed from \(result.resumedFrom)")
        #expect(same("BIG_A.BIN", out.path + "/BIG_A.BIN"))
    }

    @Test func thePageTakesOverAPrefetchOfTheSameFile() async throws {
        // The page asks for the file a prefetch fetches, after a stat that waits behind it: the
        // stat pauses the prefetch, and the page's request must not then wait for that paused download.
        let share = makeShare()
        let cache = RemoteFileCache(folder: out.path + "/cache")
        let prefetch = Task {
            await share.run(.prefetch, page: "p") {
                try? await cache.localCopy(of: "/BIG_B.BIN", in: fs, version: "1")
            }
        }
        try await Task.sleep(for: .milliseconds(400))
        let finished = Mutex(false)
        let page = Task {
            await share.run(.interactive, page: "p") { () -> String? in
                _ = try? await fs.stat("/BIG_B.BIN")
                let local = try? await cache.localCopy(of: "/BIG_B.BIN", in: fs, version: "1")
                finished.withLock { $0 = true }
                return local
            }
        }
        try await until("the page's request (it waits for a download its own wait paused)", within: .seconds(15)) {
            finished.withLock { $0 }
        }
        guard finished.withLock({ $0 }) else { return }
        let local = await page.value
        #expect(local != nil, "the page's request failed")
        #expect(await prefetch.value == local)
        #expect(share.prefetchPauses >= 1)
        #expect(local.map { same("BIG_B.BIN", $0) } == true)
    }

    @Test func thePhotoOpenedWhileItsPrefetchRunsIsNotStoppedForThumbnails() async throws {
        // The viewer prefetches a photo; the person opens it: the page's request joins that download
        // (`RemoteFileCache`), which is raised to interactive, so the grid's thumbnails wait behind it.
        let share = makeShare()
        let cache = RemoteFileCache(folder: out.path + "/cache")
        let prefetch = Task {
            await share.run(.prefetch, page: "p") { try? await cache.localCopy(of: "/BIG_A.BIN", in: fs, version: "1") }
        }
        // Past the 400 ms a download runs before it can be stopped (`LanePolicy.holdOff`).
        try await Task.sleep(for: .milliseconds(500))
        let opened = Task {
            await share.run(.interactive, page: "p") {
                try? await cache.localCopy(of: "/BIG_A.BIN", in: fs, version: "1")
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        let listed = await share.run(.browsing, page: "p") { try? await fs.list("/") }
        #expect(listed?.count == 3)
        let local = await opened.value
        #expect(local != nil, "the page's request failed")
        #expect(await prefetch.value == local)
        #expect(share.prefetchPauses == 0, "the opened photo's download was stopped for a thumbnail")
        #expect(local.map { same("BIG_A.BIN", $0) } == true)
    }

    @Test func waitingIsReportedToThePageWhoseRequestWaits() async throws {
        let share = makeShare()
        // Page B downloads a file for its viewer (the connection is free: it never waits).
        let viewer = Task {
            await share.run(.interactive, page: "B") {
                let t = fs.download("/BIG_A.BIN", to: out.path + "/BIG_A.BIN", options: DownloadOptions())
                return try? await t.result
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(!share.isWaiting(page: "A") && !share.isWaiting(page: "B"))
        // Page A lists: same priority, so it waits its turn behind B's download, and says so.
        let started = ContinuousClock.now
        let listing = Task { await share.run(.interactive, page: "A") { try? await fs.list("/") } }
        let becameWaiting = await share.change(page: "A", from: false, timeout: .seconds(5))
        let waitingAt = ContinuousClock.now - started
        #expect(becameWaiting, "page A's listing was never reported waiting")
        #expect(waitingAt < .milliseconds(500), "reported after \(waitingAt)")
        #expect(!share.isWaiting(page: "B"), "page B waits for nothing")
        let stoppedWaiting = await share.change(page: "A", from: true, timeout: .seconds(10))
        let waited = ContinuousClock.now - started
        #expect(!stoppedWaiting)
        #expect(await viewer.value != nil)
        #expect(await listing.value?.count == 3)
        // It waited for the rest of B's 1.6 s download, no more.
        #expect(waited > .milliseconds(600) && waited < .seconds(5), "waiting lasted \(waited)")
        #expect(share.pauses == 0 && share.prefetchPauses == 0)
    }

    @Test func aStreamOfPageRequestsPausesThePrefetchOnce() async throws {
        // Thumbnails come one after another: the prefetch stays paused through the stream and
        // resumes after it, instead of resuming and pausing again between two of them.
        let share = makeShare()
        let t = download("BIG_A.BIN", .prefetch)
        try await until("the prefetch's bytes") { t.currentProgress.bytesDone > 200_000 }
        // A grid's thumbnails: asked at once, queued by the engine.
        var thumbnails: [Task<Void, Never>] = []
        for _ in 1...8 {
            thumbnails.append(
                Task {
                    await share.run(.browsing, page: "p") { _ = try? await fs.stat("/SMALL.BIN") }
                }
            )
        }
        for thumbnail in thumbnails { await thumbnail.value }
        #expect(share.prefetchPauses == 1, "stopped \(share.prefetchPauses) times during one stream")
        let result = try await t.result
        #expect(result.restarts == 0)
        #expect(same("BIG_A.BIN", out.path + "/BIG_A.BIN"))
    }

    @Test func thePhotoJustOpenedPassesTheThumbnailsAskedBeforeIt() async throws {
        // Thumbnails are `browsing`, below a single request of the page: one that comes after
        // eight of them waits for the one on the card, not for all eight.
        let share = makeShare()
        let order = Order()
        var thumbnails: [Task<Void, Never>] = []
        for i in 1...8 {
            thumbnails.append(
                Task {
                    await share.run(.browsing, page: "p") {
                        _ = try? await fs.stat("/SMALL.BIN")
                        order.add("thumb\(i)")
                    }
                })
        }
        try await until("a thumbnail queued in the engine") { share.isWaiting(page: "p") }
        await share.run(.interactive, page: "p") {
            _ = try? await fs.stat("/BIG_A.BIN")
            order.add("photo")
        }
        for t in thumbnails { await t.value }
        let done = order.items.withLock { $0 }
        let position = done.firstIndex(of: "photo") ?? done.count
        #expect(position <= 3, "the photo came after \(position) thumbnails: \(done)")
        #expect(done.count == 9)
        #expect(!share.isWaiting(page: "p"))
    }
}

/// What finished, in order.
private final class Order: Sendable {
    let items = Mutex<[String]>([])
    func add(_ item: String) { items.withLock { $0.append(item) } }
}
