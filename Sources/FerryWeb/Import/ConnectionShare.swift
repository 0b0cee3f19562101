import FerryKit
import Synchronization

/// Which page waits for a one-connection source (a FlashAir card).
///
/// Who goes first on the card is the transfer engine's decision: each request
/// runs at its route's ``TransferPriority`` (``WebAPI/Route``), the engine
/// starts waiting requests in that order and stops an import's or a prefetch's
/// download for the page's request (the download resumes with `Range` when the
/// card is free again, after a short hold-off between the page's bursts). What
/// is left here is what the page shows: every request of a page runs as a
/// ``Ticket``, the engine tells it when one of its card requests waits for the
/// connection (``ConnectionWaitObserver``), and the page shows "waiting for the
/// card" exactly while ``isWaiting(page:)`` holds.
///
/// On a source with more than one connection nothing is tracked.
final class ConnectionShare: Sendable {
    /// One request in flight; the engine reports its waits here.
    final class Ticket: ConnectionWaitObserver {
        let id: Int
        let share: ConnectionShare

        init(id: Int, share: ConnectionShare) {
            self.id = id
            self.share = share
        }

        func connectionWait(_ waiting: Bool) { share.ticket(id, waits: waiting) }
    }

    private struct Request {
        var page: String?
        /// Card requests of this ticket waiting for the connection now.
        var waiting = 0
        /// When its current wait began (while `waiting > 0`), and the waits before.
        var since: ContinuousClock.Instant?
        var waited: Duration = .zero
    }

    private struct Watcher {
        var page: String
        var shown: Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct Box {
        var requests: [Int: Request] = [:]
        var watchers: [Int: Watcher] = [:]
        var nextID = 0

        func isWaiting(_ page: String) -> Bool {
            requests.values.contains { $0.page == page && $0.waiting > 0 }
        }

        /// Counts a wait of request `id` starting or ending.
        mutating func count(_ id: Int, waiting: Bool) {
            guard var r = requests[id] else { return }
            r.waiting = max(0, r.waiting + (waiting ? 1 : -1))
            if r.waiting > 0, r.since == nil { r.since = .now }
            if r.waiting == 0, let since = r.since {
                r.waited += .now - since
                r.since = nil
            }
            requests[id] = r
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
    /// The source's server, for the engine's count of stopped downloads.
    private let url: RemoteURL?
    /// The engine's counts when this source was opened.
    private let preemptedBefore: (bulk: Int, prefetch: Int)
    private let box = Mutex(Box())

    init(isSingleConnection: Bool, url: RemoteURL? = nil) {
        self.isSingleConnection = isSingleConnection
        self.url = url
        preemptedBefore =
            url.map {
                (
                    Ferry.preemptions(of: $0, at: .bulk),
                    Ferry.preemptions(of: $0, at: .prefetch)
                )
            } ?? (0, 0)
    }

    /// How many times an import's download was stopped for the page or a prefetch.
    var pauses: Int { url.map { Ferry.preemptions(of: $0, at: .bulk) - preemptedBefore.bulk } ?? 0 }

    /// How many times a prefetch's download was stopped for the page.
    var prefetchPauses: Int {
        url.map { Ferry.preemptions(of: $0, at: .prefetch) - preemptedBefore.prefetch } ?? 0
    }

    /// Whether a request of `page` waits for the connection now.
    func isWaiting(page: String) -> Bool { box.withLock { $0.isWaiting(page) } }

    /// Runs a request of `page` at `priority`: the engine orders its card
    /// requests by it, and they report their waits here.
    ///
    /// - Parameters:
    ///   - priority: Where its card requests go (``WebAPI/Route/priority(for:)``).
    ///   - page: The asking page's id, for ``isWaiting(page:)``.
    ///   - waited: Told, at the end, how long the request's card requests waited for the connection.
    func run<T: Sendable>(
        _ priority: TransferPriority, page: String?, waited: ((Duration) -> Void)? = nil,
        _ body: () async -> T
    ) async -> T {
        guard isSingleConnection else {
            return await TransferPriority.$current.withValue(priority) { await body() }
        }
        let ticket = box.withLock { b -> Ticket in
            b.nextID += 1
            // A page's background requests (`bulk`: its count of new files, badge refreshes) take
            // their turn behind the import without the page saying "waiting for the card".
            b.requests[b.nextID] = Request(page: priority == .bulk ? nil : page)
            return Ticket(id: b.nextID, share: self)
        }
        let result = await ConnectionWait.$observer.withValue(ticket) {
            await TransferPriority.$current.withValue(priority) { await body() }
        }
        let total = end(ticket.id)
        waited?(total)
        return result
    }

    /// The engine's report: a card request of ticket `id` starts or stops waiting.
    private func ticket(_ id: Int, waits waiting: Bool) {
        let wake = box.withLock { b in
            b.count(id, waiting: waiting)
            return b.changedWatchers()
        }
        for (c, value) in wake { c.resume(returning: value) }
    }

    /// Forgets a ticket; returns how long its card requests waited in all.
    private func end(_ id: Int) -> Duration {
        let (wake, waited) = box.withLock { b -> ([(CheckedContinuation<Bool, Never>, Bool)], Duration) in
            guard let r = b.requests.removeValue(forKey: id) else { return ([], .zero) }
            let waited = r.waited + (r.since.map { .now - $0 } ?? .zero)
            return (b.changedWatchers(), waited)
        }
        for (c, value) in wake { c.resume(returning: value) }
        return waited
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
