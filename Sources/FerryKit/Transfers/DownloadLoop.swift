import Foundation

/// The retry budget of one transfer: every attempt that has to be made again
/// (a retry after a failure, a file started over) spends from it, and nothing
/// loops without end (docs/DESIGN.md, "Transfers: the contract").
///
/// Two limits, both counted per transfer:
/// - `maxRetries` failures in a row without progress (an attempt that brought
///   bytes resets the row and the back-off delay), the delays those of one
///   `RetryPolicy`;
/// - `limit` attempts made again in all, whatever the reason, so that a server
///   that cuts every connection after a few bytes, or changes the file under
///   every resume, still ends the transfer.
///
/// Restarts (the bytes on disk cannot be continued) are not failures, so they do
/// not count in the row, but they spend from the whole budget, at most
/// `maxRestarts` of them.
struct RetryBudget: Sendable, Hashable {
    /// The delays and the failures in a row allowed (`maxRetries`).
    let policy: RetryPolicy
    /// Failed attempts in a row without progress.
    private(set) var failuresInRow = 0
    /// Failed attempts that were retried.
    private(set) var retries = 0
    /// Times the file was started over.
    private(set) var restarts = 0

    /// Files started over at most this often per transfer.
    static let maxRestarts = 5

    init(maxRetries: Int, firstDelay: Duration) {
        policy = RetryPolicy(firstDelay: firstDelay, maxInRow: maxRetries)
    }

    /// Failures in a row that are retried.
    var maxRetries: Int { policy.maxInRow }

    /// Attempts made again in all (retries and restarts) before the transfer gives up.
    var limit: Int { RetryBudget.maxRestarts + 4 * maxRetries }

    /// What has been spent.
    var spent: Int { retries + restarts }

    enum Verdict: Sendable, Hashable {
        /// Go on, after this back-off delay (zero for a restart).
        case again(after: Duration)
        /// Too many failures in a row: give up after this many tries.
        case exhaustedInRow(tries: Int)
        /// The whole budget is spent: give up after this many attempts.
        case exhaustedInAll(attempts: Int)
        /// Too many restarts.
        case tooManyRestarts(Int)
    }

    /// Spends one retry after a failure; `progressed` when the attempt brought bytes.
    mutating func failure(progressed: Bool) -> Verdict {
        if progressed { failuresInRow = 0 }
        failuresInRow += 1
        retries += 1
        switch policy.next(after: failuresInRow) {
        case .giveUp(let tries): return .exhaustedInRow(tries: tries)
        case .retry(let delay):
            if spent > limit { return .exhaustedInAll(attempts: spent) }
            return .again(after: delay)
        }
    }

    /// Spends one restart.
    mutating func restart() -> Verdict {
        restarts += 1
        if restarts > RetryBudget.maxRestarts { return .tooManyRestarts(restarts - 1) }
        if spent > limit { return .exhaustedInAll(attempts: spent) }
        return .again(after: .zero)
    }

    /// Records a restart that cost no attempt of its own (a `200` to a ranged
    /// request: the attempt itself started the file over).
    mutating func restartedInPlace() {
        restarts += 1
    }
}

/// The download loop's decisions, as a pure value: what to do after each
/// attempt (finish, start over, retry after a back-off, wait out a pause, fail),
/// within the transfer's `RetryBudget`, and how many bytes were kept.
///
/// `DownloadDriver` carries out the actions; the decisions are tested without a
/// server (`DownloadDecisionTests`). States: `attempting` (an attempt runs or is
/// about to), `finishing` (verify and rename running), `done`. An event in the
/// wrong state is a bug in the driver and traps.
struct DownloadLoop: Sendable {
    enum Action: Sendable, Hashable {
        /// Run the next attempt from the part's length (after waiting out a pause).
        case attempt
        /// Verify the size, make the data durable and rename.
        case finish(expectedSize: Int64?)
        /// Cut the part to zero, forget its validators, then attempt.
        case startOver
        /// Checkpoint the part, then attempt (a pause: the attempt waits for resume).
        case keepAndWait
        /// Checkpoint the part, sleep this long (waking on cancel), then attempt.
        case backOff(Duration)
        /// Checkpoint the part and fail with this error.
        case fail(FerryError)
        /// Checkpoint the part and fail: the budget ran out with this last failure.
        case gaveUp(last: FerryError, tries: Int)
    }

    enum State: Sendable, Hashable {
        case attempting
        case finishing
        case done
    }

    private(set) var state = State.attempting
    private(set) var budget: RetryBudget
    /// The failure the last back-off retries.
    private(set) var lastFailure: FerryError?
    /// Bytes moved over the network in all attempts.
    private(set) var transferred: Int64 = 0
    /// The offset the bytes were last continued from: the part's length at the
    /// start while nothing said otherwise, then that of the last attempt that
    /// wrote (0 when it started the file over). True to the bytes kept: a `200`
    /// to a resume makes it 0, a `206` after a pause makes it the pause's offset.
    private(set) var keptFrom: Int64
    /// Bytes on disk when the transfer started.
    let onDisk: Int64
    let display: String

    init(onDisk: Int64, maxRetries: Int, retryDelay: Duration, display: String) {
        self.onDisk = onDisk
        keptFrom = onDisk
        self.display = display
        budget = RetryBudget(maxRetries: maxRetries, firstDelay: retryDelay)
    }

    /// An attempt ended. `offset` is where it asked to start, `begunAt` where its
    /// bytes began (nil when it wrote none), `cancelled` whether the transfer was.
    mutating func attemptEnded(
        _ outcome: AttemptOutcome, offset: Int64, begunAt: Int64?, bytesReceived: Int64, cancelled: Bool
    ) -> Action {
        precondition(state == .attempting, "an attempt ended while the download was \(state)")
        transferred += bytesReceived
        if let begunAt {
            keptFrom = begunAt
            if begunAt == 0 && offset > 0 { budget.restartedInPlace() }
        }
        switch outcome {
        case .complete(let expected):
            state = .finishing
            return .finish(expectedSize: expected)
        case .restart(let reason):
            keptFrom = 0
            switch budget.restart() {
            case .again: return .startOver
            case .tooManyRestarts(let n):
                return gaveUp("\(n) restarts", reason)
            case .exhaustedInAll(let attempts):
                return gaveUp("\(attempts) attempts (the transfer's retry budget)", reason)
            case .exhaustedInRow:
                preconditionFailure("a restart is not a failure in a row")
            }
        case .interrupted:
            if cancelled { return done(.fail(FerryError(.cancelled, operation: "download", target: display))) }
            return .keepAndWait
        case .failed(var error):
            // Refused before a single byte: the server is not there; say so at
            // once. Refused mid-file: it is restarting; retry. A connection
            // reset, cut or closed without a reply is retried from the start.
            if error.wasRefused && transferred == 0 && onDisk == 0 { error.isTransient = false }
            guard error.isTransient else {
                return done(.fail(error.context(operation: "download", target: display)))
            }
            return retry(error, progressed: bytesReceived > 0)
        }
    }

    /// Verifying or renaming failed. Fewer bytes than announced (the connection
    /// ended early) is retried within the budget; anything else fails.
    mutating func finishFailed(_ error: FerryError) -> Action {
        precondition(state == .finishing, "finishing failed while the download was \(state)")
        state = .attempting
        guard error.code == .verificationFailed else { return done(.fail(error)) }
        return retry(error, progressed: false)
    }

    /// The file is complete under its final name.
    mutating func finished() {
        precondition(state == .finishing, "finished while the download was \(state)")
        state = .done
    }

    private mutating func retry(_ error: FerryError, progressed: Bool) -> Action {
        lastFailure = error
        switch budget.failure(progressed: progressed) {
        case .again(let delay): return .backOff(delay)
        case .exhaustedInRow(let tries):
            return done(.gaveUp(last: error.context(operation: "download", target: display), tries: tries))
        case .exhaustedInAll(let attempts):
            return done(.gaveUp(last: error.context(operation: "download", target: display), tries: attempts))
        case .tooManyRestarts:
            preconditionFailure("a failure is not a restart")
        }
    }

    /// Ends the download failed: the file kept starting over for `reason`.
    private mutating func gaveUp(_ after: String, _ reason: String) -> Action {
        done(
            .fail(
                FerryError(
                    .protocolError, operation: "download", target: display, detail: "gave up after \(after): \(reason)"
                )))
    }

    private mutating func done(_ action: Action) -> Action {
        state = .done
        return action
    }
}
