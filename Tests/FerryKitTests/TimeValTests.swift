import Foundation
import Testing

@testable import FerryKit

/// RFC 3659 `time-val` (`YYYYMMDDHHMMSS[.sss]`, UTC) has one reader,
/// `RemoteTimestamp(timeVal:)`: the `MLSD` `modify` fact and the journal's `MDTM`
/// validator (`SourceTime.mdtm`) must take and refuse the same
/// texts, and read the same time from them.
struct TimeValTests {
    static func utc(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int) -> RemoteTimestamp? {
        RemoteTimestamp(year: y, month: mo, day: d, hour: h, minute: mi, second: s, zone: .utc)
    }

    /// Each text and the time it names; nil where it names none.
    static let cases: [(String, RemoteTimestamp?)] = [
        ("20261201051444", utc(2026, 12, 1, 5, 14, 44)),
        ("20261201051444.123", utc(2026, 12, 1, 5, 14, 44)),
        ("20261201051444.5", utc(2026, 12, 1, 5, 14, 44)),
        ("19700101000000", utc(1970, 1, 1, 0, 0, 0)),
        ("20240229235959", utc(2024, 2, 29, 23, 59, 59)),  // a leap year
        ("20000229120000", utc(2000, 2, 29, 12, 0, 0)),  // divisible by 400
        ("20161231235960", utc(2016, 12, 31, 23, 59, 60)),  // a leap second
        ("20261301051444", nil),  // month 13
        ("20260231051444", nil),  // 31 February
        ("20230229000000", nil),  // not a leap year
        ("21000229000000", nil),  // divisible by 100, not by 400
        ("20260001051444", nil),  // month 0
        ("20260100051444", nil),  // day 0
        ("20261201241444", nil),  // hour 24
        ("20261201056044", nil),  // minute 60
        ("20261201051461", nil),  // second 61
        ("00001201051444", nil),  // year 0
        ("2026120105144", nil),  // thirteen digits
        ("202612010514445", nil),  // fifteen digits, no point
        ("20261201051444.", nil),  // a point and no fraction
        ("20261201051444.12a", nil),
        ("20261201051444,123", nil),
        ("2026-12-01T05:14", nil),
        ("+2026120105144", nil),
        (" 20261201051444", nil),
        ("20261201051444 ", nil),
        ("２０２６１２０１０５１４４４", nil),  // fullwidth digits
        ("", nil),
    ]

    @Test(arguments: cases)
    func theListingAndTheValidatorReadTheSameTime(text: String, expected: RemoteTimestamp?) {
        #expect(RemoteTimestamp(timeVal: text) == expected)
        #expect(SourceTime.mdtm(text).date == expected?.date())
        let listing = FTPListingParser.parseMLSD("type=file;size=1;modify=\(text); f", folder: "/pub")
        #expect(listing.entries.first?.modified == expected)
        #expect(listing.skippedLines == (expected == nil ? 1 : 0))
        let fact = FTPListingParser.parseMLSDLine(" type=file;modify=\(text); /pub/f"[...], folder: "/")
        #expect(fact?.modified == expected)
    }

    /// What `MDTM` would answer for a listed time reads back as that time; the
    /// listing's facts stand in for `MDTM` with exactly that text.
    @Test(arguments: cases.compactMap(\.1))
    func writtenTimeValsReadBack(time: RemoteTimestamp) throws {
        #expect(time.timeVal.count == 14)
        #expect(RemoteTimestamp(timeVal: time.timeVal) == time)
        let entry = RemoteEntry(name: "f", path: "/f", kind: .file, size: 5 << 20, modified: time)
        #expect(try #require(FTPListedFacts(entry)).modified == .mdtm(time.timeVal))
    }

    /// The HTTP date and the `time-val` of one instant are the same validator time
    /// (two readers, one per form, that must agree on the instant).
    @Test func anHTTPDateAndATimeValOfOneInstantAgree() throws {
        var rng = SystemRandomNumberGenerator()
        let imf = DateFormatter()
        imf.locale = Locale(identifier: "en_US_POSIX")
        imf.timeZone = TimeZone(identifier: "GMT")
        imf.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let instants =
            [0, 951_868_799, 1_796_102_084, 4_107_542_399]
            + (0..<200).map { _ in
                Int.random(in: 0...4_102_444_800, using: &rng)
            }
        for seconds in instants {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            let time = RemoteTimestamp(utc: date)
            let http = SourceTime.httpDate(imf.string(from: date)).date
            #expect(http == date, "\(imf.string(from: date))")
            #expect(SourceTime.mdtm(time.timeVal).date == http, "\(time.timeVal)")
        }
    }
}
