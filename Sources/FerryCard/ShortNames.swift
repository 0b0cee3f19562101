import Foundation

/// 8.3 aliases for the names of one folder, as FAT gives them: a name that is
/// a valid short name already is its own alias (upper-cased); a long one gets
/// the first six letters and digits it has, `~N` to be unique, and the first
/// three of its extension (`IMG_0001 copy.jpeg` → `IMG_00~1.JPE`). A name with
/// no ASCII letter or digit (`旅行.jpg`) gets four hex digits of a hash of it
/// (`6F3A~1.JPG`), as Windows does for such names.
enum ShortNames {
    /// Characters a short name may hold besides letters and digits.
    private static let extra = Set("!#$%&'()-@^_`{}~".unicodeScalars)

    /// The alias of every name, in the order given; the same names give the same aliases.
    static func aliases(_ names: [String]) -> [String: String] {
        var used = Set<String>()
        var out: [String: String] = [:]
        // Names that are their own alias first: a long name never takes one.
        for name in names {
            if let plain = plain(name), !used.contains(plain) {
                used.insert(plain)
                out[name] = plain
            }
        }
        for name in names where out[name] == nil {
            let (base, ext) = split(name)
            var stem = cleaned(base)
            if stem.isEmpty { stem = hash(name) }
            let suffix = cleaned(ext).prefix(3)
            var n = 1
            while true {
                let tail = "~\(n)"
                let alias = String(stem.prefix(8 - tail.count)) + tail + (suffix.isEmpty ? "" : "." + suffix)
                if !used.contains(alias) {
                    used.insert(alias)
                    out[name] = alias
                    break
                }
                n += 1
            }
        }
        return out
    }

    /// The upper-cased name when it is a valid 8.3 name: at most eight
    /// characters, a dot and three, nothing outside the short-name set.
    static func plain(_ name: String) -> String? {
        let upper = name.uppercased()
        guard upper.unicodeScalars.allSatisfy({ allowed($0) || $0 == "." }) else { return nil }
        let parts = upper.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let base = parts.first, (1...8).contains(base.count) else { return nil }
        if parts.count == 2 { guard (1...3).contains(parts[1].count) else { return nil } }
        return upper
    }

    private static func allowed(_ s: Unicode.Scalar) -> Bool {
        (s.value >= 0x41 && s.value <= 0x5A) || (s.value >= 0x30 && s.value <= 0x39) || extra.contains(s)
    }

    /// Base and extension at the last dot (none for a leading dot only).
    private static func split(_ name: String) -> (Substring, Substring) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name[...], "") }
        return (name[..<dot], name[name.index(after: dot)...])
    }

    /// The characters a short name keeps, upper-cased; spaces and dots dropped.
    private static func cleaned(_ text: Substring) -> String {
        String(String.UnicodeScalarView(text.uppercased().unicodeScalars.filter(allowed)))
    }

    /// Four hex digits of FNV-1a over the name's bytes.
    private static func hash(_ name: String) -> String {
        var h: UInt32 = 0x811C_9DC5
        for b in name.utf8 { h = (h ^ UInt32(b)) &* 0x0100_0193 }
        let s = String(h & 0xFFFF, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - s.count) + s
    }
}
