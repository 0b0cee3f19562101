import Foundation

/// The Internet's date text of RFC 9110 §5.6.7: IMF-fixdate ("Sun, 06 Nov 1994
/// 08:49:37 GMT") and the obsolete RFC 850 and asctime forms, as HTTP headers,
/// WebDAV properties and index pages write them, and as `SourceTime` keeps a
/// download's validator. (An FTP `MDTM` time-val is `RemoteTimestamp(timeVal:)`.)
enum InternetDate {
    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ]

    /// Parses a `Last-Modified` (or `Date`) value. The form servers send today
    /// (RFC 9110's IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT") is read
    /// directly; the obsolete forms go through `DateFormatter`. Formatters made
    /// per call, once per file, were most of the instructions of a `get` of many
    /// URLs (bench/RESULTS.md, "The 500-file FTP tree, and 1,000 files over HTTP").
    static func parse(_ text: String) -> Date? {
        if let date = fixdate(text) { return date }
        for f in formats {
            let df = DateFormatter()
            df.locale = Locale(identifier: "en_US_POSIX")
            df.timeZone = TimeZone(identifier: "GMT")
            df.dateFormat = f
            if let d = df.date(from: text) { return d }
        }
        return nil
    }

    /// Three letters each, in order: compared as bytes, with no `String` or
    /// array made per date (a download's `Last-Modified` is read once per file).
    private static let months = Array("JanFebMarAprMayJunJulAugSepOctNovDec".utf8)
    private static let weekdays = Array("MonTueWedThuFriSatSun".utf8)

    /// `Www, DD Mon YYYY HH:MM:SS GMT`, exactly; nil for anything else.
    static func fixdate(_ text: String) -> Date? {
        var copy = text
        return copy.withUTF8 { fixdate(bytes: $0) }
    }

    private static func fixdate(bytes u: UnsafeBufferPointer<UInt8>) -> Date? {
        guard u.count == 29, u[3] == UInt8(ascii: ","), u[4] == 0x20, u[7] == 0x20, u[11] == 0x20, u[16] == 0x20,
            u[19] == UInt8(ascii: ":"), u[22] == UInt8(ascii: ":"), u[25] == 0x20,
            u[26] == UInt8(ascii: "G"), u[27] == UInt8(ascii: "M"), u[28] == UInt8(ascii: "T"),
            name(in: weekdays, at: 0, of: u) != nil, let month = name(in: months, at: 8, of: u)
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var n = 0
            for i in range {
                guard (0x30...0x39).contains(u[i]) else { return nil }
                n = n * 10 + Int(u[i] - 0x30)
            }
            return n
        }
        guard let day = number(5..<7), let year = number(12..<16), let hour = number(17..<19),
            let minute = number(20..<22), let second = number(23..<25),
            (1...RemoteTimestamp.daysIn(month: month + 1, year: year)).contains(day), hour < 24, minute < 60,
            second < 60
        else { return nil }
        let days = daysSince1970(year: year, month: month + 1, day: day)
        return Date(timeIntervalSince1970: Double(((days * 24 + hour) * 60 + minute) * 60 + second))
    }

    /// The index of the three letters at `at` among `names`, nil when none.
    private static func name(in names: [UInt8], at: Int, of u: UnsafeBufferPointer<UInt8>) -> Int? {
        var k = 0
        while k < names.count {
            if names[k] == u[at] && names[k + 1] == u[at + 1] && names[k + 2] == u[at + 2] { return k / 3 }
            k += 3
        }
        return nil
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
