import Foundation

/// Dates in HTTP headers (IMF-fixdate, and the obsolete RFC 850 and asctime forms).
enum HTTPDate {
    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ]

    /// Parses a `Last-Modified` (or `Date`) value. The form servers send today
    /// (RFC 9110's IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT") is read
    /// directly; the obsolete forms go through `DateFormatter`. A formatter made
    /// per call cost about 0.9M instructions, and `get` of many URLs asks once
    /// per file (63% of the instructions for 1,000 files, callgrind,
    /// bench/RESULTS.md).
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

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// `Www, DD Mon YYYY HH:MM:SS GMT`, exactly; nil for anything else.
    static func fixdate(_ text: String) -> Date? {
        let u = Array(text.utf8)
        guard u.count == 29, u[3] == UInt8(ascii: ","), u[4] == 0x20, u[7] == 0x20, u[11] == 0x20, u[16] == 0x20,
            u[19] == UInt8(ascii: ":"), u[22] == UInt8(ascii: ":"), u[25] == 0x20,
            String(decoding: u[26..<29], as: UTF8.self) == "GMT",
            weekdays.contains(String(decoding: u[0..<3], as: UTF8.self)),
            let month = months.firstIndex(of: String(decoding: u[8..<11], as: UTF8.self))
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
