import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

private func fat(
    _ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0
) -> FATDateTime {
    FATDateTime(
        date: UInt16(year - 1980) << 9 | UInt16(month) << 5 | UInt16(day),
        time: UInt16(hour) << 11 | UInt16(minute) << 5 | UInt16(second / 2))
}

@Suite struct FATTimestampTests {
    @Test func documentedFolderDate() {
        let t = FATDateTime(date: 9944, time: 129).timestamp
        #expect(t?.iso8601 == "1999-06-24T00:04:02")
        #expect(t?.zone == .floating)
    }

    @Test func documentedFileDate() {
        let t = FATDateTime(date: 17071, time: 28040).timestamp
        #expect(t?.iso8601 == "2013-05-15T13:44:16")
    }

    @Test func encodesDocumentedExamples() throws {
        let folder = try #require(
            RemoteTimestamp(
                year: 1999, month: 6, day: 24, hour: 0, minute: 4, second: 2, zone: .floating))
        #expect(FATDateTime(folder) == FATDateTime(date: 9944, time: 129))
        let file = try #require(
            RemoteTimestamp(
                year: 2013, month: 5, day: 15, hour: 13, minute: 44, second: 16, zone: .floating))
        #expect(FATDateTime(file) == FATDateTime(date: 17071, time: 28040))
    }

    @Test(arguments: [
        fat(2013, 0, 15),  // month 0
        fat(2013, 13, 15),  // month 13
        fat(2013, 15, 15),  // month 15
        fat(2013, 5, 0),  // day 0
        fat(2013, 2, 30),  // February 30
        fat(2013, 2, 29),  // not a leap year
        fat(2013, 4, 31),  // April 31
        fat(2013, 5, 15, 24),  // hour 24
        fat(2013, 5, 15, 31),  // hour 31
        fat(2013, 5, 15, 12, 60),  // minute 60
        fat(2013, 5, 15, 12, 63),  // minute 63
        FATDateTime(date: fat(2013, 5, 15).date, time: 30),  // seconds/2 = 30
        FATDateTime(date: fat(2013, 5, 15).date, time: 31),  // seconds/2 = 31
        FATDateTime(date: 0, time: 0),
        FATDateTime(date: 0xFFFF, time: 0xFFFF),
    ])
    func impossibleValuesAreNil(_ value: FATDateTime) {
        #expect(value.timestamp == nil)
    }

    @Test func edgesThatAreValid() {
        #expect(fat(2000, 2, 29).timestamp?.iso8601 == "2000-02-29T00:00:00")
        #expect(fat(2096, 2, 29).timestamp != nil)
        #expect(fat(2100, 2, 29).timestamp == nil)  // 2100 is not a leap year
        #expect(FATDateTime.earliest.timestamp?.iso8601 == "1980-01-01T00:00:00")
        #expect(FATDateTime.latest.timestamp?.iso8601 == "2107-12-31T23:59:58")
        #expect(fat(2013, 5, 15, 23, 59, 58).timestamp?.iso8601 == "2013-05-15T23:59:58")
    }

    /// Every date with a fixed valid time, and every time with a fixed valid date:
    /// valid exactly when the fields make sense, and valid ones round-trip.
    @Test func exhaustiveDatesAndTimes() {
        for raw in 0...0xFFFF {
            let date = UInt16(raw)
            let value = FATDateTime(date: date, time: 0)
            let year = 1980 + Int(date >> 9)
            let month = Int(date >> 5 & 15)
            let day = Int(date & 31)
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            let valid = (1...12).contains(month) && day >= 1 && day <= days[month - 1]
            #expect((value.timestamp != nil) == valid, "date \(raw)")
            if let t = value.timestamp { #expect(FATDateTime(t) == value) }
        }
        let someDate = fat(2013, 5, 15).date
        for raw in 0...0xFFFF {
            let time = UInt16(raw)
            let value = FATDateTime(date: someDate, time: time)
            let valid = time >> 11 <= 23 && time >> 5 & 63 <= 59 && time & 31 <= 29
            #expect((value.timestamp != nil) == valid, "time \(raw)")
            if let t = value.timestamp { #expect(FATDateTime(t) == value) }
        }
    }

    @Test func oddSecondsRoundDown() throws {
        let t = try #require(
            RemoteTimestamp(
                year: 2020, month: 1, day: 2, hour: 3, minute: 4, second: 59, zone: .floating))
        #expect(FATDateTime(t).timestamp?.second == 58)
        let leap = try #require(
            RemoteTimestamp(
                year: 2016, month: 12, day: 31, hour: 23, minute: 59, second: 60, zone: .utc))
        #expect(FATDateTime(leap).timestamp?.iso8601 == "2016-12-31T23:59:58")
    }

    @Test func yearsOutsideFATClamp() throws {
        let old = try #require(
            RemoteTimestamp(year: 1979, month: 12, day: 31, hour: 23, zone: .floating))
        #expect(FATDateTime(old) == .earliest)
        let ancient = try #require(RemoteTimestamp(year: 1, month: 1, day: 1, zone: .floating))
        #expect(FATDateTime(ancient) == .earliest)
        let future = try #require(RemoteTimestamp(year: 2108, month: 1, day: 1, zone: .floating))
        #expect(FATDateTime(future) == .latest)
        let far = try #require(RemoteTimestamp(year: 9999, month: 12, day: 31, zone: .floating))
        #expect(FATDateTime(far) == .latest)
        let first = try #require(RemoteTimestamp(year: 1980, month: 1, day: 1, zone: .floating))
        #expect(FATDateTime(first) == .earliest)
        let last = try #require(
            RemoteTimestamp(
                year: 2107, month: 12, day: 31, hour: 23, minute: 59, second: 59, zone: .floating))
        #expect(FATDateTime(last) == .latest)
    }

    @Test func fromDateInZone() throws {
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        // 2013-05-15 04:44:16 UTC is 13:44:16 in Tokyo.
        let date = Date(timeIntervalSince1970: 1_368_593_056)
        #expect(FATDateTime(date: date, timeZone: tokyo) == FATDateTime(date: 17071, time: 28040))
        let utc = try #require(TimeZone(identifier: "UTC"))
        #expect(FATDateTime(date: date, timeZone: utc).timestamp?.iso8601 == "2013-05-15T04:44:16")
    }

    @Test func datesOutsideFATClamp() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        #expect(FATDateTime(date: .distantPast, timeZone: utc) == .earliest)
        #expect(FATDateTime(date: .distantFuture, timeZone: utc) == .latest)
        #expect(FATDateTime(date: Date(timeIntervalSince1970: 0), timeZone: utc) == .earliest)
        #expect(
            FATDateTime(date: Date(timeIntervalSinceReferenceDate: .nan), timeZone: utc)
                == .earliest)
        #expect(
            FATDateTime(date: Date(timeIntervalSinceReferenceDate: .infinity), timeZone: utc)
                == .latest)
        #expect(
            FATDateTime(date: Date(timeIntervalSinceReferenceDate: -.infinity), timeZone: utc)
                == .earliest)
        #expect(
            FATDateTime(date: Date(timeIntervalSinceReferenceDate: 1e300), timeZone: utc) == .latest
        )
        // 1979-12-31 23:00 UTC is already 1980 in Tokyo.
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        let lateIn1979 = Date(timeIntervalSince1970: 315_529_200)
        #expect(FATDateTime(date: lateIn1979, timeZone: utc) == .earliest)
        #expect(
            FATDateTime(date: lateIn1979, timeZone: tokyo).timestamp?.iso8601
                == "1980-01-01T08:00:00")
    }

    @Test func ftimeForm() {
        #expect(FATDateTime.earliest.ftime == "0x00210000")
        #expect(FATDateTime(date: 17071, time: 28040).ftime == "0x42AF6D88")
        #expect(FATDateTime(date: 0, time: 0).ftime == "0x00000000")
        #expect(FATDateTime(date: 0xFFFF, time: 0xFFFF).ftime == "0xFFFFFFFF")
        #expect(FATDateTime(date: 0x0001, time: 0x0002).ftime == "0x00010002")
    }

    @Test(arguments: [
        ("0x00210000", FATDateTime.earliest),
        ("0X00210000", FATDateTime.earliest),
        ("00210000", FATDateTime.earliest),
        ("210000", FATDateTime.earliest),
        ("0x42af6d88", FATDateTime(date: 17071, time: 28040)),
        ("0x42AF6d88", FATDateTime(date: 17071, time: 28040)),
        (" 0x42AF6D88\r\n", FATDateTime(date: 17071, time: 28040)),
        ("0", FATDateTime(date: 0, time: 0)),
        ("FFFFFFFF", FATDateTime(date: 0xFFFF, time: 0xFFFF)),
    ])
    func parsesFTIME(_ text: String, _ expected: FATDateTime) {
        #expect(FATDateTime(ftime: text) == expected)
    }

    @Test(arguments: [
        "", "0x", "0X", "x00210000", "0x123456789", "123456789", "0xGG", "0x-1", "-1", "+1",
        "0x+1", " 0x 12", "0x0021 0000", "0x00210000z", "0x٣", "0x１２", "0o17", "0x0x21",
    ])
    func rejectsBadFTIME(_ text: String) {
        #expect(FATDateTime(ftime: text) == nil)
    }

    @Test func ftimeRoundTripsRandomValues() {
        var rng = SeededRandom(seed: 1)
        for _ in 0..<5000 {
            let value = FATDateTime(
                date: .random(in: 0...0xFFFF, using: &rng),
                time: .random(in: 0...0xFFFF, using: &rng))
            let text = value.ftime
            #expect(text.count == 10)
            #expect(text.hasPrefix("0x"))
            #expect(FATDateTime(ftime: text) == value)
            #expect(FATDateTime(ftime: text.lowercased()) == value)
            #expect(FATDateTime(ftime: String(text.dropFirst(2))) == value)
        }
    }

    @Test func dateRoundTripsThroughTimestamp() throws {
        var rng = SeededRandom(seed: 2)
        let zones = ["UTC", "Asia/Tokyo", "America/New_York", "Asia/Kolkata", "Pacific/Kiritimati"]
        for _ in 0..<500 {
            let zone = try #require(TimeZone(identifier: zones.randomElement(using: &rng)!))
            // 1981 ... 2106, whole even seconds.
            let interval = Double(Int.random(in: -630_000_000...3_300_000_000, using: &rng) & ~1)
            let date = Date(timeIntervalSinceReferenceDate: interval)
            let value = FATDateTime(date: date, timeZone: zone)
            let back = try #require(value.timestamp)
            // A wall-clock time in a DST fall-back hour names two instants: compare
            // wall-clock times, and instants only where the zone has no DST.
            #expect(FATDateTime(date: back.date(floatingIn: zone), timeZone: zone) == value)
            if !zone.identifier.contains("/") || zone.identifier.hasPrefix("Asia") {
                #expect(back.date(floatingIn: zone) == date)
            }
        }
    }

    @Test func randomFTIMEStringsNeverCrash() {
        var rng = SeededRandom(seed: 3)
        let alphabet = Array("0123456789abcdefABCDEFxX+- \r\n\t,gz٣１")
        for _ in 0..<5000 {
            let length = Int.random(in: 0...14, using: &rng)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &rng)! })
            if let value = FATDateTime(ftime: text) {
                _ = value.timestamp
                #expect(FATDateTime(ftime: value.ftime) == value)
            }
        }
    }
}
