/// SplitMix64: a small, well-mixed, seeded generator, so a failing random case
/// reproduces from its seed. The one copy the tests share.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    /// The generator's state; the seed to start from.
    public var state: UInt64

    /// A generator that starts from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True once in `odds` calls on average; never when `odds` is 0 or less.
    public mutating func oneIn(_ odds: Int) -> Bool { odds > 0 && next() % UInt64(odds) == 0 }
}
