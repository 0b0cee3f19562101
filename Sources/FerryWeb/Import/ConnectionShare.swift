import FerryKit
import Synchronization

/// Shares a one-connection source (a FlashAir card) between the page and a
/// running import: while a listing, thumbnail, preview or file request is in
/// flight, the import's downloads are paused (``Transfer/pause()`` drops the
/// connection and keeps the bytes); a moment after the last one ends they are
/// resumed, and the engine continues each file with `Range` where it stopped.
///
/// On a source with more than one connection nothing is paused.
final class ConnectionShare: Sendable {
    private struct Box {
        var interactive = 0
        var bulk: [Int: Transfer] = [:]
        /// Downloads paused for the page so far.
        var pauses = 0
        /// Bumped by every interactive request, so a scheduled resume that a newer request overtook does nothing.
        var generation = 0
    }

    /// Whether the source allows one connection only (and so needs sharing).
    let isSingleConnection: Bool
    /// How long after the last interactive request the import resumes: a page asks in bursts
    /// (a listing, then its thumbnails), and a resume between them would cost a reconnect each.
    let resumeDelay: Duration
    private let box = Mutex(Box())

    init(isSingleConnection: Bool, resumeDelay: Duration = .milliseconds(400)) {
        self.isSingleConnection = isSingleConnection
        self.resumeDelay = resumeDelay
    }

    /// Requests in flight that go before the import.
    var interactiveCount: Int { box.withLock { $0.interactive } }

    /// How many times a bulk download was paused for the page.
    var pauses: Int { box.withLock { $0.pauses } }

    /// Runs an interactive request with the import paused around it.
    func interactive<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        guard isSingleConnection else { return try await body() }
        let paused = box.withLock { b -> [Transfer] in
            b.interactive += 1
            b.generation += 1
            let running = b.bulk.values.filter { $0.state == .running }
            b.pauses += running.count
            return running
        }
        for t in paused { t.pause() }
        defer { leave() }
        return try await body()
    }

    private func leave() {
        let generation = box.withLock { b -> Int? in
            b.interactive -= 1
            return b.interactive == 0 ? b.generation : nil
        }
        guard let generation else { return }
        let delay = resumeDelay
        Task {
            try? await Task.sleep(for: delay)
            let resume = self.box.withLock { b -> [Transfer] in
                b.interactive == 0 && b.generation == generation ? Array(b.bulk.values) : []
            }
            for t in resume { t.resume() }
        }
    }

    /// Registers a bulk download; it is paused at once while interactive requests run.
    func addBulk(_ transfer: Transfer) {
        guard isSingleConnection else { return }
        let pauseNow = box.withLock { b -> Bool in
            b.bulk[transfer.id] = transfer
            if b.interactive > 0 { b.pauses += 1 }
            return b.interactive > 0
        }
        if pauseNow { transfer.pause() }
    }

    /// Forgets a bulk download that ended.
    func removeBulk(_ transfer: Transfer) {
        _ = box.withLock { $0.bulk.removeValue(forKey: transfer.id) }
    }
}
