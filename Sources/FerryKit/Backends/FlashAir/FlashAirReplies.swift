import Foundation

/// Free and total space on a card, from `command.cgi?op=140`.
///
/// The reply is `FREE/TOTAL,SECTORSIZE`, e.g. `13952920/15228928,512`: per the card
/// maker's documentation, free sectors / total sectors, bytes per sector (that
/// example is a nominal 8 GB card, 7.26 GiB in all, about 6.65 GiB free). Bytes are
/// the counts times the third number, which stays right even on firmware that
/// counts in clusters and reports the cluster size instead.
public struct FlashAirCapacity: Sendable, Hashable {
    /// Free space, in units of ``sectorSize``.
    public var freeSectors: Int64
    /// Total space, in units of ``sectorSize``.
    public var totalSectors: Int64
    /// Bytes per unit, as reported (usually 512).
    public var sectorSize: Int64

    /// Creates a capacity from the three reported numbers.
    public init(freeSectors: Int64, totalSectors: Int64, sectorSize: Int64) {
        self.freeSectors = freeSectors
        self.totalSectors = totalSectors
        self.sectorSize = sectorSize
    }

    /// Free space in bytes (`Int64.max` if the product overflows).
    public var freeBytes: Int64 { Self.bytes(freeSectors, sectorSize) }
    /// Total space in bytes (`Int64.max` if the product overflows).
    public var totalBytes: Int64 { Self.bytes(totalSectors, sectorSize) }

    private static func bytes(_ count: Int64, _ unit: Int64) -> Int64 {
        let (product, overflow) = count.multipliedReportingOverflow(by: unit)
        return overflow ? .max : product
    }
}

/// Parsers for the short `command.cgi` replies.
///
/// Every parser ignores whitespace and CR/LF around the value and returns nil for
/// anything else (an HTML error page, an empty body, a negative count).
public enum FlashAirReply {
    /// Parses op=140, `FREE/TOTAL,SECTORSIZE`.
    ///
    /// - Parameter body: The reply body.
    /// - Returns: The capacity, or nil when the reply is not three decimal numbers in
    ///   that form, the unit size is 0, or the byte counts would not fit in `Int64`.
    public static func capacity(_ body: String) -> FlashAirCapacity? {
        let text = trimmed(body)
        guard let slash = text.firstIndex(of: "/"),
            let comma = text[slash...].firstIndex(of: ",")
        else { return nil }
        guard let free = unsigned(text[..<slash]),
            let total = unsigned(text[text.index(after: slash)..<comma]),
            let unit = unsigned(text[text.index(after: comma)...]),
            unit > 0,
            !free.multipliedReportingOverflow(by: unit).overflow,
            !total.multipliedReportingOverflow(by: unit).overflow
        else { return nil }
        return FlashAirCapacity(freeSectors: free, totalSectors: total, sectorSize: unit)
    }

    /// Parses op=101, the number of (non-hidden) entries in a folder.
    ///
    /// - Parameter body: The reply body.
    /// - Returns: The count, or nil.
    public static func fileCount(_ body: String) -> Int? {
        unsigned(trimmed(body)).flatMap { Int(exactly: $0) }
    }

    /// Parses op=102: `1` when the card was written since the last ask, `0` when not.
    ///
    /// - Parameter body: The reply body.
    /// - Returns: The flag, or nil.
    public static func updated(_ body: String) -> Bool? {
        switch trimmed(body) {
        case "1": return true
        case "0": return false
        default: return nil
        }
    }

    /// Parses op=121: milliseconds since the card booted, at the host's last write.
    ///
    /// - Parameter body: The reply body.
    /// - Returns: The milliseconds, or nil.
    public static func lastWriteMilliseconds(_ body: String) -> Int64? {
        unsigned(trimmed(body))
    }

    /// Parses op=221: the card's time zone in 15-minute units (`36` is UTC+9,
    /// `-20` is UTC−5).
    ///
    /// The documented range is −48...54; anything within ±14 hours (±56) is accepted.
    ///
    /// - Parameter body: The reply body.
    /// - Returns: The offset in quarter hours, or nil.
    public static func timeZoneQuarterHours(_ body: String) -> Int? {
        var text = trimmed(body)
        var negative = false
        if text.hasPrefix("-") || text.hasPrefix("+") {
            negative = text.hasPrefix("-")
            text = text.dropFirst()
        }
        guard let magnitude = unsigned(text), magnitude <= 56 else { return nil }
        return negative ? -Int(magnitude) : Int(magnitude)
    }

    /// Parses op=221 into a fixed-offset `TimeZone`.
    ///
    /// - Parameter body: The reply body.
    /// - Returns: The zone, or nil.
    public static func timeZone(_ body: String) -> TimeZone? {
        timeZoneQuarterHours(body).flatMap { TimeZone(secondsFromGMT: $0 * 15 * 60) }
    }

    private static func trimmed(_ body: String) -> Substring {
        Substring(body.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// One or more ASCII digits that fit in `Int64`, nothing else.
    private static func unsigned(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }
}
