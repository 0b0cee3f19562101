import Foundation

/// A FAT file-system date and time, as FlashAir reports it in listings (op=100)
/// and takes it in `upload.cgi?FTIME=`.
///
/// DATE: bits 15–9 year − 1980, bits 8–5 month, bits 4–0 day.
/// TIME: bits 15–11 hour, bits 10–5 minute, bits 4–0 seconds ÷ 2.
/// The fields are the camera's local time with no zone, so they map to a
/// ``RemoteTimestamp`` with zone `.floating`. The raw bits are kept as they came:
/// real cards report impossible values, which ``timestamp`` turns into nil.
public struct FATDateTime: Sendable, Hashable {
    /// The 16-bit FAT date.
    public var date: UInt16
    /// The 16-bit FAT time.
    public var time: UInt16

    /// Creates a value from the raw 16-bit fields, without checking them.
    public init(date: UInt16, time: UInt16) {
        self.date = date
        self.time = time
    }

    /// 1980-01-01 00:00:00, the earliest time FAT can hold (`0x00210000`).
    public static let earliest = FATDateTime(date: 0x0021, time: 0x0000)
    /// 2107-12-31 23:59:58, the latest time FAT can hold.
    public static let latest = FATDateTime(
        date: 127 << 9 | 12 << 5 | 31, time: 23 << 11 | 59 << 5 | 29)

    /// The year field, 1980...2107.
    var year: Int { 1980 + Int(date >> 9) }
    /// The month field as stored, 0...15 (only 1...12 are valid).
    var month: Int { Int(date >> 5 & 0x0F) }
    /// The day field as stored, 0...31 (0 is invalid).
    var day: Int { Int(date & 0x1F) }
    /// The hour field as stored, 0...31 (only 0...23 are valid).
    var hour: Int { Int(time >> 11) }
    /// The minute field as stored, 0...63 (only 0...59 are valid).
    var minute: Int { Int(time >> 5 & 0x3F) }
    /// The seconds field as stored, already doubled: 0...62 (only 0...58 are valid).
    var second: Int { Int(time & 0x1F) * 2 }

    /// The floating (zone-less) time these fields name, or nil when they are not a
    /// real date and time (month 0 or 13, day 0, February 30, hour 24, minute 60,
    /// seconds ÷ 2 above 29).
    public var timestamp: RemoteTimestamp? {
        // RemoteTimestamp accepts a leap second (60); FAT never means one.
        guard time & 0x1F <= 29 else { return nil }
        return RemoteTimestamp(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second,
            zone: .floating)
    }

    /// Encodes a timestamp's fields as they are written, whatever its zone.
    ///
    /// Odd seconds round down (FAT keeps two-second steps); years before 1980 become
    /// ``earliest`` and years after 2107 become ``latest``. For a UTC timestamp that
    /// should land on the card in local time, use ``init(date:timeZone:)`` with
    /// `t.date()` instead.
    ///
    /// - Parameter t: The timestamp to encode.
    public init(_ t: RemoteTimestamp) {
        self.init(
            year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute,
            second: t.second)
    }

    /// Encodes an instant as the wall-clock time it has in `timeZone`.
    ///
    /// Instants before 1980 in that zone become ``earliest``; after 2107, ``latest``.
    ///
    /// - Parameters:
    ///   - date: The instant to encode.
    ///   - timeZone: The zone the card's clock (the camera) is meant to be in.
    public init(date: Date, timeZone: TimeZone) {
        let interval = date.timeIntervalSinceReferenceDate
        // Decide far-off and non-finite instants before Calendar sees them; the
        // margins (about 1978 and 2111) leave room for any zone offset.
        if interval.isNaN || interval <= -700_000_000 {
            self = .earliest
            return
        }
        if interval >= 3_500_000_000 {
            self = .latest
            return
        }
        let t = RemoteTimestamp(local: date, in: timeZone)
        self.init(t)
    }

    private init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        if year < 1980 {
            self = .earliest
            return
        }
        if year > 2107 {
            self = .latest
            return
        }
        let seconds = min(max(second, 0), 59) / 2
        self.date = UInt16(year - 1980) << 9 | UInt16(month & 0x0F) << 5 | UInt16(day & 0x1F)
        self.time = UInt16(hour & 0x1F) << 11 | UInt16(minute & 0x3F) << 5 | UInt16(seconds)
    }

    /// The `upload.cgi?FTIME=` form: `0x`, then the date and the time as eight
    /// upper-case hex digits (`0x00210000` is 1980-01-01 00:00:00).
    public var ftime: String {
        let value = UInt32(date) << 16 | UInt32(time)
        let hex = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// Parses the `FTIME` form: one to eight hex digits in any case, with or without
    /// a `0x` prefix, surrounding whitespace ignored. Returns nil for anything else.
    ///
    /// - Parameter ftime: The text after `FTIME=`.
    public init?(ftime: String) {
        var text = Substring(ftime.trimmingCharacters(in: .whitespacesAndNewlines))
        if text.hasPrefix("0x") || text.hasPrefix("0X") { text = text.dropFirst(2) }
        guard (1...8).contains(text.utf8.count),
            text.utf8.allSatisfy({ $0.isASCIIHexDigit }),
            let value = UInt32(text, radix: 16)
        else { return nil }
        self.init(date: UInt16(value >> 16), time: UInt16(value & 0xFFFF))
    }
}

extension UInt8 {
    fileprivate var isASCIIHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
