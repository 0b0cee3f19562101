/// Which transfers may have a connection now: the engine's admission as a value,
/// fed events and answering with actions, so it is tested without sockets (as
/// async-http-client tests its connection pool).
///
/// Transfers (`Ticket`s) wait in one first-come queue. One starts when both the
/// total limit and its lane's limit have room; a lane is an opaque key, one per
/// server (`RemoteURL.hostKey`), so a FlashAir card (limit 1) never sees two
/// requests at once while other servers run several. The engine (`CurlEngine`)
/// turns the actions into libcurl calls; nothing here knows a protocol.
///
/// Events and what they answer:
///
/// | event | answer |
/// |---|---|
/// | `submit` | `.start` when there is room; else, for a watched ticket, `.wait(true)`; `.finishUnstarted` when it was interrupted before it arrived |
/// | `interrupt` of a waiting ticket | `.wait(false)` if told, `.finishUnstarted`; an active one: `.stop` (the engine stops it and reports `end`) |
/// | `end` | the oldest waiting tickets that now have room: `.wait(false)` if told, `.start` |
/// | `end(refusedMore: true)` | as `end`, after holding its lane to the connections still working (`.lowered`) |
/// | `setLimits` | as `end`, for every lane whose limit changed |
struct Admission<Ticket: Hashable & Sendable>: Sendable {
    /// What the engine is to do.
    enum Action: Hashable, Sendable {
        /// Give the ticket its connection (add it to libcurl).
        case start(Ticket)
        /// End the ticket without starting it: it was interrupted while waiting.
        case finishUnstarted(Ticket)
        /// Stop the running ticket (remove it from libcurl); report `end` after.
        case stop(Ticket)
        /// Tell the ticket's watcher it waits for a connection (true), or no longer does.
        case wait(Ticket, Bool)
        /// A lane's limit was lowered to what worked (`end(refusedMore:)`): keep it.
        case lowered(lane: String, to: Int)
    }

    /// What is known of one ticket.
    private struct Entry {
        var lane: Int
        var watched: Bool
        var told = false
        var active = false
    }

    private(set) var total: Int
    private(set) var perHost: Int
    private var hostLimits: [String: Int]
    /// Lane keys numbered on first sight: admission compares integers, not
    /// strings (a thousand queued files made string lookups 14% of the
    /// instructions; bench/RESULTS.md).
    private var laneNumber: [String: Int] = [:]
    private var laneKey: [String] = []
    private var activeIn: [Int] = []
    private var waitingIn: [Int] = []
    private var limitOf: [Int] = []
    private var entries: [Ticket: Entry] = [:]
    /// Waiting tickets, oldest first.
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
    func limit(of lane: String) -> Int { hostLimits[lane] ?? perHost }

    // MARK: Events

    /// A ticket arrived for `lane`. `watched`: someone is to hear that it waits;
    /// `interrupted`: it was interrupted before it arrived (a cancelled task).
    mutating func submit(_ ticket: Ticket, lane: String, watched: Bool, interrupted: Bool = false) -> [Action] {
        submit([(ticket, lane, watched, interrupted)])
    }

    /// Several tickets arrived at once: admitted in their order, then the ones
    /// still waiting told so (one pass over the queue, not one per ticket).
    mutating func submit(_ tickets: [(ticket: Ticket, lane: String, watched: Bool, interrupted: Bool)]) -> [Action] {
        var actions: [Action] = []
        var arrived: [Ticket] = []
        for t in tickets {
            if t.interrupted {
                actions.append(.finishUnstarted(t.ticket))
                continue
            }
            let n = number(of: t.lane)
            entries[t.ticket] = Entry(lane: n, watched: t.watched)
            queue.append(t.ticket)
            waitingIn[n] += 1
            arrived.append(t.ticket)
        }
        actions += admit()
        for ticket in arrived {
            guard let e = entries[ticket], e.watched, !e.active else { continue }
            entries[ticket]?.told = true
            actions.append(.wait(ticket, true))
        }
        return actions
    }

    /// The ticket is to stop: a waiting one ends unstarted, a running one is
    /// stopped by the engine, which then reports `end`. Unknown tickets (not yet
    /// arrived, or ended) need nothing: one that arrives later says so itself.
    mutating func interrupt(_ ticket: Ticket) -> [Action] {
        guard let e = entries[ticket] else { return [] }
        if e.active { return [.stop(ticket)] }
        entries[ticket] = nil
        waitingIn[e.lane] -= 1
        if let i = queue.firstIndex(of: ticket) { queue.remove(at: i) }
        var actions: [Action] = []
        if e.told { actions.append(.wait(ticket, false)) }
        actions.append(.finishUnstarted(ticket))
        return actions
    }

    /// A running ticket ended (finished, failed or stopped). `refusedMore`: the
    /// server turned its connection away for how many this client has (FTP's
    /// `421` at login); its lane is then held to the connections still working,
    /// never below one, so the rest wait instead of being refused in a loop.
    mutating func end(_ ticket: Ticket, refusedMore: Bool = false) -> [Action] {
        guard let e = entries.removeValue(forKey: ticket) else { return [] }
        var actions: [Action] = []
        if e.active {
            activeIn[e.lane] -= 1
            activeCount -= 1
        } else {
            waitingIn[e.lane] -= 1
            if let i = queue.firstIndex(of: ticket) { queue.remove(at: i) }
            if e.told { actions.append(.wait(ticket, false)) }
        }
        if refusedMore {
            let working = activeIn[e.lane]
            if working > 0, working < limitOf[e.lane] {
                let key = laneKey[e.lane]
                hostLimits[key] = working
                limitOf[e.lane] = working
                actions.append(.lowered(lane: key, to: working))
            }
        }
        return actions + admit()
    }

    /// New limits: in total, per lane by default, and for some lanes.
    mutating func setLimits(total: Int, perHost: Int, hostLimits: [String: Int]) -> [Action] {
        self.total = max(1, total)
        self.perHost = max(1, perHost)
        self.hostLimits = hostLimits.mapValues { max(1, $0) }
        for n in limitOf.indices { limitOf[n] = limit(of: laneKey[n]) }
        return admit()
    }

    // MARK: Admission

    private mutating func number(of lane: String) -> Int {
        if let n = laneNumber[lane] { return n }
        let n = laneKey.count
        laneNumber[lane] = n
        laneKey.append(lane)
        activeIn.append(0)
        waitingIn.append(0)
        limitOf.append(limit(of: lane))
        return n
    }

    /// Starts waiting tickets, oldest first, as far as the limits allow. Stops
    /// as soon as no lane has both a waiting ticket and room: 500 queued files
    /// for one server made every admission walk the whole queue to find that
    /// none could start (bench/RESULTS.md).
    private mutating func admit() -> [Action] {
        guard activeCount < total, !queue.isEmpty else { return [] }
        var open = 0
        for n in activeIn.indices where waitingIn[n] > 0 && activeIn[n] < limitOf[n] { open += 1 }
        var actions: [Action] = []
        var i = 0
        while open > 0 && i < queue.count && activeCount < total {
            let ticket = queue[i]
            guard var e = entries[ticket], activeIn[e.lane] < limitOf[e.lane] else {
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
            waitingIn[e.lane] -= 1
            activeIn[e.lane] += 1
            activeCount += 1
            actions.append(.start(ticket))
            if waitingIn[e.lane] == 0 || activeIn[e.lane] >= limitOf[e.lane] { open -= 1 }
        }
        return actions
    }
}
