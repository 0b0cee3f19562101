import Foundation

/// How every retry loop of FerryKit waits and when it gives up: the first
/// back-off delay, the factor it grows by, the longest it grows to, and how many
/// failures in a row are tried again (docs/DESIGN.md, "Transfers: the contract").
///
/// One pure decision, ``next(after:)``, serves them all: a transfer's
/// `RetryBudget` (downloads and the upload driver, `ResumableUpload`), a
/// FlashAir card's upload and CGI calls, and FTP's and SFTP's listings. A loop
/// counts its failures in a row and asks; it computes no delay of its own.
struct RetryPolicy: Sendable, Hashable {
    /// The delay before the first retry.
    var firstDelay: Duration
    /// What each further delay is multiplied by.
    var factor: Int
    /// The longest a delay grows to (a first delay set longer is kept as it is).
    var cap: Duration
    /// Failures in a row that are tried again: the one after them gives up.
    var maxInRow: Int

    /// The longest back-off of a transfer, and of every loop that does not say otherwise.
    static let longestDelay: Duration = .seconds(30)

    init(firstDelay: Duration, factor: Int = 2, cap: Duration = RetryPolicy.longestDelay, maxInRow: Int) {
        self.firstDelay = firstDelay
        self.factor = max(1, factor)
        self.cap = cap
        self.maxInRow = max(0, maxInRow)
    }

    /// What to do after a failure.
    enum Next: Sendable, Hashable {
        /// Try again after this delay.
        case retry(after: Duration)
        /// Give up: that many tries in a row failed.
        case giveUp(tries: Int)
    }

    /// The decision after the `failure`th failure in a row (1 for the first).
    func next(after failure: Int) -> Next {
        precondition(failure >= 1, "failures in a row are counted from 1")
        if failure > maxInRow { return .giveUp(tries: failure) }
        return .retry(after: delay(after: failure))
    }

    /// The back-off after the `failure`th failure in a row: `firstDelay`, then
    /// `factor` times the one before, up to `cap`.
    func delay(after failure: Int) -> Duration {
        var delay = firstDelay
        var n = 1
        while n < failure {
            if delay >= cap { return cap }
            delay = min(delay * factor, cap)
            n += 1
        }
        return delay
    }

    /// Runs `attempt` until it succeeds, trying a failure `retryable` accepts
    /// again as the policy says, with a task sleep between (for loops outside a
    /// `Transfer`; a transfer sleeps with `Transfer.backOff`, which wakes on
    /// cancel and says which retry it waits for).
    ///
    /// - Parameters:
    ///   - retryable: Which failures are tried again (the others are thrown at once).
    ///   - cancelled: The error thrown when the task is cancelled before a try.
    ///   - gaveUp: The error thrown when the policy gives up, from the last failure and the tries made.
    ///   - attempt: One try.
    func retrying<T>(
        retryable: (FerryError) -> Bool = { $0.isTransient },
        cancelled: @autoclosure () -> FerryError,
        gaveUp: (_ last: FerryError, _ tries: Int) -> FerryError = { last, _ in last },
        _ attempt: () async throws(FerryError) -> T
    ) async throws(FerryError) -> T {
        var failures = 0
        while true {
            if Task.isCancelled { throw cancelled() }
            do {
                return try await attempt()
            } catch {
                guard retryable(error) else { throw error }
                failures += 1
                switch next(after: failures) {
                case .giveUp(let tries): throw gaveUp(error, tries)
                case .retry(let delay): try? await Task.sleep(for: delay)
                }
            }
        }
    }
}
