import FerryKit
import Synchronization

/// Shares a one-connection source (a FlashAir card) between the page's
/// requests, the viewer's prefetch and a running import, in that order.
///
/// Every request the page waits for runs as a ``Ticket``: the transfer engine
/// tells it when one of its card requests has to wait for the connection
/// (``ConnectionWaitObserver``). Then the downloads of lower priority are paused
/// (``Transfer/pause()`` drops the connection and keeps the bytes), so the
/// request gets the connection at once; a moment after the last such request
/// ends they are resumed, and the engine continues each file with `Range` where
/// it stopped. A prefetch yields to the page as the import does, and the import
/// waits for prefetches. A request that never has to wait (a cached thumbnail, a
/// free connection) pauses nothing.
///
/// The same tickets say which page has a request waiting: the page shows
/// "waiting for the card" exactly while ``isWaiting(page:)`` holds.
///
/// On a source with more than one connection nothing is paused or reported.
final class ConnectionShare: Sendable {
    /// Who goes first on the connection.
    enum Priority: Int, Comparable, Sendable {
        /// An import's downloads.
        case bulk
        /// The viewer's neighbours, fetched ahead.
        case prefetch
        /// What a person waits for: listings, thumbnails, the viewer's image, changes.
        case interactive

        static func < (a: Priority, b: Priority) -> Bool { a.rawValue < b.rawValue }
    }

    /// The priority of the request the current task answers; downloads it starts inherit it.
    @TaskLocal static var current: Priority?

    /// One request in flight; the engine reports its waits here.
    final class Ticket: ConnectionWaitObserver {
        let id: Int
        let priority: Priority
        /// The page that asked (its `page=` id), if it said.
        let page: String?
        let share: ConnectionShare

        init(id: Int, priority: Priority, page: String?, share: ConnectionShare) {
            self.id = id
            self.priority = priority
            self.page = page
            self.share = share
        }

        func connectionWait(_ waiting: Bool) { share.ticket(id, waits: waiting) }
    }

    private struct Request {
        var priority: Priority
        var page: String?
        /// Card requests of this ticket waiting for the connection now.
        var waiting = 0
        /// Whether it ever waited: from then until it ends, lower priorities stay paused.
        var held = false
        /// When its current wait began (while `waiting > 0`), and the waits before.
        var since: ContinuousClock.Instant?
        var waited: Duration = .zero
    }

    private struct Download {
        var transfer: Transfer
        var priority: Priority
        /// Paused by this share (and so to be resumed by it).
        var paused = false
    }

    private struct Watcher {
        var page: String
        var shown: Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct Box {
        var requests: [Int: Request] = [:]
        var downloads: [Int: Download] = [:]
        var watchers: [Int: Watcher] = [:]
        var nextID = 0
        /// Import downloads paused for the page or a prefetch so far.
        var pauses = 0
        /// Prefetch downloads paused for the page so far.
        var prefetchPauses = 0
        /// Bumped whenever a request starts to wait, so a scheduled resume that a newer wait overtook does nothing.
        var generation = 0
        /// Whether a thumbnail holds the lane, and the thumbnails queued for it (ticket, continuation).
        var laneBusy = false
        var lane: [(id: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// The lowest priority that may use the connection now: everything below is held back.
        var level: Priority? { requests.values.filter(\.held).map(\.priority).max() }

        func isWaiting(_ page: String) -> Bool {
            requests.values.contains { $0.page == page && $0.waiting > 0 }
        }

        /// Counts a wait of request `id` starting or ending; returns the downloads to pause.
        mutating func count(_ id: Int, waiting: Bool, holds: Bool) -> [Transfer] {
            guard var r = requests[id] else { return [] }
            r.waiting = max(0, r.waiting + (waiting ? 1 : -1))
            if r.waiting > 0, r.since == nil { r.since = .now }
            if r.waiting == 0, let since = r.since {
                r.waited += .now - since
                r.since = nil
            }
            if waiting && holds {
                r.held = true
                generation += 1
            }
            requests[id] = r
            return waiting && holds ? pauseBelow(level) : []
        }

        /// Marks the running downloads below `level` paused and returns them.
        mutating func pauseBelow(_ level: Priority?) -> [Transfer] {
            guard let level else { return [] }
            var out: [Transfer] = []
            for (id, d) in downloads where d.priority < level && !d.paused && d.transfer.state == .running {
                downloads[id]?.paused = true
                if d.priority == .bulk { pauses += 1 } else { prefetchPauses += 1 }
                out.append(d.transfer)
            }
            return out
        }

        /// Takes the watchers whose page's state differs from what they show.
        mutating func changedWatchers() -> [(CheckedContinuation<Bool, Never>, Bool)] {
            var out: [(CheckedContinuation<Bool, Never>, Bool)] = []
            for (id, w) in watchers {
                let now = isWaiting(w.page)
                if now != w.shown {
                    watchers[id] = nil
                    out.append((w.continuation, now))
                }
            }
            return out
        }
    }

    /// Whether the source allows one connection only (and so needs sharing).
    let isSingleConnection: Bool
    /// How long after the last request that waited the held-back downloads resume: a page asks in
    /// bursts (a listing, then its thumbnails), and a resume between them would cost a reconnect each.
    let resumeDelay: Duration
    private let box = Mutex(Box())

    init(isSingleConnection: Bool, resumeDelay: Duration = .milliseconds(400)) {
        self.isSingleConnection = isSingleConnection
        self.resumeDelay = resumeDelay
    }

    /// How many times an import's download was paused for the page or a prefetch.
    var pauses: Int { box.withLock { $0.pauses } }

    /// How many times a prefetch's download was paused for the page.
    var prefetchPauses: Int { box.withLock { $0.prefetchPauses } }

    /// Whether a request of `page` waits for the connection now.
    func isWaiting(page: String) -> Bool { box.withLock { $0.isWaiting(page) } }

    /// Runs a request at `priority`: its card requests report their waits, and its downloads
    /// (``RemoteFileCache``) are registered at that priority.
    ///
    /// - Parameters:
    ///   - priority: ``Priority/interactive`` or ``Priority/prefetch``.
    ///   - page: The asking page's id, for ``isWaiting(page:)``.
    ///   - oneAtATime: Go through the lane one at a time (a grid's thumbnails): the engine then
    ///     holds one of them at most, and the page's other requests (the photo just opened, the
    ///     next folder) pass the rest instead of waiting behind every thumbnail asked for.
    ///   - waited: Told, at the end, how long the request's card requests waited for the connection.
    func run<T: Sendable>(
        _ priority: Priority, page: String?, oneAtATime: Bool = false, waited: ((Duration) -> Void)? = nil,
        _ body: () async -> T
    ) async -> T {
        guard isSingleConnection else { return await body() }
        let ticket = box.withLock { b -> Ticket in
            b.nextID += 1
            b.requests[b.nextID] = Request(priority: priority, page: page)
            return Ticket(id: b.nextID, priority: priority, page: page, share: self)
        }
        if oneAtATime { await enterLane(ticket.id) }
        let result = await ConnectionWait.$observer.withValue(ticket) {
            await ConnectionShare.$current.withValue(priority) { await body() }
        }
        if oneAtATime { leaveLane() }
        let total = end(ticket.id)
        waited?(total)
        return result
    }

    /// Waits until no request of the page or a prefetch has been in flight for `quiet`, or `limit`
    /// passed: what the page asks in the background (counting new files walks the whole card)
    /// goes after what a person waits for, instead of between a folder's thumbnails.
    func afterThePage(quiet: Duration = .milliseconds(300), limit: Duration = .seconds(10)) async {
        guard isSingleConnection else { return }
        let deadline = ContinuousClock.now + limit
        var quietSince: ContinuousClock.Instant?
        while ContinuousClock.now < deadline {
            if box.withLock({ $0.requests.isEmpty }) {
                let since = quietSince ?? .now
                if ContinuousClock.now - since >= quiet { return }
                quietSince = since
            } else {
                quietSince = nil
            }
            try? await Task.sleep(for: .milliseconds(25))
        }
    }

    /// The engine's report: a card request of ticket `id` starts or stops waiting.
    private func ticket(_ id: Int, waits waiting: Bool) { mark(id, waiting: waiting, holds: true) }

    /// Counts a wait of ticket `id` starting or ending; a wait for the connection itself (`holds`)
    /// also holds back the downloads below it.
    private func mark(_ id: Int, waiting: Bool, holds: Bool) {
        let (pause, wake) = box.withLock { b in
            (b.count(id, waiting: waiting, holds: holds), b.changedWatchers())
        }
        for t in pause { t.pause() }
        for (c, value) in wake { c.resume(returning: value) }
    }

    private func enterLane(_ id: Int) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let (free, wake) = box.withLock { b -> (Bool, [(CheckedContinuation<Bool, Never>, Bool)]) in
                if !b.laneBusy {
                    b.laneBusy = true
                    return (true, [])
                }
                b.lane.append((id, c))
                _ = b.count(id, waiting: true, holds: false)
                return (false, b.changedWatchers())
            }
            for (w, value) in wake { w.resume(returning: value) }
            if free { c.resume() }
        }
    }

    private func leaveLane() {
        let (next, wake) = box.withLock {
            b -> (CheckedContinuation<Void, Never>?, [(CheckedContinuation<Bool, Never>, Bool)]) in
            guard !b.lane.isEmpty else {
                b.laneBusy = false
                return (nil, [])
            }
            let next = b.lane.removeFirst()
            _ = b.count(next.id, waiting: false, holds: false)
            return (next.continuation, b.changedWatchers())
        }
        for (w, value) in wake { w.resume(returning: value) }
        next?.resume()
    }

    /// Forgets a ticket; returns how long its card requests waited in all.
    private func end(_ id: Int) -> Duration {
        let (generation, wake, waited) = box.withLock {
            b -> (Int?, [(CheckedContinuation<Bool, Never>, Bool)], Duration) in
            let before = b.level
            guard let r = b.requests.removeValue(forKey: id) else { return (nil, [], .zero) }
            // The page's requests come in streams (thumbnails one at a time): the hold passes to
            // those still in flight, so the downloads below resume a moment after the stream ends,
            // not between two of its requests (each resume costs a reconnect and a pause again).
            if r.held {
                for (other, o) in b.requests where o.priority >= r.priority { b.requests[other]?.held = true }
            }
            let waited = r.waited + (r.since.map { .now - $0 } ?? .zero)
            return (before != b.level ? b.generation : nil, b.changedWatchers(), waited)
        }
        for (c, value) in wake { c.resume(returning: value) }
        guard let generation else { return waited }
        let delay = resumeDelay
        Task.detached {
            try? await Task.sleep(for: delay)
            let resume = self.box.withLock { b -> [Transfer] in
                guard b.generation == generation else { return [] }
                let level = b.level
                var out: [Transfer] = []
                for (id, d) in b.downloads where d.paused && (level == nil || d.priority >= level!) {
                    b.downloads[id]?.paused = false
                    out.append(d.transfer)
                }
                return out
            }
            for t in resume { t.resume() }
        }
        return waited
    }

    /// Registers a download at `priority`; it is paused at once while a request above it holds the connection.
    func add(_ transfer: Transfer, priority: Priority) {
        guard isSingleConnection else { return }
        let pause = box.withLock { b -> [Transfer] in
            b.downloads[transfer.id] = Download(transfer: transfer, priority: priority)
            return b.pauseBelow(b.level)
        }
        for t in pause { t.pause() }
    }

    /// Raises a download's priority (the page asked for a file a prefetch is fetching); resumes it
    /// if it was held back below its new priority.
    func promote(_ transfer: Transfer, to priority: Priority) {
        let resume = box.withLock { b -> Bool in
            guard var d = b.downloads[transfer.id], d.priority < priority else { return false }
            d.priority = priority
            let free = b.level.map { priority >= $0 } ?? true
            let resume = d.paused && free
            if resume { d.paused = false }
            b.downloads[transfer.id] = d
            return resume
        }
        if resume { transfer.resume() }
    }

    /// Forgets a download that ended.
    func remove(_ transfer: Transfer) {
        _ = box.withLock { $0.downloads.removeValue(forKey: transfer.id) }
    }

    /// Waits until `page`'s waiting state differs from `shown`, or `timeout` passes.
    ///
    /// - Returns: The state then.
    func change(page: String, from shown: Bool, timeout: Duration) async -> Bool {
        let id = box.withLock { b -> Int in
            b.nextID += 1
            return b.nextID
        }
        return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let now = box.withLock { b -> Bool? in
                let now = b.isWaiting(page)
                if now != shown { return now }
                b.watchers[id] = Watcher(page: page, shown: shown, continuation: c)
                return nil
            }
            if let now {
                c.resume(returning: now)
                return
            }
            Task.detached {
                try? await Task.sleep(for: timeout)
                let due = self.box.withLock { b in b.watchers.removeValue(forKey: id).map { ($0, b.isWaiting(page)) } }
                if let (w, now) = due { w.continuation.resume(returning: now) }
            }
        }
    }
}
