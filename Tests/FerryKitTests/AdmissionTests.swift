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
    /// ticket ends exactly once (started then ended, or unstarted), and a watcher's
    /// waits and un-waits pair up.
    @Test func randomEventsKeepTheLimitsAndEndEveryTicketOnce() {
        var random = SeededRandom(seed: 27)
        for round in 0..<50 {
            let hosts = ["a", "b", "c"]
            var a = Admission<Int>(total: 3, perHost: 2, hostLimits: ["c": 1])
            var laneOf: [Int: String] = [:]
            var active = Set<Int>()
            var ended = Set<Int>()
            var told: [Int: Int] = [:]
            var next = 0
            func apply(_ actions: [A]) {
                for action in actions {
                    switch action {
                    case .start(let t):
                        #expect(!active.contains(t) && !ended.contains(t), "round \(round): \(t) started twice")
                        active.insert(t)
                    case .finishUnstarted(let t):
                        #expect(!active.contains(t) && !ended.contains(t))
                        ended.insert(t)
                    case .stop(let t):
                        #expect(active.contains(t))
                    case .wait(let t, let waits): told[t, default: 0] += waits ? 1 : -1
                    case .lowered: break
                    }
                }
                #expect(active.count <= a.total)
                for h in hosts {
                    #expect(active.filter { laneOf[$0] == h }.count <= a.limit(of: h), "round \(round)")
                }
            }
            for _ in 0..<200 {
                switch random.next() % 4 {
                case 0, 1:
                    let h = hosts[Int(random.next() % 3)]
                    laneOf[next] = h
                    apply(a.submit(next, lane: h, watched: random.next() % 2 == 0))
                    next += 1
                case 2:
                    guard let t = active.randomElement(using: &random) else { continue }
                    active.remove(t)
                    ended.insert(t)
                    apply(a.end(t))
                default:
                    guard next > 0 else { continue }
                    let t = Int(random.next() % UInt64(next))
                    let actions = a.interrupt(t)
                    apply(actions)
                    if actions.contains(.stop(t)) {
                        active.remove(t)
                        ended.insert(t)
                        apply(a.end(t))
                    }
                }
            }
            // Drain: end everything running until nothing waits.
            while let t = active.first {
                active.remove(t)
                ended.insert(t)
                apply(a.end(t))
            }
            #expect(a.isEmpty, "round \(round)")
            #expect(ended.count == next, "round \(round): \(ended.count) of \(next) ended")
            #expect(told.values.allSatisfy { $0 == 0 }, "round \(round): unpaired waits")
        }
    }
}
