/// How a `Range` header applies to a representation of a known size
/// (RFC 9110 section 14).
enum ByteRangeDecision: Equatable {
    /// Send the whole representation with 200 (no Range, an unparsable one,
    /// several ranges, or an `If-Range` that does not match).
    case full
    /// Send `lower...upper` (inclusive) with 206 and
    /// `Content-Range: bytes lower-upper/size`.
    case partial(lower: Int64, upper: Int64)
    /// Answer 416 with `Content-Range: bytes */size`.
    case unsatisfiable
}

enum ByteRange {
    /// Decides what to send for `range` (the `Range` header value) against a
    /// representation of `size` bytes.
    ///
    /// Only a single `bytes=` range is honoured; several ranges are answered
    /// in full, which RFC 9110 allows.
    static func decide(range: String?, size: Int64) -> ByteRangeDecision {
        guard let range else { return .full }
        let trimmed = range.trimmingSpaces()
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .full }
        let spec = trimmed.dropFirst("bytes=".count).trimmingSpaces()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .full }
        let first = spec[..<dash].trimmingSpaces()
        let last = spec[spec.index(after: dash)...].trimmingSpaces()
        if first.isEmpty {
            // Suffix range: the last N bytes.
            guard let count = parseDigits(last) else { return .full }
            guard count > 0, size > 0 else { return .unsatisfiable }
            return .partial(lower: max(0, size - count), upper: size - 1)
        }
        guard let lower = parseDigits(first) else { return .full }
        var upper = size - 1
        if !last.isEmpty {
            guard let value = parseDigits(last) else { return .full }
            guard value >= lower else { return .full }  // invalid: ignore the header
            upper = min(value, size - 1)
        }
        guard lower < size else { return .unsatisfiable }
        return .partial(lower: lower, upper: upper)
    }

    /// Whether an `If-Range` value still matches the representation, so the
    /// range may be honoured. An entity tag matches only strongly and
    /// exactly; a date matches only the exact `Last-Modified`.
    static func ifRangeMatches(_ ifRange: String?, etag: String, lastModified: String) -> Bool {
        guard let ifRange = ifRange?.trimmingSpaces(), !ifRange.isEmpty else { return true }
        if ifRange.hasPrefix("W/") { return false }
        if ifRange.hasPrefix("\"") { return ifRange == etag }
        return ifRange == lastModified
    }

    /// Digits only (no sign, no spaces), fitting in Int64.
    private static func parseDigits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }
}

extension StringProtocol where SubSequence == Substring {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> Substring {
        let string = self[...]
        guard let start = string.firstIndex(where: { $0 != " " && $0 != "\t" }) else {
            return string[string.endIndex...]
        }
        let end = string.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return string[start...end]
    }
}
