import CCurl

extension EasyHandle {
    /// How long a connection may take to open, and the stall rule every transfer
    /// and request of Ferry's follows: a connection that moves under 1 byte/s for
    /// `stall` (at least a second) is dead.
    func setTimeouts(connect: Duration, stall: Duration) {
        set(CURLOPT_CONNECTTIMEOUT_MS, Int(connect / .milliseconds(1)))
        set(CURLOPT_LOW_SPEED_LIMIT, 1)
        set(CURLOPT_LOW_SPEED_TIME, max(1, Int(stall / .seconds(1))))
    }
}
