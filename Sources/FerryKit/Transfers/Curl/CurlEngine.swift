import CCurl
import Foundation
import Synchronization

/// The one transfer engine: a libcurl multi handle driven by one thread.
///
/// Jobs wait in a queue ordered by their priority (``TransferPriority``, taken
/// from the submitting task) until both the global limit and their host's limit
/// allow them to run, so a FlashAir card (limit 1) never sees two requests at once
/// while other servers run several; a host's `LanePolicy` adds preemption, a
/// hold-off and the release of idle connections (`Admission`). The multi handle
/// keeps idle connections for reuse.
final class CurlEngine: Sendable {
    /// Connection limits.
    struct Limits: Sendable {
        /// At most this many transfers run at once, over all servers.
        var total: Int = 16
        /// Default per-server limit; `setHostLimit` overrides it for one server.
        var perHost: Int = 6
        /// A web server whose answers come from far away gets twice `perHost`
        /// (`RoundTripWidth`), unless it has a limit of its own.
        var widensFarServers = false
    }

    /// The process-wide engine that every backend uses unless given another.
    static let shared = CurlEngine()

    fileprivate struct Inbox {
        var submitted: [CurlJob] = []
        var interrupted: [CurlJob] = []
        /// Jobs whose `raisedTo` went up.
        var raised: [CurlJob] = []
        var limits: Limits
        var hostLimits: [String: Int] = [:]
        var policies: [String: LanePolicy] = [:]
        /// Running jobs stopped for one of higher priority, by host and the stopped job's priority.
        var preempted: [String: [TransferPriority: Int]] = [:]
        /// Counts changes of `limits` and `hostLimits`, so the engine thread
        /// takes them only when they changed.
        var limitsVersion = 0
        /// Set when the engine is released: the thread ends once idle.
        var closed = false
        /// Set by the engine thread when it found nothing to do and is about to
        /// wait in `curl_multi_poll`: only then does a hand-over need a
        /// `curl_multi_wakeup` (a write to libcurl's wake-up socket). A thousand
        /// small files made two thousand wake-ups while the thread was busy anyway.
        var idle = false

        /// Marks the engine busy and returns whether it must be woken.
        mutating func takeWake() -> Bool {
            defer { idle = false }
            return idle
        }
    }

    /// Guards what other threads hand to the engine thread. Shared with the
    /// engine thread, which outlives the engine object until its jobs are done.
    /// Only the engine thread touches the multi handle, except `curl_multi_wakeup`,
    /// which libcurl documents as thread-safe.
    private let inbox: Shared

    /// The multi handle plus the inbox, shared by the engine object and its thread.
    fileprivate final class Shared: @unchecked Sendable {
        // Safe: `raw` is used from the engine thread only, plus curl_multi_wakeup
        // (thread-safe); `state` is a Mutex.
        let raw: UnsafeMutableRawPointer
        let state: Mutex<Inbox>
        init(limits: Limits) {
            _ = curlGlobalInit
            raw = curl_multi_init()!
            // Keep enough idle connections for reuse across many small files.
            _ = ferry_curl_multi_setopt_long(raw, CURLMOPT_MAXCONNECTS, 64)
            state = Mutex(Inbox(limits: limits))
        }
        func withLock<T>(_ body: (inout Inbox) -> T) -> T { state.withLock { body(&$0) } }
    }

    init(limits: Limits = Limits()) {
        inbox = Shared(limits: limits)
        let loop = EngineLoop(shared: inbox)
        let thread = Thread {
            Thread.current.threadDictionary[CurlEngine.threadName] = true
            loop.run()
        }
        thread.name = CurlEngine.threadName
        thread.start()
    }

    deinit {
        hand { $0.closed = true }
    }

    /// Changes what the engine thread sees, waking it when it waits.
    private func hand(_ change: (inout Inbox) -> Void) {
        let wake = inbox.withLock { box in
            change(&box)
            return box.takeWake()
        }
        if wake { curl_multi_wakeup(inbox.raw) }
    }

    /// Sets the connection limit for one server (`RemoteURL.hostKey`).
    func setHostLimit(_ key: String, _ limit: Int) {
        hand {
            $0.hostLimits[key] = max(1, limit)
            $0.limitsVersion += 1
        }
    }

    /// Sets how one server's connections are shared beyond its limit (`LanePolicy`).
    func setHostPolicy(_ key: String, _ policy: LanePolicy) {
        hand {
            $0.policies[key] = policy
            $0.limitsVersion += 1
        }
    }

    /// How many running jobs of `key` at `priority` were stopped so far for one
    /// of higher priority (`LanePolicy/preempts`); each resumed where it stopped.
    func preemptions(of key: String, at priority: TransferPriority) -> Int {
        inbox.withLock { $0.preempted[key]?[priority] ?? 0 }
    }

    /// Changes the global limits.
    func setLimits(_ limits: Limits) {
        hand {
            $0.limits = limits
            $0.limitsVersion += 1
        }
    }

    /// Runs a job to completion. Cancelling the calling task interrupts it.
    func perform(_ job: CurlJob) async -> CurlCompletion {
        let settings = RequestSettings.current
        if !settings.isEmpty { job.apply(settings) }
        let completion = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<CurlCompletion, Never>) in
                job.continuation = c
                job.waitObserver = ConnectionWait.observer
                job.priority = TransferPriority.current
                hand { $0.submitted.append(job) }
            }
        } onCancel: {
            interrupt(job)
        }
        // Pairs with the store in EngineLoop.finish (see CurlJob.handedOver).
        _ = job.handedOver.load(ordering: .acquiring)
        return completion
    }

    /// The name of every engine thread, and its mark in the thread's dictionary
    /// (a name alone is not reliable: Foundation on Linux may report another).
    static let threadName = "ferry.curl-engine"

    /// Whether the calling thread is an engine thread.
    static var onEngineThread: Bool { Thread.current.threadDictionary[threadName] as? Bool == true }

    /// Traps in debug builds unless called on an engine thread: job callbacks and
    /// everything they touch (a download's `PartFile` during an attempt) are
    /// confined to it, as swift-nio's `assertInEventLoop` checks for its loops.
    /// Compiled out of release builds.
    static func assertOnEngineThread(file: StaticString = #fileID, line: UInt = #line) {
        assert(onEngineThread, "must run on the engine thread", file: file, line: line)
    }

    /// Raises a job's priority to `priority`, never lowering it, whether it waits,
    /// runs or has not arrived yet (`Admission.raise`).
    func raise(_ job: CurlJob, to priority: TransferPriority) {
        var seen = job.raisedTo.load(ordering: .relaxed)
        while seen < priority.rawValue {
            let (exchanged, original) = job.raisedTo.compareExchange(
                expected: seen, desired: priority.rawValue, ordering: .sequentiallyConsistent)
            if exchanged { break }
            seen = original
        }
        hand { $0.raised.append(job) }
    }

    /// Stops a job at once (pause, cancel): it completes with `interrupted == true`.
    func interrupt(_ job: CurlJob) {
        job.interruptRequested.store(true, ordering: .sequentiallyConsistent)
        hand { $0.interrupted.append(job) }
    }

}

/// The engine thread's state. Confined to that thread (never shared), which is
/// why it may hold plain mutable dictionaries. Which job gets a connection is
/// `Admission`'s decision; this loop turns its actions into libcurl calls.
private final class EngineLoop: @unchecked Sendable {
    // Safe: created before the thread starts, then used only by that thread.
    let shared: CurlEngine.Shared
    let multi: UnsafeMutableRawPointer
    var admission = Admission<ObjectIdentifier>()
    /// Every job waiting or running, by its ticket.
    var jobs: [ObjectIdentifier: CurlJob] = [:]
    /// Running jobs by their easy handle (what `curl_multi_info_read` names).
    var active: [UnsafeMutableRawPointer: CurlJob] = [:]
    var limitsVersion = -1
    var policies: [String: LanePolicy] = [:]
    /// With `Limits.widensFarServers`: each web server's answer times.
    var widths: [String: RoundTripWidth] = [:]
    var widens = false
    var perHost = 6
    /// The lanes of jobs whose handle asks for one (`TLSSessionCache.lane`),
    /// and the lane each running such job holds.
    var lanes = ConnectionLanes()
    var laneOf: [ObjectIdentifier: Int] = [:]
    /// Whether an action of this turn started a job: libcurl is then driven again
    /// before the loop waits.
    var started = false

    init(shared: CurlEngine.Shared) {
        self.shared = shared
        multi = shared.raw
    }

    func run() {
        var running: Int32 = 0
        while true {
            let inbox = shared.withLock { box in
                defer {
                    box.submitted.removeAll()
                    box.interrupted.removeAll()
                    box.raised.removeAll()
                    box.idle = false
                }
                return (
                    submitted: box.submitted, interrupted: box.interrupted, raised: box.raised, limits: box.limits,
                    hostLimits: box.hostLimits, limitsVersion: box.limitsVersion, closed: box.closed,
                    policies: box.policies
                )
            }
            if inbox.closed && inbox.submitted.isEmpty && admission.isEmpty {
                curl_multi_cleanup(multi)
                lanes.close()
                return
            }
            started = false
            let now = ContinuousClock.now
            if inbox.limitsVersion != limitsVersion {
                limitsVersion = inbox.limitsVersion
                policies = inbox.policies
                if widens != inbox.limits.widensFarServers || perHost != inbox.limits.perHost {
                    // The widths were worked out for the old limits: start over.
                    for lane in widths.keys { perform(admission.widen(lane, to: nil, now: now)) }
                    widths.removeAll()
                    (widens, perHost) = (inbox.limits.widensFarServers, inbox.limits.perHost)
                }
                perform(admission.setPolicies(inbox.policies, now: now))
                perform(
                    admission.setLimits(
                        total: inbox.limits.total, perHost: inbox.limits.perHost, hostLimits: inbox.hostLimits,
                        now: now))
            }
            if let due = admission.nextDeadline, due <= now { perform(admission.tick(now: now)) }
            // Interrupts first: one for a job that arrives in this same turn finds
            // nothing, and the job's own flag ends it unstarted when it arrives.
            for job in inbox.interrupted { perform(admission.interrupt(ObjectIdentifier(job), now: now)) }
            if !inbox.submitted.isEmpty {
                for job in inbox.submitted {
                    jobs[ObjectIdentifier(job)] = job
                    job.takeRaise()
                }
                perform(
                    admission.submit(
                        inbox.submitted.map { job in
                            Admission.Arrival(
                                ticket: ObjectIdentifier(job), lane: job.hostKey, watched: job.waitObserver != nil,
                                interrupted: job.interruptRequested.load(ordering: .relaxed), priority: job.priority,
                                preemptible: job.yieldsToHigherPriority)
                        }, now: now))
            }
            // After the arrivals: a raise handed over with its job finds it.
            for job in inbox.raised where jobs[ObjectIdentifier(job)] === job {
                job.takeRaise()
                perform(admission.raise(ObjectIdentifier(job), to: job.priority, now: now))
            }
            curl_multi_perform(multi, &running)
            started = false
            while true {
                var left: Int32 = 0
                guard let msg = curl_multi_info_read(multi, &left) else { break }
                guard msg.pointee.msg == CURLMSG_DONE, let easy = msg.pointee.easy_handle,
                    let job = active[easy]
                else { continue }
                let code = CurlCode(msg.pointee.data.result)
                end(job, code: code, interrupted: job.interruptRequested.load(ordering: .relaxed))
            }
            if started { continue }
            if drivesAgain() { continue }
            // Sleep only when nothing arrived meanwhile; from here until the next
            // take at the top a hand-over wakes us.
            let done = admission.isEmpty
            let sleep = shared.withLock { box -> Bool in
                box.idle = box.submitted.isEmpty && box.interrupted.isEmpty && !(box.closed && done)
                return box.idle
            }
            guard sleep else { continue }
            // At most a second, and not past admission's next deadline (a hold-off, an idle release).
            var timeout: Int32 = 1000
            if let due = admission.nextDeadline {
                let left = (due - ContinuousClock.now) / .milliseconds(1)
                timeout = Int32(max(0, min(1000, left.rounded(.up))))
            }
            curl_multi_poll(multi, nil, 0, timeout, nil)
        }
    }

    /// Carries out what admission decided.
    private func perform(_ actions: [Admission<ObjectIdentifier>.Action]) {
        CurlEngine.assertOnEngineThread()
        for action in actions {
            switch action {
            case .start(let ticket):
                guard let job = jobs[ticket] else { continue }
                if case .lane(let key) = job.easy.tlsSessionCache {
                    laneOf[ticket] = lanes.assign(key, fresh: job.freshLane, to: job.easy)
                }
                // Its connection is to be let go when idle: know its sockets.
                if policies[job.hostKey]?.releaseIdleAfter != nil { IdleSockets.track(job) }
                active[job.easy.raw] = job
                curl_multi_add_handle(multi, job.easy.raw)
                started = true
            case .finishUnstarted(let ticket):
                guard let job = jobs.removeValue(forKey: ticket) else { continue }
                finish(job, code: .abortedByCallback, interrupted: true)
            case .stop(let ticket):
                guard let job = jobs[ticket], active[job.easy.raw] === job else { continue }
                end(job, code: .abortedByCallback, interrupted: true)
            case .preempt(let ticket):
                guard let job = jobs[ticket], active[job.easy.raw] === job else { continue }
                shared.withLock { $0.preempted[job.hostKey, default: [:]][job.priority, default: 0] += 1 }
                end(job, code: .abortedByCallback, interrupted: true)
            case .closeIdle(let lane):
                IdleSockets.shutDown(lane)
            case .wait(let ticket, let waits):
                jobs[ticket]?.waitObserver?.connectionWait(waits)
            case .lowered(let lane, let limit):
                // Kept where limits live, so a later change of limits keeps it.
                shared.withLock { $0.hostLimits[lane] = limit }
            }
        }
    }

    /// A running job left libcurl: finished, failed, or stopped.
    private func end(_ job: CurlJob, code: CurlCode, interrupted: Bool) {
        let ticket = ObjectIdentifier(job)
        curl_multi_remove_handle(multi, job.easy.raw)
        active[job.easy.raw] = nil
        if let lane = laneOf.removeValue(forKey: ticket), case .lane(let key) = job.easy.tlsSessionCache {
            lanes.release(key, lane)
        }
        jobs[ticket] = nil
        if widens && code == .ok && !interrupted { measureRoundTrip(job) }
        let refused = finish(job, code: code, interrupted: interrupted)
        perform(admission.end(ticket, refusedMore: refused, now: .now))
    }

    /// A finished web download's time to its first byte, for its server's
    /// width (`RoundTripWidth`); admission hears of a change of width.
    private func measureRoundTrip(_ job: CurlJob) {
        let easy = job.easy
        guard easy.info(large: CURLINFO_SIZE_UPLOAD_T) == 0,
            let scheme = easy.info(string: CURLINFO_SCHEME)?.lowercased(), scheme == "http" || scheme == "https"
        else { return }
        let sent = easy.info(large: CURLINFO_PRETRANSFER_TIME_T)
        let answered = easy.info(large: CURLINFO_STARTTRANSFER_TIME_T)
        guard sent > 0, answered >= sent else { return }
        var width = widths[job.hostKey] ?? RoundTripWidth(base: perHost, most: 2 * perHost)
        let before = width.width
        width.record(.microseconds(answered - sent))
        widths[job.hostKey] = width
        let after = width.width
        if after != before { perform(admission.widen(job.hostKey, to: after == perHost ? nil : after)) }
    }

    /// Whether a job asked to be driven again before the engine waits
    /// (`CurlJob.performAgain`); clears the requests.
    private func drivesAgain() -> Bool {
        var again = false
        for job in active.values where job.performAgain {
            job.performAgain = false
            again = true
        }
        return again
    }

    /// The job's last callbacks, then its completion to the awaiting task.
    /// Returns whether the server turned the job's connection away for how many
    /// this client has (`CurlJob.refusedForTooManyConnections`).
    @discardableResult
    private func finish(_ job: CurlJob, code: CurlCode, interrupted: Bool) -> Bool {
        CurlEngine.assertOnEngineThread()
        let completion = CurlCompletion(
            code: code, responseCode: job.easy.info(CURLINFO_RESPONSE_CODE),
            errorText: job.easy.errorText, interrupted: interrupted)
        job.didComplete(completion)
        job.didEnd()
        let refused = job.refusedForTooManyConnections
        let c = job.continuation
        job.continuation = nil
        job.handedOver.store(true, ordering: .releasing)
        if let c { job.handOver(completion, to: c) }
        return refused
    }
}

extension CurlJob {
    /// Takes a priority `CurlEngine.raise` asked for, on the engine thread.
    fileprivate func takeRaise() {
        let raised = raisedTo.load(ordering: .sequentiallyConsistent)
        if let p = TransferPriority(rawValue: raised), p > priority { priority = p }
    }
}
