/// How many transfers at once a web server gets when nobody named a number
/// (`Ferry.setConnectionLimits(widenFarServers:)`, the CLI's `get` without
/// `-j`): the per-server default, and twice that once the server answers from
/// far away.
///
/// Small files over a long round trip are bound by the waits, not by the link:
/// 1,000 x 64 KiB over `internet` (20 ms each way) took 11.7 s with 4 at once
/// (45% of the link) and 6.0 s with 8 (88%) (bench/RESULTS.md, "Targets on
/// `internet`"). Nearby servers keep the default: on `wifi` (3 ms) 4 at once
/// already fill the link, and a server close by gains nothing from more.
///
/// The round trip is the time from a request's end to the answer's first byte
/// (libcurl's `STARTTRANSFER` less `PRETRANSFER`), the median of the server's
/// last `window` answers, so one slow file changes nothing. The width goes
/// back to the default when the answers come quickly again.
struct RoundTripWidth: Sendable {
    /// Answers at least this slow make a server far.
    static let far: Duration = .milliseconds(15)
    /// Answers the median is taken over; fewer say nothing yet.
    static let window = 8
    static let fewest = 4

    /// The width of a server that is near (the per-server limit).
    let base: Int
    /// The width of a far one, at most.
    let most: Int
    private var samples: [Duration] = []
    private var next = 0

    init(base: Int, most: Int) {
        self.base = max(1, base)
        self.most = max(self.base, most)
    }

    /// One answer's time to its first byte.
    mutating func record(_ firstByte: Duration) {
        if samples.count < RoundTripWidth.window {
            samples.append(firstByte)
        } else {
            samples[next] = firstByte
            next = (next + 1) % RoundTripWidth.window
        }
    }

    /// The median answer time, nil before `fewest` answers.
    var roundTrip: Duration? {
        guard samples.count >= RoundTripWidth.fewest else { return nil }
        let sorted = samples.sorted()
        return sorted[sorted.count / 2]
    }

    /// Transfers at once for this server now.
    var width: Int {
        guard let roundTrip, roundTrip >= RoundTripWidth.far else { return base }
        return min(most, base * 2)
    }
}
