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

/// A speed from the bytes actually moved over a recent window: (bytes moved
/// now - bytes moved at the window's start) / the time between. A pause, a wait
/// for the connection or a stall counts as time in which nothing moved, so the
/// speed falls while nothing moves and is right again one window after bytes
/// flow again: never an average since the start, never a sum of per-file
/// speeds that each remember their own pauses (issue 28 item 10: an import
/// beside the page's thumbnails on a one-connection card showed 66-430 KB/s
/// and "1:15 left" while it moved 520 KB/s).
///
/// Fed the running total of bytes moved (never decreasing: resumed bytes are
/// not moved, a restart from zero moves new ones); keeps at most four samples
/// a second for `span`, so it is cheap enough for every chunk libcurl hands over.
package struct RateWindow: Sendable {
    /// How far back the speed looks.
    package let span: Duration
    /// The speed needs at least this much time behind it.
    package static let shortest: Duration = .milliseconds(500)
    private var samples: [(at: ContinuousClock.Instant, bytes: Int64)] = []
    private var latest: (at: ContinuousClock.Instant, bytes: Int64)?

    /// A window `span` long.
    package init(span: Duration = .seconds(3)) { self.span = span }

    /// Records the running total of bytes moved at `now`.
    package mutating func record(_ bytes: Int64, at now: ContinuousClock.Instant) {
        latest = (now, bytes)
        if let last = samples.last, now - last.at < .milliseconds(250) { return }
        samples.append((now, bytes))
        // Keep one sample at or before the window's start: the base to measure from.
        while samples.count > 2, now - samples[1].at >= span { samples.removeFirst() }
    }

    /// Bytes per second over the window ending at `now`; nil until the window
    /// has `shortest` behind it.
    package func bytesPerSecond(at now: ContinuousClock.Instant) -> Double? {
        guard let latest, var base = samples.first else { return nil }
        // The newest sample at least a span old is the base, when there is one
        // (the latest figure too: a span with nothing since is a speed of zero).
        for sample in samples where now - sample.at >= span { base = sample }
        if now - latest.at >= span { base = latest }
        let elapsed = now - base.at
        guard elapsed >= Self.shortest else { return nil }
        return Double(max(0, latest.bytes - base.bytes)) / (elapsed / .seconds(1))
    }

    /// Starts over (a new import).
    package mutating func reset() {
        samples.removeAll(keepingCapacity: true)
        latest = nil
    }
}

/// One transfer's speed: a ``RateWindow`` over the bytes it received. The
/// first sample is the baseline (bytes resumed from a `.part` were not moved
/// now), and a restart from zero (`rebase`) counts on from there.
struct SpeedMeter: Sendable {
    private var window = RateWindow()
    /// Bytes received so far, over every attempt.
    private var moved: Int64 = 0
    /// The position of the last sample; nil before the first.
    private var last: Int64?
    private(set) var bytesPerSecond: Double = 0

    mutating func sample(bytes: Int64, now: ContinuousClock.Instant) {
        if let last { moved += max(0, bytes - last) }
        last = bytes
        window.record(moved, at: now)
        if let rate = window.bytesPerSecond(at: now) { bytesPerSecond = rate }
    }

    /// The file starts again from `bytes` (a restart from zero): what arrives
    /// from there is new; the speed so far is kept.
    mutating func rebase(bytes: Int64, now: ContinuousClock.Instant) {
        last = bytes
    }
}
