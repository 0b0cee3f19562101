import FerryTestSupport
import Testing

@testable import FerryKit

/// The engine's admission (`Admission`) as a table of events and actions, without
/// sockets: which transfer gets a connection, who is told it waits, what ends
/// unstarted, and how a server's refusal lowers its limit.
@Suite struct AdmissionTests {
    typealias A = Admission<Int>.Action

    /// Only the starts among `actions`.
    static func starts(_ actions: [A]) -> [Int] {
        actions.compactMap { if case .start(let t) = $0 { t } else { nil } }
    }

    @Test func aCardGetsOneConnectionAndTheRestWaitInOrder() {
        var a = Admission<Int>(total: 16, perHost: 6, hostLimits: ["card": 1])
        #expect(a.submit(1, lane: "card", watched: false) == [.start(1)])
        #expect(a.submit(2, lane: "card", watched: true) == [.wait(2, true)])
        #expect(a.submit(3, lane: "card", watched: false) == [])
        #expect(a.waitingCount == 2 && a.activeCount == 1)
        // The first ends: the oldest waiting one starts, its watcher told first.
        #expect(a.end(1) == [.wait(2, false), .start(2)])
        #expect(a.end(2) == [.start(3)])
        #expect(a.end(3) == [])
        #expect(a.isEmpty)
    }

    @Test func otherServersRunBesideAFullOne() {
        var a = Admission<Int>(total: 16, perHost: 2)
        let first = a.submit([
            (1, "nas", false, false), (2, "nas", false, false), (3, "nas", true, false), (4, "web", true, false),
        ])
        // 1 and 2 start on the NAS, 3 waits behind them; the web server's 4 starts at once.
        #expect(first == [.start(1), .start(2), .start(4), .wait(3, true)])
        #expect(a.isActive(4) && !a.isActive(3))
    }

    @Test func theTotalLimitHoldsAcrossServers() {
        var a = Admission<Int>(total: 2, perHost: 6)
        #expect(
            Self.starts(a.submit([(1, "a", false, false), (2, "b", false, false), (3, "c", false, false)])) == [1, 2])
        // The next to start is the oldest waiting, whatever its server.
        #expect(a.end(2) == [.start(3)])
    }

    /// A far server's lane is widened (`RoundTripWidth`): the waiting start at
    /// once; narrowed back, the running finish and no new one starts until it
    /// has room. A host limit of its own (a card, a server that refused) wins.
    @Test func aWidenedLaneTakesMoreUnlessItHasALimitOfItsOwn() {
        var a = Admission<Int>(total: 16, perHost: 2, hostLimits: ["card": 1])
        #expect(Self.starts(a.submit((1...5).map { ($0, "far", false, false) })) == [1, 2])
        #expect(a.widen("far", to: 4) == [.start(3), .start(4)])
        #expect(a.limit(of: "far") == 4)
        #expect(a.widen("far", to: nil) == [])
        #expect(a.limit(of: "far") == 2)
        #expect(a.end(1) == [] && a.end(2) == [] && a.end(3) == [.start(5)])
        _ = a.submit(10, lane: "card", watched: false)
        #expect(a.widen("card", to: 4) == [])
        #expect(a.limit(of: "card") == 1)
    }

    @Test func aWaitingTicketInterruptedEndsUnstartedAndTheWatcherHears() {
        var a = Admission<Int>(total: 16, perHost: 1)
        _ = a.submit(1, lane: "h", watched: false)
        _ = a.submit(2, lane: "h", watched: true)
        _ = a.submit(3, lane: "h", watched: false)
        #expect(a.interrupt(2) == [.wait(2, false), .finishUnstarted(2)])
        #expect(!a.contains(2))
        // It never starts later: 3 is next.
        #expect(a.end(1) == [.start(3)])
    }

    @Test func aRunningTicketInterruptedIsStoppedThenEnds() {
        var a = Admission<Int>(total: 16, perHost: 1)
        _ = a.submit(1, lane: "h", watched: false)
        _ = a.submit(2, lane: "h", watched: false)
        #expect(a.interrupt(1) == [.stop(1)])
        #expect(a.isActive(1))  // until the engine has removed it
        #expect(a.end(1) == [.start(2)])
    }

    @Test func anInterruptBeforeItsTicketArrivesEndsItOnArrival() {
        var a = Admission<Int>()
        // The interrupt came through first (a task cancelled before it submitted).
        #expect(a.interrupt(7) == [])
        #expect(a.submit(7, lane: "h", watched: true, interrupted: true) == [.finishUnstarted(7)])
        #expect(a.isEmpty)
        // An interrupt after the end needs nothing either.
        _ = a.submit(8, lane: "h", watched: false)
        _ = a.end(8)
        #expect(a.interrupt(8) == [])
        #expect(a.end(8) == [])
    }

    @Test func aRefusalHoldsTheServerToWhatWorksNeverBelowOne() {
        var a = Admission<Int>(total: 16, perHost: 3)
        #expect(
            Self.starts(a.submit([(1, "ftp", false, false), (2, "ftp", false, false), (3, "ftp", false, false)])) == [
                1, 2, 3,
            ])
        _ = a.submit(4, lane: "ftp", watched: false)
        // 3 was turned away (421 at login) while 1 and 2 work: the limit becomes 2,
        // so 4 waits instead of being refused too.
        #expect(a.end(3, refusedMore: true) == [.lowered(lane: "ftp", to: 2)])
        #expect(a.limit(of: "ftp") == 2 && !a.isActive(4))
        #expect(a.end(1) == [.start(4)])
        // Refused with nothing else working: the limit stays (never 0).
        var b = Admission<Int>(total: 16, perHost: 4)
        _ = b.submit(1, lane: "ftp", watched: false)
        #expect(b.end(1, refusedMore: true) == [])
        #expect(b.limit(of: "ftp") == 4)
    }

    @Test func raisingALimitStartsWhatWaitsLoweringStopsNothing() {
        var a = Admission<Int>(total: 16, perHost: 1)
        _ = a.submit([(1, "h", false, false), (2, "h", true, false), (3, "h", false, false)])
        #expect(a.setLimits(total: 16, perHost: 1, hostLimits: ["h": 3]) == [.wait(2, false), .start(2), .start(3)])
        // Lowered below what runs: the running keep going, nothing new starts.
        _ = a.submit(4, lane: "h", watched: false)
        #expect(a.setLimits(total: 16, perHost: 1, hostLimits: ["h": 1]) == [])
        #expect(a.end(1) == [] && a.end(2) == [])
        #expect(a.end(3) == [.start(4)])
        // Limits below one count as one.
        #expect(a.setLimits(total: 0, perHost: 0, hostLimits: ["h": 0]).isEmpty)
        #expect(a.limit(of: "h") == 1 && a.total == 1)
    }

    /// Random events against a model of the rules: the limits always hold, every
    /// ticket ends exactly once (started then ended, or unstarted), a watcher's
    /// waits and un-waits pair up, and only a preemptible ticket below a waiting
    /// one of its lane is preempted (lane "c" is a card, with `LanePolicy.oneConnectionCard`).
    @Test func randomEventsKeepTheLimitsAndEndEveryTicketOnce() {
        var random = SeededRandom(seed: 27)
        for round in 0..<50 {
            let hosts = ["a", "b", "c"]
            var a = Admission<Int>(total: 3, perHost: 2, hostLimits: ["c": 1])
            var now = ContinuousClock.now
            _ = a.setPolicies(["c": .oneConnectionCard], now: now)
            var laneOf: [Int: String] = [:]
            var priorityOf: [Int: TransferPriority] = [:]
            var preemptible = Set<Int>()
            var waiting = Set<Int>()
            var active = Set<Int>()
            var ended = Set<Int>()
            var told: [Int: Int] = [:]
            var toStop: [Int] = []
            var next = 0
            func apply(_ actions: [A]) {
                for action in actions {
                    switch action {
                    case .start(let t):
                        #expect(!active.contains(t) && !ended.contains(t), "round \(round): \(t) started twice")
                        active.insert(t)
                        waiting.remove(t)
                    case .finishUnstarted(let t):
                        #expect(!active.contains(t) && !ended.contains(t))
                        ended.insert(t)
                        waiting.remove(t)
                    case .stop(let t):
                        #expect(active.contains(t))
                    case .preempt(let t):
                        #expect(active.contains(t) && preemptible.contains(t) && laneOf[t] == "c")
                        let above = waiting.contains { laneOf[$0] == "c" && priorityOf[$0]! > priorityOf[t]! }
                        #expect(above, "round \(round): \(t) preempted with nothing above it waiting")
                        toStop.append(t)
                    case .wait(let t, let waits): told[t, default: 0] += waits ? 1 : -1
                    case .lowered, .closeIdle: break
                    }
                }
                #expect(active.count <= a.total)
                for h in hosts {
                    #expect(active.filter { laneOf[$0] == h }.count <= a.limit(of: h), "round \(round)")
                }
            }
            for _ in 0..<200 {
                now += .milliseconds(Int(random.next() % 300))
                apply(a.tick(now: now))
                // Preempted tickets end (the engine removes them), as stopped ones do.
                while let t = toStop.popLast() {
                    active.remove(t)
                    ended.insert(t)
                    apply(a.end(t, now: now))
                }
                switch random.next() % 4 {
                case 0, 1:
                    let h = hosts[Int(random.next() % 3)]
                    laneOf[next] = h
                    let p = TransferPriority.allCases[Int(random.next() % 4)]
                    priorityOf[next] = p
                    let canStop = random.next() % 2 == 0
                    if canStop { preemptible.insert(next) }
                    waiting.insert(next)
                    apply(
                        a.submit(
                            next, lane: h, watched: random.next() % 2 == 0, priority: p, preemptible: canStop,
                            now: now))
                    next += 1
                case 2:
                    guard let t = active.randomElement(using: &random) else { continue }
                    active.remove(t)
                    ended.insert(t)
                    apply(a.end(t, now: now))
                default:
                    guard next > 0 else { continue }
                    let t = Int(random.next() % UInt64(next))
                    let actions = a.interrupt(t, now: now)
                    apply(actions)
                    if actions.contains(.stop(t)) {
                        toStop.removeAll { $0 == t }
                        active.remove(t)
                        ended.insert(t)
                        apply(a.end(t, now: now))
                    }
                }
            }
            // Drain: end everything running until nothing waits (hold-offs run out as time passes).
            while !a.isEmpty {
                now += .milliseconds(500)
                apply(a.tick(now: now))
                toStop = []
                if let t = active.first {
                    active.remove(t)
                    ended.insert(t)
                    apply(a.end(t, now: now))
                }
            }
            #expect(a.isEmpty, "round \(round)")
            #expect(ended.count == next, "round \(round): \(ended.count) of \(next) ended")
            #expect(told.values.allSatisfy { $0 == 0 }, "round \(round): unpaired waits")
        }
    }

    // MARK: Priorities (issue 27 item 2)

    static let card = ["card": LanePolicy.oneConnectionCard]

    /// Several tickets of one lane, as arrivals.
    static func arrivals(_ list: [(Int, TransferPriority, Bool)], lane: String = "card") -> [Admission<Int>.Arrival] {
        list.map { Admission<Int>.Arrival(ticket: $0.0, lane: lane, watched: false, priority: $0.1, preemptible: $0.2) }
    }

    @Test func waitingTicketsStartByPriorityThenInOrder() {
        var a = Admission<Int>(total: 16, perHost: 1)
        let t0 = ContinuousClock.now
        _ = a.submit(Self.arrivals([(1, .bulk, false)], lane: "h"), now: t0)
        _ = a.submit(
            Self.arrivals(
                [
                    (2, .bulk, false), (3, .prefetch, false), (4, .interactive, false), (5, .bulk, false),
                    (6, .interactive, false), (7, .browsing, false),
                ], lane: "h"), now: t0)
        #expect(a.waitingOrder == [4, 6, 7, 3, 2, 5])
        // Without a policy nothing is stopped: the running bulk ticket ends first.
        #expect(a.end(1, now: t0) == [.start(4)])
        #expect(a.end(4, now: t0) == [.start(6)])
        #expect(a.end(6, now: t0) == [.start(7)])
        #expect(a.end(7, now: t0) == [.start(3)])
        #expect(a.end(3, now: t0) == [.start(2)])
    }

    @Test func onACardThePagePreemptsABulkDownloadWhichResumesAfterTheHoldOff() {
        var a = Admission<Int>(total: 16, perHost: 6, hostLimits: ["card": 1])
        let t0 = ContinuousClock.now
        #expect(a.setPolicies(Self.card, now: t0) == [])
        // An import's download has the card.
        #expect(a.submit(Self.arrivals([(1, .bulk, true)]), now: t0 - .seconds(1)) == [.start(1)])
        // A listing arrives: it waits (told), and the download is stopped for it.
        let listing = a.submit(
            [Admission<Int>.Arrival(ticket: 2, lane: "card", watched: true, priority: .interactive)], now: t0)
        #expect(listing == [.wait(2, true), .preempt(1)])
        // Another listing arrives meanwhile: the stop already makes room for the first, nothing more stops.
        #expect(a.submit(Self.arrivals([(3, .interactive, false)]), now: t0) == [])
        // The download left libcurl: the listing gets the card; the download tries again from where it stopped.
        #expect(a.end(1, now: t0 + .milliseconds(5)) == [.wait(2, false), .start(2)])
        #expect(a.submit(Self.arrivals([(4, .bulk, true)]), now: t0 + .milliseconds(6)) == [])
        #expect(a.end(2, now: t0 + .milliseconds(40)) == [.start(3)])
        // The burst's last request ends: the download waits out the hold-off (400 ms) ...
        let end = t0 + .milliseconds(80)
        #expect(a.end(3, now: end) == [])
        #expect(a.nextDeadline == end + .milliseconds(400))
        #expect(a.tick(now: end + .milliseconds(399)) == [])
        // ... a thumbnail of the same burst passes at once and holds the card again ...
        #expect(a.submit(Self.arrivals([(5, .browsing, false)]), now: end + .milliseconds(100)) == [.start(5)])
        let after = end + .milliseconds(150)
        #expect(a.end(5, now: after) == [])
        #expect(a.tick(now: end + .milliseconds(401)) == [])
        // ... and then resumes.
        #expect(a.tick(now: after + .milliseconds(400)) == [.start(4)])
        // A hold-off that runs out while the lane is full leaves no deadline behind (the engine
        // would poll without waiting until the lane frees).
        #expect(
            a.submit(Self.arrivals([(6, .interactive, false), (7, .bulk, true)]), now: after + .seconds(1)) == [
                .preempt(4)
            ])
        #expect(a.end(4, now: after + .seconds(1)) == [.start(6)])
        #expect(a.end(6, now: after + .seconds(2)) == [])
        #expect(a.submit(Self.arrivals([(8, .interactive, false)]), now: after + .seconds(2)) == [.start(8)])
        #expect(a.nextDeadline == after + .seconds(2) + .milliseconds(400))
        #expect(a.tick(now: after + .seconds(3)) == [])
        #expect(a.nextDeadline == nil)
    }

    @Test func aRaisedTicketMovesUpTheQueueAndIsNoLongerStoppedForLowerOnes() {
        var a = Admission<Int>(total: 16, perHost: 6, hostLimits: ["card": 1])
        let t0 = ContinuousClock.now
        _ = a.setPolicies(Self.card, now: t0)
        // The viewer's prefetch has the card; an import's download and another prefetch wait.
        #expect(a.submit(Self.arrivals([(1, .prefetch, true)]), now: t0 - .seconds(1)) == [.start(1)])
        #expect(a.submit(Self.arrivals([(2, .bulk, true), (3, .prefetch, true)]), now: t0) == [])
        #expect(a.waitingOrder == [3, 2])
        // A raise to the priority it has, or below, changes nothing; nor does an unknown ticket's.
        #expect(a.raise(1, to: .prefetch, now: t0) == [])
        #expect(a.raise(1, to: .bulk, now: t0) == [])
        #expect(a.raise(9, to: .interactive, now: t0) == [])
        // The person opens the photo being prefetched: a thumbnail no longer stops its download.
        #expect(a.raise(1, to: .interactive, now: t0) == [])
        #expect(a.submit(Self.arrivals([(4, .browsing, false)]), now: t0) == [])
        #expect(a.waitingOrder == [4, 3, 2])
        // A waiting ticket raised goes behind those already waiting at its new priority.
        #expect(a.raise(2, to: .browsing, now: t0) == [])
        #expect(a.waitingOrder == [4, 2, 3])
        // The raised download ends at its new priority: the lane is held for the page's burst.
        #expect(a.end(1, now: t0 + .milliseconds(1)) == [.start(4)])
        #expect(a.end(4, now: t0 + .milliseconds(2)) == [.start(2)])
        #expect(a.end(2, now: t0 + .milliseconds(3)) == [])
        #expect(a.tick(now: t0 + .milliseconds(403)) == [.start(3)])

        // Raised above the running download, a waiting one preempts it.
        var b = Admission<Int>(total: 16, perHost: 6, hostLimits: ["card": 1])
        _ = b.setPolicies(Self.card, now: t0)
        _ = b.submit(Self.arrivals([(1, .bulk, true)]), now: t0 - .seconds(1))
        #expect(b.submit(Self.arrivals([(2, .prefetch, true)]), now: t0) == [.preempt(1)])
        #expect(b.end(1, now: t0) == [.start(2)])
        #expect(b.submit(Self.arrivals([(3, .bulk, true)]), now: t0 + .seconds(1)) == [])
        #expect(b.raise(3, to: .interactive, now: t0 + .seconds(1)) == [.preempt(2)])
        #expect(b.end(2, now: t0 + .seconds(1)) == [.start(3)])

        // Raised, a ticket held back by a hold-off passes it.
        var c = Admission<Int>(total: 16, perHost: 6, hostLimits: ["card": 1])
        _ = c.setPolicies(Self.card, now: t0)
        _ = c.submit(Self.arrivals([(1, .interactive, false)]), now: t0)
        #expect(c.end(1, now: t0) == [])
        #expect(c.submit(Self.arrivals([(2, .prefetch, true)]), now: t0 + .milliseconds(10)) == [])
        #expect(c.raise(2, to: .browsing, now: t0 + .milliseconds(20)) == [.start(2)])
    }

    @Test func onlyLowerPreemptibleTicketsAreStoppedLowestFirst() {
        var a = Admission<Int>(total: 16, perHost: 6, hostLimits: ["card": 2])
        let t0 = ContinuousClock.now
        _ = a.setPolicies(Self.card, now: t0)
        // A prefetch download and a listing (not preemptible) have the card's two connections.
        #expect(
            a.submit(Self.arrivals([(1, .prefetch, true), (2, .bulk, false)]), now: t0 - .seconds(1)) == [
                .start(1), .start(2),
            ])
        // A bulk ticket never stops anything.
        #expect(a.submit(Self.arrivals([(3, .bulk, true)]), now: t0) == [])
        // A thumbnail stops the prefetch (the bulk listing cannot be stopped).
        #expect(a.submit(Self.arrivals([(4, .browsing, false)]), now: t0) == [.preempt(1)])
        // Equal priority never preempts.
        var b = Admission<Int>(total: 16, perHost: 6, hostLimits: ["card": 1])
        _ = b.setPolicies(Self.card, now: t0)
        _ = b.submit(Self.arrivals([(1, .interactive, true)]), now: t0 - .seconds(1))
        #expect(b.submit(Self.arrivals([(2, .interactive, true)]), now: t0) == [])
        // Of several below, the lowest goes.
        var c = Admission<Int>(total: 16, perHost: 6, hostLimits: ["card": 2])
        _ = c.setPolicies(Self.card, now: t0)
        _ = c.submit(Self.arrivals([(1, .prefetch, true), (2, .bulk, true)]), now: t0 - .seconds(1))
        #expect(c.submit(Self.arrivals([(3, .interactive, false)]), now: t0) == [.preempt(2)])
        #expect(c.submit(Self.arrivals([(4, .interactive, false)]), now: t0) == [.preempt(1)])
        #expect(c.submit(Self.arrivals([(5, .interactive, false)]), now: t0) == [])
    }

    @Test func withoutAPolicyNothingIsPreemptedHeldOrReleased() {
        var a = Admission<Int>(total: 16, perHost: 1)
        let t0 = ContinuousClock.now
        _ = a.submit(Self.arrivals([(1, .bulk, true)], lane: "nas"), now: t0)
        #expect(a.submit(Self.arrivals([(2, .interactive, false), (3, .bulk, true)], lane: "nas"), now: t0) == [])
        #expect(a.end(1, now: t0) == [.start(2)])
        // No hold-off: the bulk ticket starts as soon as the interactive one ends.
        #expect(a.end(2, now: t0) == [.start(3)])
        #expect(a.end(3, now: t0) == [])
        #expect(a.nextDeadline == nil)
        #expect(a.tick(now: t0 + .seconds(60)) == [])
    }

    @Test func anIdleCardLaneReleasesItsConnectionOnce() {
        var a = Admission<Int>(total: 16, perHost: 6, hostLimits: ["card": 1])
        let t0 = ContinuousClock.now
        _ = a.setPolicies(Self.card, now: t0)
        // Nothing ran yet: nothing to release.
        #expect(a.nextDeadline == nil)
        _ = a.submit(Self.arrivals([(1, .interactive, false)]), now: t0)
        #expect(a.end(1, now: t0 + .milliseconds(10)) == [])
        let due = t0 + .milliseconds(10) + .milliseconds(1500)
        #expect(a.nextDeadline == due)
        #expect(a.tick(now: due - .milliseconds(1)) == [])
        // The page asks again in time: the clock starts over from its end.
        _ = a.submit(Self.arrivals([(2, .interactive, false)]), now: due - .milliseconds(1))
        #expect(a.nextDeadline == nil)
        #expect(a.tick(now: due + .milliseconds(1)) == [])
        let ended = due + .milliseconds(20)
        _ = a.end(2, now: ended)
        #expect(a.tick(now: ended + .milliseconds(1500)) == [.closeIdle(lane: "card")])
        // Released once; the next request opens a new connection and the clock runs again after it.
        #expect(a.tick(now: ended + .seconds(10)) == [])
        #expect(a.nextDeadline == nil)
    }

    @Test func aPausedDownloadBeingStoppedIsNotPreemptedAgain() {
        var a = Admission<Int>(total: 16, perHost: 6, hostLimits: ["card": 1])
        let t0 = ContinuousClock.now
        _ = a.setPolicies(Self.card, now: t0)
        _ = a.submit(Self.arrivals([(1, .bulk, true)]), now: t0)
        // Paused by its owner: stopped once.
        #expect(a.interrupt(1, now: t0) == [.stop(1)])
        #expect(a.interrupt(1, now: t0) == [])
        // A page request meanwhile takes the room the stop makes; nothing else is stopped.
        #expect(a.submit(Self.arrivals([(2, .interactive, false)]), now: t0) == [])
        #expect(a.end(1, now: t0) == [.start(2)])
    }

    @Test func aDownloadJustStartedRunsItsHoldOffBeforeItIsStopped() {
        // A page that asks every 400 ms must not starve the import: each start gets 400 ms.
        var a = Admission<Int>(total: 16, perHost: 6, hostLimits: ["card": 1])
        let t0 = ContinuousClock.now
        _ = a.setPolicies(Self.card, now: t0)
        _ = a.submit(Self.arrivals([(1, .bulk, true)]), now: t0)
        #expect(a.submit(Self.arrivals([(2, .browsing, false)]), now: t0 + .milliseconds(100)) == [])
        #expect(a.nextDeadline == t0 + .milliseconds(400))
        #expect(a.tick(now: t0 + .milliseconds(399)) == [])
        #expect(a.tick(now: t0 + .milliseconds(400)) == [.preempt(1)])
    }
}
