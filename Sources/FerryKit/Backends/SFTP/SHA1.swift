/// SHA-1 (FIPS 180-4) and HMAC-SHA1 (RFC 2104), for OpenSSH's hashed
/// known_hosts entries: `|1|` base64(salt) `|` base64(HMAC-SHA1(salt, host)).
///
/// Only ever applied to host names of a few bytes; no security rests on SHA-1
/// here beyond what OpenSSH's own format gives (the names are not readable).
enum SHA1 {
    /// The 20-byte digest of `message`.
    static func hash(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        let data = SHA256.padded(message)
        func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x << n) | (x >> (32 - n)) }
        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: data.count, by: 64) {
            for i in 0..<16 { w[i] = SHA256.word(data, chunk + i * 4) }
            for i in 16..<80 { w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let f: UInt32
                let k: UInt32
                switch i {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let t = rotl(a, 5) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, rotl(b, 30), a, t)
            }
            for (i, v) in [a, b, c, d, e].enumerated() { h[i] = h[i] &+ v }
        }
        return SHA256.bytes(h)
    }

    /// HMAC-SHA1 of `message` under `key`.
    static func hmac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        var k = key.count > 64 ? hash(key) : key
        k += [UInt8](repeating: 0, count: 64 - k.count)
        let inner = hash(k.map { $0 ^ 0x36 } + message)
        return hash(k.map { $0 ^ 0x5C } + inner)
    }
}
