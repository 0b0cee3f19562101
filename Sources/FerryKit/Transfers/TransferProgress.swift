import Foundation

/// A snapshot of one transfer's progress.
///
/// A transfer sends a snapshot when 100 ms have passed since the previous one or
/// 1% of the file has moved since, whichever comes first (so a fast upload shows
/// every percent, and a slow one ten snapshots a second at most), one held back
/// is sent 100 ms later if no more bytes come, and one last snapshot when it
/// ends. Readers of ``Transfer/progress`` get the newest: a slow reader skips
/// stale ones, and ``bytesSinceLastSnapshot`` counts from the previous snapshot
/// *sent*, which a slow reader may not have seen (sum ``bytesDone`` instead).
public struct TransferProgress: Sendable, Hashable {
    /// Bytes of the file that are done, including bytes resumed from an earlier run.
    public var bytesDone: Int64
    /// The file's full size, when the server told.
    public var totalBytes: Int64?
    /// Smoothed speed in bytes per second (0 until measured): sampled at most
    /// four times a second, each sample weighing 30% against the earlier ones,
    /// so it follows a change within a few seconds without jumping.
    public var bytesPerSecond: Double
    /// The offset the bytes now arriving continue from: the `.part` kept from an
    /// earlier run, or where a pause or retry stopped, once the server agreed to
    /// continue there; 0 when the file is coming from its start.
    public var resumedFrom: Int64
    /// Bytes done since the previous snapshot was sent (BlackRaccoon's "bytes
    /// this iteration"); negative after a restart from zero.
    public var bytesSinceLastSnapshot: Int64 = 0
    /// While the transfer waits to try again after a failure: which retry, and
    /// why; nil while it works.
    public var retry: Retry?

    /// A retry the transfer waits for (`ferry` shows "retrying (2 of 5) in 4 s").
    public struct Retry: Sendable, Hashable {
        /// This retry's number among the failures in a row, from 1.
        public var number: Int
        /// How many failures in a row the transfer allows before it gives up.
        public var of: Int
        /// How long it waits before the retry.
        public var delay: Duration
        /// The failure that is retried.
        public var reason: String

        /// Creates a retry description.
        public init(number: Int, of: Int, delay: Duration, reason: String) {
            self.number = number
            self.of = of
            self.delay = delay
            self.reason = reason
        }
    }

    /// Creates a snapshot.
    public init(bytesDone: Int64 = 0, totalBytes: Int64? = nil, bytesPerSecond: Double = 0, resumedFrom: Int64 = 0) {
        self.bytesDone = bytesDone
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
        self.resumedFrom = resumedFrom
    }

    /// Done as a fraction from 0 to 1, when the total is known.
    public var fraction: Double? {
        guard let totalBytes, totalBytes > 0 else { return totalBytes == 0 ? 1 : nil }
        return min(1, Double(bytesDone) / Double(totalBytes))
    }

    /// Estimated time left, when the total and a speed are known.
    public var eta: Duration? {
        guard let totalBytes, bytesPerSecond > 0 else { return nil }
        let left = max(0, totalBytes - bytesDone)
        return .milliseconds(Int64(Double(left) / bytesPerSecond * 1000))
    }
}

/// Exponentially smoothed speed, sampled at most four times a second so bursts of
/// small chunks do not make it jump.
struct SpeedMeter: Sendable {
    private var lastTime: ContinuousClock.Instant?
    private var lastBytes: Int64 = 0
    private(set) var bytesPerSecond: Double = 0

    mutating func sample(bytes: Int64, now: ContinuousClock.Instant) {
        guard let lastTime else {
            self.lastTime = now
            lastBytes = bytes
            return
        }
        let dt = (now - lastTime) / .seconds(1)
        guard dt >= 0.25 else { return }
        let instant = Double(max(0, bytes - lastBytes)) / dt
        bytesPerSecond = bytesPerSecond == 0 ? instant : 0.3 * instant + 0.7 * bytesPerSecond
        self.lastTime = now
        lastBytes = bytes
    }

    /// Forget the byte baseline (after a restart from zero) but keep the speed.
    mutating func rebase(bytes: Int64, now: ContinuousClock.Instant) {
        lastTime = now
        lastBytes = bytes
    }
}
