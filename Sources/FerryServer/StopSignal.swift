import Foundation

/// A one-way "the server is stopping" flag that sleeping connection threads
/// wait on, so latency and rate-limit pauses end at once when the server stops.
///
/// `@unchecked Sendable`: `stopped` is only read or written with `condition` locked.
final class StopSignal: @unchecked Sendable {
    private let condition = NSCondition()
    private var stopped = false

    /// Whether ``trigger()`` was called.
    var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped
    }

    /// Sleeps until `deadline`.
    ///
    /// - Returns: `true` when the deadline passed, `false` when the server stopped first.
    func sleep(until deadline: ContinuousClock.Instant) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !stopped {
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero { return true }
            let (seconds, attoseconds) = remaining.components
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18))
        }
        return false
    }

    /// Sets the flag and wakes every sleeper.
    func trigger() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
