import Foundation

/// One item in a remote folder, as every backend reports it.
public struct RemoteEntry: Sendable, Hashable, Codable {
    /// What kind of item an entry is.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A regular file.
        case file
        /// A folder.
        case directory
        /// A symbolic link (see `symlinkTarget`).
        case symlink
        /// Anything else: a device, a socket, an unknown type.
        case other
    }

    /// The last path component, decoded (no percent-escapes).
    public var name: String
    /// The absolute remote path, starting with `/`.
    public var path: String
    /// File, folder, symbolic link or something else.
    public var kind: Kind
    /// Size in bytes, when the source reports one.
    public var size: Int64?
    /// Last modification time, when the source reports a valid one.
    public var modified: RemoteTimestamp?
    /// Target of a symbolic link, when known.
    public var symlinkTarget: String?
    /// Hidden on the source (FlashAir hidden/system attribute); dot-files are not marked here.
    public var isHidden: Bool
    /// Read-only on the source (FlashAir attribute, or no write permission).
    public var isReadOnly: Bool

    /// Creates an entry.
    public init(
        name: String,
        path: String,
        kind: Kind,
        size: Int64? = nil,
        modified: RemoteTimestamp? = nil,
        symlinkTarget: String? = nil,
        isHidden: Bool = false,
        isReadOnly: Bool = false
    ) {
        self.name = name
        self.path = path
        self.kind = kind
        self.size = size
        self.modified = modified
        self.symlinkTarget = symlinkTarget
        self.isHidden = isHidden
        self.isReadOnly = isReadOnly
    }

    /// True for folders.
    public var isDirectory: Bool { kind == .directory }
}

/// A wall-clock time as a remote source reports it: either UTC (MLSD, HTTP)
/// or "floating" local time of the source with no zone (FAT dates, FTP LIST),
/// with how precisely the source knows it (``precision``): a web server's
/// folder page and FTP `LIST` show recent files to the minute only, older
/// `LIST` lines to the day.
public struct RemoteTimestamp: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// How precisely a source gave a time: the fields below it are zero and
    /// the real time lies somewhere in the span that starts at the fields.
    public enum Precision: String, Sendable, Hashable, Codable, CaseIterable {
        /// To the second (MLSD, HTTP dates, FAT's two seconds, `ls -lT`).
        case second
        /// To the minute: `Dec 01 20:16` (FTP `LIST` this year), `01-Dec-2026 20:16`
        /// (nginx, Apache folder pages). `second` is 0.
        case minute
        /// To the day: `Dec 01 2024` (FTP `LIST` of older files). Hour, minute and second are 0.
        case day
    }

    /// Whether the fields are UTC or an unknown local zone of the source.
    public enum Zone: String, Sendable, Hashable, Codable {
        /// The fields are UTC (FTP `MLSD`, HTTP dates).
        case utc
        /// The fields are the source's local time, zone unknown (a card, FTP `LIST`).
        case floating
    }

    /// Year, four digits.
    public var year: Int
    /// Month, 1...12.
    public var month: Int
    /// Day of the month, 1...31.
    public var day: Int
    /// Hour, 0...23.
    public var hour: Int
    /// Minute, 0...59.
    public var minute: Int
    /// Second, 0...59.
    public var second: Int
    /// Whether the fields are UTC or floating.
    public var zone: Zone
    /// How precisely the source gave the time (`.second` unless it said less).
    public var precision: Precision = .second

    /// Creates a timestamp, or returns nil when the fields are not a real date and time
    /// (month 13, day 0, February 30, hour 24 ...).
    public init?(
        year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0,
        zone: Zone, precision: Precision = .second
    ) {
        guard (1...9999).contains(year), (1...12).contains(month), (0...23).contains(hour),
            (0...59).contains(minute), (0...60).contains(second),
            day >= 1, day <= RemoteTimestamp.daysIn(month: month, year: year)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.zone = zone
        self.precision = precision
        switch precision {
        case .second: break
        case .minute: self.second = 0
        case .day: (self.hour, self.minute, self.second) = (0, 0, 0)
        }
    }

    /// Creates a UTC timestamp from a `Date`.
    public init(utc date: Date) {
        self.init(date, seenIn: TimeZone(identifier: "UTC")!, zone: .utc)
    }

    /// Creates a floating (zone-less) timestamp from a `Date` seen in `timeZone`.
    public init(local date: Date, in timeZone: TimeZone = .current) {
        self.init(date, seenIn: timeZone, zone: .floating)
    }

    /// The fields of `date` on a clock in `timeZone`, marked `zone`.
    private init(_ date: Date, seenIn timeZone: TimeZone, zone: Zone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        self.year = c.year!
        self.month = c.month!
        self.day = c.day!
        self.hour = c.hour!
        self.minute = c.minute!
        self.second = c.second!
        self.zone = zone
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// ISO 8601, `2013-05-15T13:44:16`, with `Z` when the source is UTC; always to
    /// the second (a time known to the minute has second 0; ``precision`` says so).
    public var iso8601: String {
        let s = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d", year, month, day, hour, minute, second)
        return zone == .utc ? s + "Z" : s
    }

    /// The ISO 8601 form (`2024-05-01T12:30:00Z`, no `Z` when floating).
    public var description: String { iso8601 }

    /// The instant this timestamp names; floating times are read in `timeZone`.
    public func date(floatingIn timeZone: TimeZone = .current) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone == .utc ? TimeZone(identifier: "UTC")! : timeZone
        let c = DateComponents(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return calendar.date(from: c)!
    }

    /// The last second the time may be, as `date` reads the fields: the time
    /// itself to the second, `20:16:59` for `20:16` to the minute, the day's
    /// `23:59:59` to the day (a day of a clock change has its own length).
    public func latestDate(floatingIn timeZone: TimeZone = .current) -> Date {
        let start = date(floatingIn: timeZone)
        switch precision {
        case .second: return start
        case .minute: return start.addingTimeInterval(59)
        case .day:
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone == .utc ? TimeZone(identifier: "UTC")! : timeZone
            let next = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
            return next.addingTimeInterval(-1)
        }
    }

    /// Whether `date` lies in the span this time names to its precision: the
    /// same second, the same minute, the same day (floating times read in `timeZone`).
    public func contains(_ date: Date, floatingIn timeZone: TimeZone = .current) -> Bool {
        let t = date.timeIntervalSince1970.rounded(.down)
        return t >= self.date(floatingIn: timeZone).timeIntervalSince1970
            && t <= latestDate(floatingIn: timeZone).timeIntervalSince1970
    }

    /// Equal when the fields and the zone are: the precision is not compared
    /// (`20:16` to the minute equals `20:16:00`), as the ISO 8601 form and the
    /// `Codable` string, which carry no precision, do not tell them apart either.
    public static func == (a: RemoteTimestamp, b: RemoteTimestamp) -> Bool {
        (a.year, a.month, a.day, a.hour, a.minute, a.second) == (b.year, b.month, b.day, b.hour, b.minute, b.second)
            && a.zone == b.zone
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        for v in [year, month, day, hour, minute, second] { hasher.combine(v) }
        hasher.combine(zone)
    }

    /// Orders by the fields, year first (zones are not converted).
    public static func < (a: RemoteTimestamp, b: RemoteTimestamp) -> Bool {
        (a.year, a.month, a.day, a.hour, a.minute, a.second)
            < (b.year, b.month, b.day, b.hour, b.minute, b.second)
    }

    /// Decodes the ISO 8601 string `encode(to:)` writes (or a shorter one, see
    /// `init(iso8601:)`).
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let t = RemoteTimestamp(iso8601: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a timestamp: \(text)"))
        }
        self = t
    }

    /// Encodes as the ISO 8601 string, to the second: the precision is not kept.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(iso8601)
    }

    /// Parses the form `iso8601` produces, and the shorter ISO 8601 forms that
    /// say a precision: `2026-12-01T20:16` (minute), `2026-12-01` (day).
    public init?(iso8601 text: String) {
        let utc = text.hasSuffix("Z")
        let body = utc ? String(text.dropLast()) : text
        let parts = body.split(whereSeparator: { "-T:".contains($0) }).map { Int($0) }
        guard [3, 5, 6].contains(parts.count), !parts.contains(nil) else { return nil }
        let n = parts.map { $0! }
        self.init(
            year: n[0], month: n[1], day: n[2], hour: n.count > 3 ? n[3] : 0, minute: n.count > 4 ? n[4] : 0,
            second: n.count > 5 ? n[5] : 0, zone: utc ? .utc : .floating,
            precision: n.count == 6 ? .second : n.count == 5 ? .minute : .day)
    }
}
