import Foundation
import Synchronization

/// One running download or upload: observe its progress, pause, resume, cancel,
/// and await its result, which arrives exactly once.
///
/// ```swift
/// let transfer = fs.download("/DCIM/IMG_0001.JPG", to: "IMG_0001.JPG", options: .init())
/// for await p in transfer.progress { print(p.fraction ?? 0) }
/// let result = try await transfer.result
/// ```
public final class Transfer: Sendable, Identifiable {
    /// Where a transfer is in its life.
    public enum State: String, Sendable, Hashable {
        /// Moving bytes, or waiting to retry.
        case running
        /// Paused by `pause()`; `resume()` continues.
        case paused
        /// Finished: `result` returns.
        case completed
        /// Ended with an error: `result` throws it.
        case failed
        /// Cancelled: `result` throws `cancelled`.
        case cancelled

        /// True once the transfer has ended, whichever way.
        public var isFinished: Bool { self == .completed || self == .failed || self == .cancelled }
    }

    /// A stable identity for this transfer, unique in this process.
    public let id = Transfer.nextID.add(1, ordering: .relaxed).newValue
    private static let nextID = Atomic<Int>(0)
    /// The source: a redacted URL or a local path.
    public let source: String
    /// The destination: a local path or a redacted URL.
    public let destination: String

    private struct Box {
        var state: State = .running
        var progress = TransferProgress()
        var speed = SpeedMeter()
        var lastEmit: ContinuousClock.Instant?
        /// A snapshot was held back by the rate limit and waits for `flushHeldProgress`.
        var held = false
        var observers: [Int: AsyncStream<TransferProgress>.Continuation] = [:]
        var nextObserver = 0
        var outcome: Result<TransferResult, FerryError>?
        var waiters: [CheckedContinuation<Result<TransferResult, FerryError>, Never>] = []
        var interrupter: (@Sendable () -> Void)?
        /// The priority ``raisePriority(to:)`` asked for, and how to raise the attempt in flight.
        var raisedTo: TransferPriority?
        var raiser: (@Sendable (TransferPriority) -> Void)?
        var resumeWaiter: CheckedContinuation<Void, Never>?
        /// `cancel(discardingPartialData: true)` was called.
        var discardPartialData = false
        /// The stream ``progress`` returns, made on first access.
        var shared: AsyncStream<TransferProgress>?
        /// `bytesDone` of the last snapshot sent.
        var lastEmitBytes: Int64 = 0
    }

    private let box = Mutex(Box())

    init(source: String, destination: String) {
        self.source = source
        self.destination = destination
    }

    /// Starts `body` as the transfer's driver; its return or throw is the result.
    static func start(
        source: String, destination: String,
        _ body: @escaping @Sendable (Transfer) async throws(FerryError) -> TransferResult
    ) -> Transfer {
        let t = Transfer(source: source, destination: destination)
        Task {
            do throws(FerryError) {
                t.finish(.success(try await body(t)))
            } catch {
                t.finish(.failure(error.context(target: destination)))
            }
        }
        return t
    }

    /// A transfer that failed before it began.
    static func failed(_ error: FerryError, source: String, destination: String) -> Transfer {
        let t = Transfer(source: source, destination: destination)
        t.finish(.failure(error))
        return t
    }

    // MARK: Public control

    /// The current state.
    public var state: State { box.withLock { $0.state } }

    /// The latest progress snapshot.
    public var currentProgress: TransferProgress { box.withLock { $0.progress } }

    /// This transfer's progress snapshots (see ``TransferProgress`` for when one
    /// is sent), newest wins: a slow reader skips stale ones. The stream starts
    /// with the current snapshot and ends when the transfer ends.
    ///
    /// Every access returns the same stream, meant for one reader; for more
    /// readers, each calls ``makeProgressStream()``.
    public var progress: AsyncStream<TransferProgress> {
        if let stream = box.withLock({ $0.shared }) { return stream }
        let made = makeProgressStream()
        return box.withLock { b in
            if let stream = b.shared { return stream }
            b.shared = made
            return made
        }
    }

    /// A new, independent stream of this transfer's progress snapshots, for one
    /// more reader (newest wins, ends when the transfer ends).
    ///
    /// - Returns: A stream that starts with the current snapshot.
    public func makeProgressStream() -> AsyncStream<TransferProgress> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: TransferProgress.self, bufferingPolicy: .bufferingNewest(1))
        let (finished, key) = box.withLock { b -> (Bool, Int) in
            continuation.yield(b.progress)
            if b.outcome != nil { return (true, 0) }
            b.nextObserver += 1
            b.observers[b.nextObserver] = continuation
            return (false, b.nextObserver)
        }
        if finished { continuation.finish() }
        continuation.onTermination = { [weak self] _ in
            _ = self?.box.withLock { $0.observers.removeValue(forKey: key) }
        }
        return stream
    }

    /// Pauses: drops the connection, keeps the bytes on disk. No effect once finished.
    public func pause() {
        let interrupt = box.withLock { b -> (@Sendable () -> Void)? in
            guard b.state == .running else { return nil }
            b.state = .paused
            return b.interrupter
        }
        interrupt?()
    }

    /// Resumes a paused transfer from the bytes on disk.
    public func resume() {
        let waiter = box.withLock { b -> CheckedContinuation<Void, Never>? in
            guard b.state == .paused else { return nil }
            b.state = .running
            defer { b.resumeWaiter = nil }
            return b.resumeWaiter
        }
        waiter?.resume()
    }

    /// Cancels: the result becomes `FerryError.cancelled`. A partial download is
    /// kept as `.part` so the same download started again resumes.
    public func cancel() {
        cancel(discardingPartialData: false)
    }

    /// Cancels, and says what becomes of the bytes already moved.
    ///
    /// Keeping them is the default (``cancel()``, and cancelling the task that
    /// awaits ``result``): the network is the expensive part, and the same
    /// download started again continues from the `.part` (an FTP upload from its
    /// temporary remote file) even after a relaunch; a crash keeps them anyway.
    /// Discard when the file is no longer wanted (a superseded image, a user's
    /// "cancel"): a download's `NAME.part` and `NAME.part.journal` are removed
    /// before ``result`` throws `cancelled`, and an FTP upload deletes its
    /// temporary `.NAME.ferry-part` where the server allows it. Bytes on disk
    /// from an earlier run can be discarded any time with
    /// ``Ferry/discardPartialDownload(at:)``.
    ///
    /// - Parameter discardingPartialData: Remove the partial data instead of
    ///   keeping it for a later resume.
    public func cancel(discardingPartialData: Bool) {
        let (interrupt, waiter) = box.withLock {
            b -> ((@Sendable () -> Void)?, CheckedContinuation<Void, Never>?) in
            guard !b.state.isFinished else { return (nil, nil) }
            if discardingPartialData { b.discardPartialData = true }
            b.state = .cancelled
            defer { b.resumeWaiter = nil }
            return (b.interrupter, b.resumeWaiter)
        }
        interrupt?()
        waiter?.resume()
    }

    /// The outcome, delivered once to every awaiting task. Cancelling an awaiting
    /// task cancels the transfer.
    public var result: TransferResult {
        get async throws(FerryError) {
            let r = await withTaskCancellationHandler {
                await withCheckedContinuation { (c: CheckedContinuation<Result<TransferResult, FerryError>, Never>) in
                    let ready = box.withLock { b -> Result<TransferResult, FerryError>? in
                        if let o = b.outcome { return o }
                        b.waiters.append(c)
                        return nil
                    }
                    if let ready { c.resume(returning: ready) }
                }
            } onCancel: {
                self.cancel()
            }
            return try r.get()
        }
    }

    // MARK: Driver side (internal)

    /// True once `cancel()` was called.
    var isCancelled: Bool { box.withLock { $0.state == .cancelled } }

    /// True once `cancel(discardingPartialData: true)` was called: an upload
    /// removes its temporary remote file.
    var discardsPartialData: Bool { box.withLock { $0.state == .cancelled && $0.discardPartialData } }

    /// True while paused.
    var isPaused: Bool { box.withLock { $0.state == .paused } }

    /// Registers how to stop the attempt in flight; nil when none runs. If a pause
    /// or cancel arrived in the meantime, the interrupter runs at once.
    func setInterrupter(_ f: (@Sendable () -> Void)?) {
        let fireNow = box.withLock { b -> Bool in
            b.interrupter = f
            return f != nil && (b.state == .paused || b.state == .cancelled)
        }
        if fireNow { f?() }
    }

    /// Raises the transfer's priority (``TransferPriority``) to `priority`, never
    /// lowering it: the attempt in flight, waiting or running, goes up in the
    /// engine's queue (it is no longer stopped for anything below `priority`),
    /// and so do the attempts after it. The web layer calls it when a person
    /// asks for a file its prefetch is fetching. A transfer whose attempts do
    /// not run on the engine (SMB) keeps its order.
    package func raisePriority(to priority: TransferPriority) {
        let raiser = box.withLock { b -> (@Sendable (TransferPriority) -> Void)? in
            guard b.raisedTo.map({ priority > $0 }) ?? true else { return nil }
            b.raisedTo = priority
            return b.raiser
        }
        raiser?(priority)
    }

    /// The priority ``raisePriority(to:)`` raised the transfer to, if any.
    var raisedPriority: TransferPriority? { box.withLock { $0.raisedTo } }

    /// Registers how to raise the attempt in flight; nil when none runs.
    func setRaiser(_ f: (@Sendable (TransferPriority) -> Void)?) {
        box.withLock { $0.raiser = f }
    }

    /// Suspends while paused; throws `cancelled` once cancelled.
    func waitWhilePaused() async throws(FerryError) {
        while true {
            let state = box.withLock { $0.state }
            switch state {
            case .cancelled: throw FerryError(.cancelled, target: destination)
            case .paused:
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    let resumeNow = box.withLock { b -> Bool in
                        guard b.state == .paused else { return true }
                        b.resumeWaiter = c
                        return false
                    }
                    if resumeNow { c.resume() }
                }
            default: return
            }
        }
    }

    /// Sleeps for a back-off `delay` (one a `RetryPolicy` chose), waking early
    /// on cancel, then waits out a pause.
    ///
    /// With `retry`, the progress says which retry it waits for
    /// (``TransferProgress/retry``) until the sleep ends.
    func backOff(for delay: Duration, retry: TransferProgress.Retry? = nil) async throws(FerryError) {
        let deadline = ContinuousClock.now + delay
        if let retry { announce(retry) }
        defer { if retry != nil { announce(nil) } }
        while ContinuousClock.now < deadline {
            if isCancelled { throw FerryError(.cancelled, target: destination) }
            try? await Task.sleep(for: min(.milliseconds(100), deadline - .now))
        }
        try await waitWhilePaused()
    }

    /// Sends a snapshot that says which retry the transfer waits for (nil: none).
    private func announce(_ retry: TransferProgress.Retry?) {
        box.withLock { b in
            b.progress.retry = retry
            b.lastEmit = .now
            b.held = false
            Transfer.stamp(&b)
            for o in b.observers.values { o.yield(b.progress) }
        }
    }

    /// Records progress; emits to observers when 100 ms passed or 1% moved since
    /// the last snapshot (see ``TransferProgress``).
    func report(bytesDone: Int64, totalBytes: Int64?, resumedFrom: Int64? = nil, force: Bool = false) {
        let now = ContinuousClock.now
        box.withLock { b in
            if bytesDone < b.progress.bytesDone { b.speed.rebase(bytes: bytesDone, now: now) }
            b.progress.bytesDone = bytesDone
            b.progress.totalBytes = totalBytes
            if let resumedFrom { b.progress.resumedFrom = resumedFrom }
            b.speed.sample(bytes: bytesDone, now: now)
            b.progress.bytesPerSecond = b.speed.bytesPerSecond
            let percent = totalBytes.map { $0 > 0 && bytesDone - b.lastEmitBytes >= max(1, $0 / 100) } ?? false
            if force || percent || b.lastEmit == nil || now - b.lastEmit! >= .milliseconds(100) {
                b.lastEmit = now
                b.held = false
                Transfer.stamp(&b)
                for o in b.observers.values { o.yield(b.progress) }
            } else if !b.held && !b.observers.isEmpty {
                // Held back: make sure it goes out even if no further bytes arrive
                // (a burst followed by a stall must not hide its last snapshot).
                b.held = true
                ProgressFlusher.shared.schedule(self)
            }
        }
    }

    /// Emits a snapshot that the rate limit held back.
    func flushHeldProgress() {
        box.withLock { b in
            guard b.held else { return }
            b.held = false
            b.lastEmit = .now
            Transfer.stamp(&b)
            for o in b.observers.values { o.yield(b.progress) }
        }
    }

    /// Sets the bytes since the last snapshot sent, for the one about to go out.
    private static func stamp(_ b: inout Box) {
        b.progress.bytesSinceLastSnapshot = b.progress.bytesDone - b.lastEmitBytes
        b.lastEmitBytes = b.progress.bytesDone
    }

    private func finish(_ outcome: Result<TransferResult, FerryError>) {
        // The driver has returned: its `.part` is closed, and can go.
        if case .failure(let e) = outcome, e.code == .cancelled, discardsPartialData, !destination.contains("://") {
            _ = try? Ferry.discardPartialDownload(at: destination)
        }
        let (waiters, observers) = box.withLock { b in
            guard b.outcome == nil else {
                return (
                    [CheckedContinuation<Result<TransferResult, FerryError>, Never>](),
                    [AsyncStream<TransferProgress>.Continuation]()
                )
            }
            b.outcome = outcome
            switch outcome {
            case .success(let r):
                b.state = .completed
                b.progress.bytesDone = r.size
                b.progress.totalBytes = r.size
            case .failure(let e):
                b.state = e.code == .cancelled ? .cancelled : .failed
            }
            b.interrupter = nil
            let w = b.waiters
            b.waiters = []
            let o = Array(b.observers.values)
            b.observers = [:]
            Transfer.stamp(&b)
            for c in o { c.yield(b.progress) }
            return (w, o)
        }
        for o in observers { o.finish() }
        for w in waiters { w.resume(returning: outcome) }
    }
}

/// Delivers held-back progress snapshots 100 ms later, for every transfer, from
/// one timer: a transfer that goes quiet after a burst still shows its last bytes.
final class ProgressFlusher: Sendable {
    static let shared = ProgressFlusher()
    private let pending = Mutex<[Transfer]>([])
    private let armed = Atomic<Bool>(false)

    func schedule(_ transfer: Transfer) {
        pending.withLock { $0.append(transfer) }
        guard !armed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) { [self] in
            armed.store(false, ordering: .releasing)
            let due = pending.withLock { list -> [Transfer] in
                defer { list.removeAll() }
                return list
            }
            for t in due { t.flushHeldProgress() }
        }
    }
}
