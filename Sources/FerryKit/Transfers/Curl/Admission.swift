/// Which transfers may have a connection now: the engine's admission as a value,
/// fed events and answering with actions, so it is tested without sockets (as
/// async-http-client tests its connection pool).
///
/// Transfers (`Ticket`s) wait in one queue, ordered by their priority
/// (``TransferPriority``), first come first served within one. One starts when
/// both the total limit and its lane's limit have room; a lane is an opaque key,
/// one per server (`RemoteURL.hostKey`), so a FlashAir card (limit 1) never sees
/// two requests at once while other servers run several. The engine
/// (`CurlEngine`) turns the actions into libcurl calls; nothing here knows a
/// protocol.
///
/// A lane may have a policy (``LanePolicy``), as a one-connection card has:
/// - *preempt*: a ticket that waits for a full lane stops a running one of lower
///   priority that may be stopped (a download, which resumes with `Range` when
///   it gets its turn again), so the page's request gets the card at once;
/// - *hold-off*: after a ticket of some priority ends, the lane stays theirs for
///   a moment (a page asks in bursts: a listing, then its thumbnails; a download
///   let in between would be stopped again at once and cost a reconnect);
/// - *release when idle*: once nothing ran on the lane for a while, its idle
///   connections are closed, so another client of the card gets in.
///
/// Time comes in with the events (`now`); ``nextDeadline`` says when to call
/// ``tick(now:)``.
///
/// Events and what they answer:
///
/// | event | answer |
/// |---|---|
/// | `submit` | `.start` when there is room; else, for a watched ticket, `.wait(true)`, and on a preempting lane `.preempt` of a running ticket below it; `.finishUnstarted` when it was interrupted before it arrived |
/// | `interrupt` of a waiting ticket | `.wait(false)` if told, `.finishUnstarted`; an active one: `.stop` (the engine stops it and reports `end`) |
/// | `end` | the first waiting tickets that now have room: `.wait(false)` if told, `.start`; a lane with a hold-off is held for the ended ticket's priority |
/// | `end(refusedMore: true)` | as `end`, after holding its lane to the connections still working (`.lowered`) |
/// | `raise` of a waiting ticket | it moves up the queue (behind those of its new priority), then as `end`: `.start` if that gives it room, `.preempt` of a lower one on a preempting lane |
/// | `raise` of a running ticket | nothing at once; no ticket below its new priority stops it from then on, and its end holds the lane for that priority |
/// | `setLimits`, `setPolicy` | as `end`, for every lane whose limit changed |
/// | `tick` | as `end` once a hold-off ran out; `.closeIdle` for a lane idle for its policy's time |
struct Admission<Ticket: Hashable & Sendable>: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// What the engine is to do.
    enum Action: Hashable, Sendable {
        /// Give the ticket its connection (add it to libcurl).
        case start(Ticket)
        /// End the ticket without starting it: it was interrupted while waiting.
        case finishUnstarted(Ticket)
        /// Stop the running ticket (remove it from libcurl); report `end` after.
        case stop(Ticket)
        /// Stop the running ticket for one of higher priority (`LanePolicy/preempts`):
        /// as `stop`; the ticket's owner tries again (a download resumes with `Range`).
        case preempt(Ticket)
        /// Tell the ticket's watcher it waits for a connection (true), or no longer does.
        case wait(Ticket, Bool)
        /// A lane's limit was lowered to what worked (`end(refusedMore:)`): keep it.
        case lowered(lane: String, to: Int)
        /// Close the lane's idle connections: nothing ran on it for its
        /// policy's `releaseIdleAfter`.
        case closeIdle(lane: String)
    }

    /// One ticket arriving.
    struct Arrival: Sendable {
        var ticket: Ticket
        var lane: String
        /// Someone is to hear that it waits.
        var watched: Bool
        /// It was interrupted before it arrived (a cancelled task).
        var interrupted = false
        var priority: TransferPriority = .interactive
        /// It may be stopped for a ticket of higher priority (`Action/preempt`).
        var preemptible = false
    }

    /// What is known of one ticket.
    private struct Entry {
        var lane: Int
        var watched: Bool
        var priority: Int
        var preemptible: Bool
        var told = false
        var active = false
        /// Asked to stop (`.stop`, `.preempt`): its connection is as good as free.
        var stopping = false
        /// When it got its connection.
        var startedAt: Instant?
    }

    /// What is known of one lane.
    private struct Lane {
        var key: String
        var limit: Int
        var policy: LanePolicy
        var active = 0
        var waiting = 0
        /// Running tickets asked to stop for a preemption, not ended yet.
        var stopping = 0
        /// Held for tickets of `heldFor` priority and above until `heldUntil`.
        var heldFor = 0
        var heldUntil: Instant?
        /// Since when nothing ran (nil: something runs, or it was released).
        var idleSince: Instant?
    }

    private(set) var total: Int
    private(set) var perHost: Int
    private var hostLimits: [String: Int]
    /// Lanes given more than `perHost` for their round trip (`widen`); a host
    /// limit (set, or lowered after a refusal) still wins.
    private var widened: [String: Int] = [:]
    private var policies: [String: LanePolicy] = [:]
    /// Lane keys numbered on first sight: admission compares integers, not
    /// strings (with a thousand queued files string lookups were a large share
    /// of the instructions; bench/RESULTS.md, "Issue 19, first and last steps").
    private var laneNumber: [String: Int] = [:]
    private var lanes: [Lane] = []
    private var entries: [Ticket: Entry] = [:]
    /// Waiting tickets, highest priority first, oldest first within one.
    private var queue: [Ticket] = []
    /// Running tickets.
    private(set) var activeCount = 0

    init(total: Int = 16, perHost: Int = 6, hostLimits: [String: Int] = [:]) {
        self.total = max(1, total)
        self.perHost = max(1, perHost)
        self.hostLimits = hostLimits
    }

    /// Tickets waiting for a connection.
    var waitingCount: Int { entries.count - activeCount }

    /// Whether nothing waits or runs.
    var isEmpty: Bool { entries.isEmpty }

    /// Whether `ticket` waits or runs.
    func contains(_ ticket: Ticket) -> Bool { entries[ticket] != nil }

    /// Whether `ticket` has its connection.
    func isActive(_ ticket: Ticket) -> Bool { entries[ticket]?.active == true }

    /// The limit of `lane` now.
    func limit(of lane: String) -> Int { hostLimits[lane] ?? widened[lane] ?? perHost }

    /// The waiting tickets in the order they are to start.
    var waitingOrder: [Ticket] { queue }

    /// When ``tick(now:)`` has something to do: a hold-off with tickets behind
    /// it runs out, or a lane is to release its idle connections. Nil: nothing
    /// is due until another event.
    var nextDeadline: Instant? {
        var next: Instant?
        for lane in lanes {
            if let until = lane.heldUntil, lane.waiting > 0 { next = Self.earliest(next, until) }
            if let since = lane.idleSince, let after = lane.policy.releaseIdleAfter {
                next = Self.earliest(next, since + after)
            }
        }
        // A download too young to be stopped (its run of `holdOff`) becomes stoppable.
        if lanes.contains(where: { $0.policy.preempts && $0.waiting > $0.stopping }) {
            for e in entries.values where e.active && e.preemptible && !e.stopping {
                let lane = lanes[e.lane]
                guard lane.policy.preempts, lane.waiting > lane.stopping, let at = e.startedAt else { continue }
                next = Self.earliest(next, at + lane.policy.holdOff)
            }
        }
        return next
    }

    private static func earliest(_ a: Instant?, _ b: Instant) -> Instant { a.map { min($0, b) } ?? b }

    // MARK: Events

    /// A ticket arrived for `lane`. `watched`: someone is to hear that it waits;
    /// `interrupted`: it was interrupted before it arrived (a cancelled task).
    mutating func submit(
        _ ticket: Ticket, lane: String, watched: Bool, interrupted: Bool = false,
        priority: TransferPriority = .interactive, preemptible: Bool = false, now: Instant = .now
    ) -> [Action] {
        submit(
            [
                Arrival(
                    ticket: ticket, lane: lane, watched: watched, interrupted: interrupted, priority: priority,
                    preemptible: preemptible)
            ], now: now)
    }

    /// Several tickets arrived at once, all of the default priority.
    mutating func submit(_ tickets: [(ticket: Ticket, lane: String, watched: Bool, interrupted: Bool)]) -> [Action] {
        submit(
            tickets.map { Arrival(ticket: $0.ticket, lane: $0.lane, watched: $0.watched, interrupted: $0.interrupted) })
    }

    /// Several tickets arrived at once: queued by priority in their order,
    /// admitted, then the ones still waiting told so (one pass over the queue,
    /// not one per ticket), and on a preempting lane room made for them.
    mutating func submit(_ tickets: [Arrival], now: Instant = .now) -> [Action] {
        var actions: [Action] = []
        var arrived: [Ticket] = []
        for t in tickets {
            if t.interrupted {
                actions.append(.finishUnstarted(t.ticket))
                continue
            }
            let n = number(of: t.lane)
            let priority = t.priority.rawValue
            entries[t.ticket] = Entry(lane: n, watched: t.watched, priority: priority, preemptible: t.preemptible)
            enqueue(t.ticket, priority: priority)
            lanes[n].waiting += 1
            arrived.append(t.ticket)
        }
        actions += admit(now: now)
        for ticket in arrived {
            guard let e = entries[ticket], e.watched, !e.active else { continue }
            entries[ticket]?.told = true
            actions.append(.wait(ticket, true))
        }
        return actions + preempt(now: now)
    }

    /// The ticket is to stop: a waiting one ends unstarted, a running one is
    /// stopped by the engine, which then reports `end`. Unknown tickets (not yet
    /// arrived, or ended) need nothing: one that arrives later says so itself.
    mutating func interrupt(_ ticket: Ticket, now: Instant = .now) -> [Action] {
        guard let e = entries[ticket] else { return [] }
        if e.active {
            if e.stopping { return [] }
            entries[ticket]?.stopping = true
            lanes[e.lane].stopping += 1
            return [.stop(ticket)]
        }
        entries[ticket] = nil
        lanes[e.lane].waiting -= 1
        if let i = queue.firstIndex(of: ticket) { queue.remove(at: i) }
        var actions: [Action] = []
        if e.told { actions.append(.wait(ticket, false)) }
        actions.append(.finishUnstarted(ticket))
        return actions
    }

    /// The ticket's priority goes up to `priority` (a person now waits for the
    /// transfer a prefetch started); a priority at or below its own changes
    /// nothing, and so does an unknown ticket (not arrived yet, or ended). A
    /// waiting ticket moves up the queue, behind the tickets waiting at its new
    /// priority, and may start or preempt at once; a running one keeps its
    /// connection and is no longer stopped for tickets below its new priority.
    mutating func raise(_ ticket: Ticket, to priority: TransferPriority, now: Instant = .now) -> [Action] {
        guard let e = entries[ticket], priority.rawValue > e.priority else { return [] }
        entries[ticket]?.priority = priority.rawValue
        if !e.active {
            if let i = queue.firstIndex(of: ticket) { queue.remove(at: i) }
            enqueue(ticket, priority: priority.rawValue)
        }
        return admit(now: now) + preempt(now: now)
    }

    /// A running ticket ended (finished, failed or stopped). `refusedMore`: the
    /// server turned its connection away for how many this client has (FTP's
    /// `421` at login); its lane is then held to the connections still working,
    /// never below one, so the rest wait instead of being refused in a loop.
    mutating func end(_ ticket: Ticket, refusedMore: Bool = false, now: Instant = .now) -> [Action] {
        guard let e = entries.removeValue(forKey: ticket) else { return [] }
        var actions: [Action] = []
        var lane = lanes[e.lane]
        if e.active {
            lane.active -= 1
            activeCount -= 1
            if e.stopping { lane.stopping -= 1 }
            if lane.active == 0 { lane.idleSince = now }
            // What the page asks comes in bursts: the lane stays with this
            // priority a moment, so a lower one is not let in between two of them.
            // The page's own requests (`.browsing` and up) are never held back by each other.
            if lane.policy.holdOff > .zero, !e.stopping, e.priority > TransferPriority.bulk.rawValue {
                let level = min(e.priority, TransferPriority.browsing.rawValue)
                let stillHeld = lane.heldUntil.map { now < $0 } ?? false
                lane.heldFor = stillHeld ? max(lane.heldFor, level) : level
                lane.heldUntil = now + lane.policy.holdOff
            }
        } else {
            lane.waiting -= 1
            if let i = queue.firstIndex(of: ticket) { queue.remove(at: i) }
            if e.told { actions.append(.wait(ticket, false)) }
        }
        if refusedMore {
            let working = lane.active
            if working > 0, working < lane.limit {
                hostLimits[lane.key] = working
                lane.limit = working
                actions.append(.lowered(lane: lane.key, to: working))
            }
        }
        lanes[e.lane] = lane
        return actions + admit(now: now) + preempt(now: now)
    }

    /// New limits: in total, per lane by default, and for some lanes.
    mutating func setLimits(total: Int, perHost: Int, hostLimits: [String: Int], now: Instant = .now) -> [Action] {
        self.total = max(1, total)
        self.perHost = max(1, perHost)
        self.hostLimits = hostLimits.mapValues { max(1, $0) }
        for n in lanes.indices { lanes[n].limit = limit(of: lanes[n].key) }
        return admit(now: now) + preempt(now: now)
    }

    /// Gives `lane` `width` transfers at once instead of `perHost`
    /// (`RoundTripWidth`: a far server); nil goes back to `perHost`. A lane
    /// with a host limit of its own keeps that.
    mutating func widen(_ lane: String, to width: Int?, now: Instant = .now) -> [Action] {
        widened[lane] = width.map { max(1, $0) }
        if let n = laneNumber[lane] { lanes[n].limit = limit(of: lane) }
        return admit(now: now) + preempt(now: now)
    }

    /// New policies for some lanes (the rest keep the default, ``LanePolicy/init()``).
    mutating func setPolicies(_ policies: [String: LanePolicy], now: Instant = .now) -> [Action] {
        self.policies = policies
        for n in lanes.indices { lanes[n].policy = policies[lanes[n].key] ?? LanePolicy() }
        return admit(now: now) + preempt(now: now)
    }

    /// Time passed: tickets held back by a hold-off that ran out start; lanes
    /// idle for their policy's time release their connections.
    mutating func tick(now: Instant) -> [Action] {
        var actions: [Action] = []
        for n in lanes.indices {
            // A hold-off that ran out is over, even on a lane still full (no deadline left behind).
            if let until = lanes[n].heldUntil, now >= until { lanes[n].heldUntil = nil }
            guard let since = lanes[n].idleSince, let after = lanes[n].policy.releaseIdleAfter, now >= since + after
            else { continue }
            lanes[n].idleSince = nil
            actions.append(.closeIdle(lane: lanes[n].key))
        }
        return actions + admit(now: now) + preempt(now: now)
    }

    // MARK: Admission

    private mutating func number(of lane: String) -> Int {
        if let n = laneNumber[lane] { return n }
        let n = lanes.count
        laneNumber[lane] = n
        lanes.append(Lane(key: lane, limit: limit(of: lane), policy: policies[lane] ?? LanePolicy()))
        return n
    }

    /// Puts a ticket behind every waiting one of its priority or above. Tickets
    /// of one priority (every transfer of a `ferry get`) are appended at once.
    private mutating func enqueue(_ ticket: Ticket, priority: Int) {
        guard let last = queue.last, let lastPriority = entries[last]?.priority, lastPriority < priority else {
            queue.append(ticket)
            return
        }
        var i = queue.count - 1
        while i > 0, let p = entries[queue[i - 1]]?.priority, p < priority { i -= 1 }
        queue.insert(ticket, at: i)
    }

    /// Whether a ticket of `priority` may start on `lane` now.
    private func hasRoom(_ lane: Lane, for priority: Int, now: Instant) -> Bool {
        guard lane.active < lane.limit else { return false }
        if let until = lane.heldUntil, now < until, priority < lane.heldFor { return false }
        return true
    }

    /// Starts waiting tickets in the queue's order as far as the limits allow.
    /// Stops as soon as no lane has both a waiting ticket and room: 500 queued
    /// files for one server made every admission walk the whole queue to find
    /// that none could start (bench/RESULTS.md).
    private mutating func admit(now: Instant) -> [Action] {
        guard activeCount < total, !queue.isEmpty else { return [] }
        var open = 0
        for n in lanes.indices where lanes[n].waiting > 0 && lanes[n].active < lanes[n].limit {
            // A hold-off ran out: forget it.
            if let until = lanes[n].heldUntil, now >= until { lanes[n].heldUntil = nil }
            open += 1
        }
        var actions: [Action] = []
        var i = 0
        while open > 0 && i < queue.count && activeCount < total {
            let ticket = queue[i]
            guard var e = entries[ticket], hasRoom(lanes[e.lane], for: e.priority, now: now) else {
                i += 1
                continue
            }
            queue.remove(at: i)
            e.active = true
            if e.told {
                e.told = false
                actions.append(.wait(ticket, false))
            }
            entries[ticket] = e
            lanes[e.lane].waiting -= 1
            lanes[e.lane].active += 1
            lanes[e.lane].idleSince = nil
            entries[ticket]?.startedAt = now
            activeCount += 1
            actions.append(.start(ticket))
            if lanes[e.lane].waiting == 0 || lanes[e.lane].active >= lanes[e.lane].limit { open -= 1 }
        }
        return actions
    }

    /// On preempting lanes, stops a running ticket of lower priority for each
    /// waiting one that finds its lane full: the lowest priority first. Tickets
    /// already asked to stop count as room made for the first waiting ones. A
    /// ticket runs for the lane's `holdOff` before it can be stopped, so a page
    /// that asks every 400 ms does not starve an import (`tick` stops it then).
    private mutating func preempt(now: Instant) -> [Action] {
        guard lanes.contains(where: { $0.policy.preempts && $0.waiting > $0.stopping }) else { return [] }
        var actions: [Action] = []
        for n in lanes.indices where lanes[n].policy.preempts && lanes[n].waiting > lanes[n].stopping {
            guard lanes[n].active >= lanes[n].limit else { continue }
            var room = lanes[n].stopping
            for ticket in queue {
                guard let e = entries[ticket], e.lane == n else { continue }
                if room > 0 {
                    room -= 1
                    continue
                }
                var victim: (ticket: Ticket, priority: Int)?
                for (t, o) in entries where o.lane == n && o.active && !o.stopping && o.preemptible {
                    let ran = o.startedAt.map { now - $0 } ?? .zero
                    guard o.priority < e.priority, ran >= lanes[n].policy.holdOff else { continue }
                    if victim == nil || o.priority < victim!.priority { victim = (t, o.priority) }
                }
                // The queue is in priority order: nothing below can stop anything either.
                guard let victim else { break }
                entries[victim.ticket]?.stopping = true
                lanes[n].stopping += 1
                actions.append(.preempt(victim.ticket))
            }
        }
        return actions
    }
}

/// How the engine treats one server's connections beyond its limit
/// (``Admission``): a one-connection card gets all three.
struct LanePolicy: Sendable, Hashable {
    /// A waiting ticket may stop a running preemptible one of lower priority.
    var preempts = false
    /// After a ticket above ``TransferPriority/bulk`` ends, lower priorities
    /// (below ``TransferPriority/browsing`` at most) wait this long for the next
    /// of its burst.
    var holdOff: Duration = .zero
    /// Close the lane's idle connections after this long without a transfer;
    /// nil: libcurl keeps them.
    var releaseIdleAfter: Duration?

    /// Nothing of the three: first come, first served, connections kept.
    init() {}

    init(preempts: Bool, holdOff: Duration, releaseIdleAfter: Duration?) {
        self.preempts = preempts
        self.holdOff = holdOff
        self.releaseIdleAfter = releaseIdleAfter
    }

    /// A one-connection card shared between a page and an import: the page's
    /// requests stop a download and go first, a burst keeps the card for 400 ms
    /// after its last request, and the connection is let go after 1.5 s of
    /// nothing, so another client (a second Ferry, the camera maker's app) gets in.
    static let oneConnectionCard = LanePolicy(
        preempts: true, holdOff: .milliseconds(400), releaseIdleAfter: .milliseconds(1500))
}
