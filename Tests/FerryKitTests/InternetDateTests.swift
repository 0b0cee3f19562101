import Foundation
import Testing

@testable import FerryKit

/// `Last-Modified` parsing: the IMF-fixdate read directly gives what
/// `DateFormatter` gives, and the obsolete forms still parse.
struct InternetDateTests {
    /// What the formatter alone makes of `text` (the parser before the direct path).
    func formatted(_ text: String) -> Date? {
        let df = DateFormatter()
        df.locale = Locale(identifier: "en_US_POSIX")
        df.timeZone = TimeZone(identifier: "GMT")
        df.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return df.date(from: text)
    }

    @Test func fixdateAgreesWithTheFormatter() {
        #expect(InternetDate.fixdate("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(InternetDate.fixdate("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(InternetDate.fixdate("Tue, 29 Feb 2000 23:59:59 GMT") == Date(timeIntervalSince1970: 951_868_799))
        let out = DateFormatter()
        out.locale = Locale(identifier: "en_US_POSIX")
        out.timeZone = TimeZone(identifier: "GMT")
        out.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var rng = SystemRandomNumberGenerator()
        // From 1901 to 2099, including before 1970.
        for _ in 0..<500 {
            let seconds = Double(Int64.random(in: -2_177_452_800...4_102_444_799, using: &rng))
            let text = out.string(from: Date(timeIntervalSince1970: seconds))
            #expect(InternetDate.fixdate(text) == Date(timeIntervalSince1970: seconds), "\(text)")
            #expect(InternetDate.fixdate(text) == formatted(text), "\(text)")
        }
    }

    @Test func otherTextIsNotAFixdateButTheOldFormsParse() {
        for bad in [
            "", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Nov 1994 08:49:37 GMT", "Sun, 29 Feb 1900 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nvv 1994 08:49:37 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT ", "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 0a Nov 1994 08:49:37 GMT",
        ] {
            #expect(InternetDate.fixdate(bad) == nil, "\(bad)")
        }
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(InternetDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(InternetDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(InternetDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(InternetDate.parse("yesterday") == nil)
    }
}

struct ValidatorTimeTests {
    @Test func httpDatesAndMDTMAnswersAreRead() {
        let http = SourceTime.httpDate("Tue, 01 Dec 2026 05:14:44 GMT").date
        #expect(http == Date(timeIntervalSince1970: 1_796_102_084))
        #expect(SourceTime.mdtm("20261201051444").date == http)
        #expect(SourceTime.mdtm("20261201051444.123").date == http)
        #expect(SourceTime.mdtm("20261301051444").date == nil)
        #expect(SourceTime.mdtm("20260231051444").date == nil)
        #expect(SourceTime.httpDate("W/\"etag\"").date == nil)
        #expect(SourceTime.httpDate("").date == nil)
    }
}
