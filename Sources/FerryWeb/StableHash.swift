/// A hash that is the same in every run (Swift's `Hasher` is seeded per
/// process), for cache file names: two FNV-1a 64-bit passes with different
/// offsets, printed as 32 hex digits.
enum StableHash {
    static func hex(_ text: String) -> String {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in text.utf8 {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            b = (b ^ UInt64(byte ^ 0x5A)) &* 0x0000_0100_0000_01B3
        }
        let hexA = String(a, radix: 16)
        let hexB = String(b, radix: 16)
        return String(repeating: "0", count: 16 - hexA.count) + hexA + String(repeating: "0", count: 16 - hexB.count)
            + hexB
    }
}
