import CCurl
import Foundation
import Synchronization

/// The one transfer engine: a libcurl multi handle driven by one thread.
///
/// Jobs wait in a FIFO until both the global limit and their host's limit allow
/// them to run, so a FlashAir card (limit 1) never sees two requests at once while
/// other servers run several. The multi handle keeps idle connections for reuse.
final class CurlEngine: Sendable {
    /// Connection limits.
    struct Limits: Sendable {
        /// At most this many transfers run at once, over all servers.
        var total: Int = 16
        /// Default per-server limit; `setHostLimit` overrides it for one server.
        var perHost: Int = 6
    }

    /// The process-wide engine that every backend uses unless given another.
    static let shared = CurlEngine()

    fileprivate struct Inbox {
        var submitted: [CurlJob] = []
        var interrupted: [CurlJob] = []
        var limits: Limits
        var hostLimits: [String: Int] = [:]
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

    /// Stops a job at once (pause, cancel): it completes with `interrupted == true`.
    func interrupt(_ job: CurlJob) {
        job.interruptRequested.store(true, ordering: .sequentiallyConsistent)
        hand { $0.interrupted.append(job) }
    }

}

/// The engine thread's state. Confined to that thread (never shared), which is
/// why it may hold plain mutable dictionaries.
private final class EngineLoop: @unchecked Sendable {
    // Safe: created before the thread starts, then used only by that thread.
    let shared: CurlEngine.Shared
    let multi: UnsafeMutableRawPointer
    var waiting: [CurlJob] = []
    var active: [UnsafeMutableRawPointer: CurlJob] = [:]
    var limits = CurlEngine.Limits()
    var hostLimits: [String: Int] = [:]
    var limitsVersion = -1
    /// Host keys numbered in order of first use, with each host's running jobs
    /// and limit by that number (`CurlJob.hostSlot`).
    var slotOfHost: [String: Int] = [:]
    var hostOfSlot: [String] = []
    var activeInSlot: [Int] = []
    var waitingInSlot: [Int] = []
    var limitOfSlot: [Int] = []
    /// Whether something happened that may let a waiting job start (a job
    /// arrived or ended, a limit changed). A thousand queued small files made
    /// every turn of the loop scan the whole queue with two string-keyed
    /// lookups per job: 14% of the process's instructions (callgrind,
    /// bench/RESULTS.md).
    var mayAdmit = false
    /// FTPS jobs' TLS session and connection caches (`FTPSessionShare`).
    var lanes = FTPSessionLanes()

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
                    box.idle = false
                }
                return (
                    submitted: box.submitted, interrupted: box.interrupted, limits: box.limits,
                    hostLimits: box.hostLimits, limitsVersion: box.limitsVersion, closed: box.closed
                )
            }
            if inbox.closed && inbox.submitted.isEmpty && waiting.isEmpty && active.isEmpty {
                curl_multi_cleanup(multi)
                lanes.close()
                return
            }
            if inbox.limitsVersion != limitsVersion {
                limitsVersion = inbox.limitsVersion
                limits = inbox.limits
                hostLimits = inbox.hostLimits
                for slot in limitOfSlot.indices { limitOfSlot[slot] = limit(for: hostOfSlot[slot]) }
                mayAdmit = true
            }
            for job in inbox.submitted {
                job.hostSlot = slot(for: job.hostKey)
                waitingInSlot[job.hostSlot] += 1
            }
            waiting.append(contentsOf: inbox.submitted)
            if !inbox.submitted.isEmpty { mayAdmit = true }
            for job in inbox.interrupted { interrupt(job) }
            // Jobs interrupted before they were admitted never start. An interrupt
            // always comes through the inbox, possibly before its job (a task
            // cancelled before it submitted), so look when either arrived.
            if !inbox.interrupted.isEmpty
                || inbox.submitted.contains(where: { $0.interruptRequested.load(ordering: .relaxed) }),
                waiting.contains(where: { $0.interruptRequested.load(ordering: .relaxed) })
            {
                // One pass decides which jobs go: a flag set between two passes
                // would drop a job without finishing it.
                var gone: [CurlJob] = []
                waiting.removeAll { job in
                    guard job.interruptRequested.load(ordering: .relaxed) else { return false }
                    gone.append(job)
                    return true
                }
                for job in gone { waitingInSlot[job.hostSlot] -= 1 }
                for job in gone { finish(job, code: .abortedByCallback, interrupted: true) }
            }
            admit()
            tellWaiting(inbox.submitted)
            curl_multi_perform(multi, &running)
            var finishedAny = false
            while true {
                var left: Int32 = 0
                guard let msg = curl_multi_info_read(multi, &left) else { break }
                guard msg.pointee.msg == CURLMSG_DONE, let easy = msg.pointee.easy_handle,
                    let job = active[easy]
                else { continue }
                let code = CurlCode(msg.pointee.data.result)
                remove(job)
                finish(job, code: code, interrupted: job.interruptRequested.load(ordering: .relaxed))
                finishedAny = true
            }
            if finishedAny && !waiting.isEmpty { continue }
            if drivesAgain() { continue }
            // Sleep only when nothing arrived meanwhile; from here until the next
            // take at the top a hand-over wakes us.
            let done = waiting.isEmpty && active.isEmpty
            let sleep = shared.withLock { box -> Bool in
                box.idle = box.submitted.isEmpty && box.interrupted.isEmpty && !(box.closed && done)
                return box.idle
            }
            guard sleep else { continue }
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
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

    private func limit(for host: String) -> Int {
        hostLimits[host] ?? limits.perHost
    }

    /// The number of a host key, given on first sight.
    private func slot(for host: String) -> Int {
        if let slot = slotOfHost[host] { return slot }
        let slot = hostOfSlot.count
        slotOfHost[host] = slot
        hostOfSlot.append(host)
        activeInSlot.append(0)
        waitingInSlot.append(0)
        limitOfSlot.append(limit(for: host))
        return slot
    }

    /// A server refused one connection more than those already working (a cap
    /// per client address, commonly 2 to 4): from now on it gets only as many as
    /// are working, so the rest wait in the queue instead of being refused in a
    /// loop. Never below one, never raised again in this process.
    private func lowerLimit(of job: CurlJob) {
        let host = job.hostKey
        let working = activeInSlot[job.hostSlot]
        guard working > 0, working < limitOfSlot[job.hostSlot] else { return }
        hostLimits[host] = working
        limitOfSlot[job.hostSlot] = working
        shared.withLock { $0.hostLimits[host] = working }
    }

    /// Starts waiting jobs, oldest first, as far as the limits allow.
    ///
    /// Stops as soon as no host has both a waiting job and a free connection:
    /// 500 queued files for one server made every admission walk the whole
    /// queue to find that none could start (8.7% of the instructions of
    /// `get -r` of a 500-file FTP tree, callgrind, bench/RESULTS.md).
    private func admit() {
        CurlEngine.assertOnEngineThread()
        guard mayAdmit else { return }
        mayAdmit = false
        guard !waiting.isEmpty else { return }
        var open = 0
        for slot in activeInSlot.indices where waitingInSlot[slot] > 0 && activeInSlot[slot] < limitOfSlot[slot] {
            open += 1
        }
        var i = 0
        while open > 0 && i < waiting.count && active.count < limits.total {
            let job = waiting[i]
            let slot = job.hostSlot
            if activeInSlot[slot] < limitOfSlot[slot] {
                waiting.remove(at: i)
                waitingInSlot[slot] -= 1
                active[job.easy.raw] = job
                activeInSlot[slot] += 1
                job.admitted = true
                if job.toldWaiting {
                    job.toldWaiting = false
                    job.waitObserver?.connectionWait(false)
                }
                if case .ftpLane(let key) = job.easy.tlsSessionCache {
                    job.assignedLane = lanes.assign(key, fresh: job.freshLane, to: job.easy)
                }
                curl_multi_add_handle(multi, job.easy.raw)
                if waitingInSlot[slot] == 0 || activeInSlot[slot] >= limitOfSlot[slot] { open -= 1 }
            } else {
                i += 1
            }
        }
    }

    private func interrupt(_ job: CurlJob) {
        if active[job.easy.raw] === job {
            remove(job)
            finish(job, code: .abortedByCallback, interrupted: true)
        }
        // A waiting job is dropped by the sweep in `run`.
    }

    private func remove(_ job: CurlJob) {
        curl_multi_remove_handle(multi, job.easy.raw)
        active[job.easy.raw] = nil
        activeInSlot[job.hostSlot] -= 1
        mayAdmit = true
        if let lane = job.assignedLane, case .ftpLane(let key) = job.easy.tlsSessionCache {
            lanes.release(key, lane)
            job.assignedLane = nil
        }
    }

    /// Tells the observers of jobs that just arrived and could not start that they wait
    /// (only the new ones: the queue may hold a thousand jobs).
    private func tellWaiting(_ arrived: [CurlJob]) {
        for job in arrived where job.waitObserver != nil && !job.admitted && job.continuation != nil {
            job.toldWaiting = true
            job.waitObserver?.connectionWait(true)
        }
    }

    private func finish(_ job: CurlJob, code: CurlCode, interrupted: Bool) {
        CurlEngine.assertOnEngineThread()
        if job.toldWaiting {
            job.toldWaiting = false
            job.waitObserver?.connectionWait(false)
        }
        let completion = CurlCompletion(
            code: code, responseCode: job.easy.info(CURLINFO_RESPONSE_CODE),
            errorText: job.easy.errorText, interrupted: interrupted)
        job.didComplete(completion)
        job.didEnd()
        if job.refusedForTooManyConnections { lowerLimit(of: job) }
        let c = job.continuation
        job.continuation = nil
        job.handedOver.store(true, ordering: .releasing)
        if let c { job.handOver(completion, to: c) }
    }
}
