import CMicroHTTPD
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Every open connection and what it is doing, for the bounds that keep a
/// server answering while others hold connections open: the header deadlines,
/// the request-line deadline, and the room made when it is crowded (see
/// ``HTTPServer/Options/shedsIdleConnections``).
///
/// Written by the accepting thread (open, close) and the connection threads
/// (request line, head, slot, completion), read by the watch thread and by a
/// connection thread that needs a slot. A connection is closed for room or for
/// a deadline by `shutdown(2)` on its socket, under the lock: its entry goes
/// before libmicrohttpd closes the socket (``closed(_:)`` runs first), so the
/// number cannot have been reused. The connection's own thread then sees the
/// socket end and libmicrohttpd closes it.
final class ConnectionRegistry: Sendable {
    struct Entry {
        let socket: Int32
        let peer: String?
        /// Since when the connection waits for a request head; nil while one
        /// is read or answered.
        var waitingSince: ContinuousClock.Instant?
        /// Whether the request line of the head being waited for has arrived.
        var lineSeen = false
        /// Bytes received when the wait began (`TCP_INFO`), to tell when a head begins.
        var bytesAtWait: Int64 = 0
        /// When bytes of a head were first seen without a request line.
        var bytesSeenAt: ContinuousClock.Instant?
        /// Whether it has had a request: waiting is then idling (keep-alive).
        var served = false
        var holdsSlot = false
        var trusted = false
        /// Shut down by the registry; libmicrohttpd has not closed it yet.
        var closing = false
    }

    /// What a sweep of the watch thread found to do.
    struct Closure {
        var peer: String?
        var reason: String
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])
    private let options: HTTPServer.Options

    init(options: HTTPServer.Options) {
        self.options = options
    }

    /// Open connections, ``closing`` ones included.
    var count: Int { entries.withLock { $0.count } }

    /// A connection opened: it waits for its first request head from now.
    func opened(_ context: ConnectionContext) {
        guard context.socket >= 0 else { return }
        entries.withLock {
            $0[ObjectIdentifier(context)] = Entry(socket: context.socket, peer: context.peer, waitingSince: .now)
        }
    }

    /// The connection closed (before libmicrohttpd closes its socket).
    func closed(_ context: ConnectionContext) {
        _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(context)) }
    }

    /// The request line arrived.
    func requestLine(_ context: ConnectionContext) {
        entries.withLock { $0[ObjectIdentifier(context)]?.lineSeen = true }
    }

    /// A whole request head arrived.
    ///
    /// - Returns: `false` when the registry has already closed the connection:
    ///   it must not be answered.
    func headArrived(_ context: ConnectionContext) -> Bool {
        entries.withLock { all in
            guard var entry = all[ObjectIdentifier(context)] else { return true }
            guard !entry.closing else { return false }
            entry.waitingSince = nil
            all[ObjectIdentifier(context)] = entry
            return true
        }
    }

    /// The connection took a slot; `trusted` when its request was.
    func tookSlot(_ context: ConnectionContext, trusted: Bool) {
        entries.withLock {
            $0[ObjectIdentifier(context)]?.holdsSlot = true
            if trusted { $0[ObjectIdentifier(context)]?.trusted = true }
        }
    }

    /// The connection's request proved who it is.
    func trusted(_ context: ConnectionContext) {
        entries.withLock { $0[ObjectIdentifier(context)]?.trusted = true }
    }

    /// A response went out: the connection waits for its next request head.
    func waiting(_ context: ConnectionContext) {
        let bytes = context.socket >= 0 ? ferry_tcp_bytes_received(context.socket) : -1
        entries.withLock { all in
            guard var entry = all[ObjectIdentifier(context)] else { return }
            entry.waitingSince = .now
            entry.lineSeen = false
            entry.bytesAtWait = max(bytes, 0)
            entry.bytesSeenAt = nil
            entry.served = true
            all[ObjectIdentifier(context)] = entry
        }
    }

    // MARK: - Making room

    /// A connection needs a slot and finds none: closes the slot holder that
    /// has been idle the longest, if one has been for a moment. An untrusted
    /// newcomer only displaces untrusted holders.
    ///
    /// - Returns: The connection closed, or nil when none was.
    func reclaimSlot(forTrusted trusted: Bool) -> Closure? {
        closeOne(grace: .milliseconds(250), reason: "was idle while every slot was taken") {
            $0.holdsSlot && (trusted || !$0.trusted)
        }
    }

    /// A newcomer arrived (on the accepting thread). Past
    /// ``HTTPServer/Options/connectionLimit`` open connections the one that
    /// has waited longest for a request head goes (one that opened in the
    /// last 100 ms is spared), or, when none only waits, the newcomer itself;
    /// near the limit, one that has waited a second or more goes, so that the
    /// next newcomer finds room.
    func makeRoomForNewcomer(_ newcomer: ConnectionContext) -> Closure? {
        guard options.shedsIdleConnections else { return nil }
        let open = entries.withLock { $0.values.filter { !$0.closing }.count }
        if open > Int(options.connectionLimit) {
            if let closure = closeOne(
                grace: .milliseconds(100), reason: "was only waiting while the server is full", where: { _ in true })
            {
                return closure
            }
            return entries.withLock { all -> Closure? in
                guard var entry = all[ObjectIdentifier(newcomer)], !entry.closing else { return nil }
                entry.closing = true
                all[ObjectIdentifier(newcomer)] = entry
                shutdown(entry.socket, Int32(SHUT_RDWR))
                return Closure(peer: entry.peer, reason: "found every connection busy")
            }
        }
        guard let threshold = roomThreshold, open > threshold else { return nil }
        return closeOne(grace: .seconds(1), reason: "was only waiting while the server is full") { _ in true }
    }

    /// The open connections above which the longest-waiting go, or nil when
    /// the limit is too small to keep room.
    private var roomThreshold: Int? {
        guard options.shedsIdleConnections else { return nil }
        let limit = Int(options.connectionLimit)
        let headroom = limit / 8
        return headroom >= 1 ? limit - headroom : nil
    }

    /// Closes the waiting connection that `eligible` accepts, untrusted first,
    /// then the one waiting the longest, if it has waited at least `grace`.
    private func closeOne(grace: Duration, reason: String, where eligible: (Entry) -> Bool) -> Closure? {
        let now = ContinuousClock.now
        return entries.withLock { all -> Closure? in
            let candidates = all.filter { _, entry in
                guard !entry.closing, let since = entry.waitingSince, now - since >= grace else { return false }
                return eligible(entry)
            }
            guard
                let victim = candidates.min(by: { a, b in
                    if a.value.trusted != b.value.trusted { return !a.value.trusted }
                    return a.value.waitingSince! < b.value.waitingSince!
                })
            else { return nil }
            all[victim.key]?.closing = true
            shutdown(victim.value.socket, Int32(SHUT_RDWR))
            return Closure(peer: victim.value.peer, reason: reason)
        }
    }

    // MARK: - Deadlines

    /// One pass of the watch thread: closes the connections past a deadline.
    ///
    /// - Parameter crowded: Whether most connections or slots are taken.
    func sweep(crowded: Bool) -> [Closure] {
        let now = ContinuousClock.now
        var closures: [Closure] = []
        entries.withLock { all in
            for (key, entry) in all where !entry.closing {
                guard let since = entry.waitingSince else { continue }
                if let reason = expiry(of: entry, key: key, since: since, now: now, crowded: crowded, in: &all) {
                    all[key]?.closing = true
                    shutdown(entry.socket, Int32(SHUT_RDWR))
                    closures.append(Closure(peer: entry.peer, reason: reason))
                }
            }
            // Still too many: the longest-waiting go (at most a few per pass).
            if let threshold = roomThreshold {
                var open = all.values.filter { !$0.closing }.count
                let waiting = all.filter {
                    !$0.value.closing && $0.value.waitingSince.map { now - $0 >= .seconds(1) } == true
                }
                .sorted { a, b in
                    if a.value.trusted != b.value.trusted { return !a.value.trusted }
                    return a.value.waitingSince! < b.value.waitingSince!
                }
                for (key, entry) in waiting where open > threshold {
                    all[key]?.closing = true
                    shutdown(entry.socket, Int32(SHUT_RDWR))
                    open -= 1
                    closures.append(Closure(peer: entry.peer, reason: "was only waiting while the server is full"))
                }
            }
        }
        return closures
    }

    /// Why `entry` must close now, or nil. Answers 400 itself to a connection
    /// whose request line does not come.
    private func expiry(
        of entry: Entry, key: ObjectIdentifier, since: ContinuousClock.Instant, now: ContinuousClock.Instant,
        crowded: Bool, in all: inout [ObjectIdentifier: Entry]
    ) -> String? {
        if let deadline = options.headerDeadline, now - since > deadline {
            return "sent no complete request in \(deadline)"
        }
        if let deadline = options.requestLineDeadline, !entry.lineSeen {
            let bytes = ferry_tcp_bytes_received(entry.socket)
            if bytes > entry.bytesAtWait {
                if let seen = entry.bytesSeenAt {
                    if now - seen >= deadline {
                        EarlyAnswer.send(
                            .text("400 Bad Request: no request line (METHOD TARGET HTTP/1.1)\n", status: 400),
                            on: entry.socket)
                        return "sent no request line in \(deadline)"
                    }
                } else {
                    all[key]?.bytesSeenAt = now
                }
            }
        }
        guard crowded, options.shedsIdleConnections else { return nil }
        let idle = entry.served && !entry.lineSeen && entry.bytesSeenAt == nil
        if idle {
            let limit = entry.trusted ? options.crowdedIdleTimeout * 4 : options.crowdedIdleTimeout
            if now - since > limit { return "was idle for \(limit) while the server is crowded" }
        } else if now - since > options.crowdedHeaderDeadline {
            return "sent no complete request in \(options.crowdedHeaderDeadline) while the server is crowded"
        }
        return nil
    }
}
