import Foundation
import Testing

@testable import FerryKit

private let utc = TimeZone(identifier: "UTC")!
/// 2026-12-01 21:00:00 UTC: `Dec 01 20:16` resolves to this year.
private let december2026 = Date(timeIntervalSince1970: 1_796_158_800)

private func at(_ text: String) -> Date {
    let f = ISO8601DateFormatter()
    return f.date(from: text)!
}

/// Times known to the minute or the day (issue 29 item 3): kept with their
/// precision by the listing parsers and compared with it.
struct TimestampPrecisionTests {
    static let minute = RemoteTimestamp(
        year: 2026, month: 12, day: 1, hour: 20, minute: 16, zone: .floating, precision: .minute)!

    @Test func aTimeToTheMinuteSpansItsMinute() {
        let t = Self.minute
        #expect(t.date(floatingIn: utc) == at("2026-12-01T20:16:00Z"))
        #expect(t.latestDate(floatingIn: utc) == at("2026-12-01T20:16:59Z"))
        #expect(t.contains(at("2026-12-01T20:16:37Z"), floatingIn: utc))
        #expect(t.contains(at("2026-12-01T20:16:00Z"), floatingIn: utc))
        #expect(!t.contains(at("2026-12-01T20:17:00Z"), floatingIn: utc))
        #expect(!t.contains(at("2026-12-01T20:15:59Z"), floatingIn: utc))
        // Seconds given with a coarser precision are dropped.
        let cut = RemoteTimestamp(
            year: 2026, month: 12, day: 1, hour: 20, minute: 16, second: 40, zone: .utc, precision: .minute)!
        #expect(cut.second == 0)
        let second = RemoteTimestamp(year: 2026, month: 12, day: 1, hour: 20, minute: 16, second: 40, zone: .utc)!
        #expect(second.precision == .second)
        #expect(second.latestDate() == second.date())
        #expect(second.contains(at("2026-12-01T20:16:40Z")) && !second.contains(at("2026-12-01T20:16:41Z")))
    }

    @Test func aTimeToTheDaySpansItsDay() {
        let t = RemoteTimestamp(year: 2024, month: 3, day: 5, hour: 9, zone: .floating, precision: .day)!
        #expect(t.hour == 0)
        #expect(t.latestDate(floatingIn: utc) == at("2024-03-05T23:59:59Z"))
        #expect(t.contains(at("2024-03-05T12:00:00Z"), floatingIn: utc))
        #expect(!t.contains(at("2024-03-06T00:00:00Z"), floatingIn: utc))
        // A day of a clock change in the zone it is read in has its own length.
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let change = RemoteTimestamp(year: 2024, month: 3, day: 31, zone: .floating, precision: .day)!
        #expect(change.latestDate(floatingIn: berlin).timeIntervalSince(change.date(floatingIn: berlin)) == 82_799)
    }

    @Test func theISOFormStaysToTheSecondAndShortFormsSayTheirPrecision() {
        #expect(Self.minute.iso8601 == "2026-12-01T20:16:00")
        #expect(RemoteTimestamp(iso8601: "2026-12-01T20:16")?.precision == .minute)
        #expect(RemoteTimestamp(iso8601: "2026-12-01T20:16Z")?.zone == .utc)
        #expect(RemoteTimestamp(iso8601: "2026-12-01")?.precision == .day)
        #expect(RemoteTimestamp(iso8601: "2026-12-01T20:16:00")?.precision == .second)
        #expect(RemoteTimestamp(iso8601: "2026-12") == nil)
        // Equal fields are equal whatever the precision, as their ISO forms are.
        #expect(Self.minute == RemoteTimestamp(year: 2026, month: 12, day: 1, hour: 20, minute: 16, zone: .floating))
    }

    @Test(arguments: [
        ("-rw-r--r--    1 ftp      ftp          4096 Dec 01 20:16 a.txt", RemoteTimestamp.Precision.minute),
        ("-rw-r--r--    1 ftp      ftp          4096 Jan 02  2023 a.txt", .day),
        ("-rw-r--r--    1 ftp      ftp          4096 Dec  1 20:16:09 2026 a.txt", .second),
        ("-rw-r--r--    1 ftp      ftp          4096 2026-12-01 20:16 a.txt", .minute),
        ("-rw-r--r--    1 ftp      ftp          4096 2026-12-01 20:16:09.000000000 +0000 a.txt", .second),
        ("12-01-26  08:16PM                 4096 a.txt", .minute),
    ])
    func ftpListLinesSayHowPreciseTheirTimeIs(text: String, precision: RemoteTimestamp.Precision) throws {
        let e = try #require(
            FTPListingParser.parseLISTLine(text[...], folder: "/pub", now: december2026, timeZone: utc))
        #expect(e.modified?.precision == precision, "\(text)")
        #expect(e.modified?.day == 1 || e.modified?.day == 2, "\(text)")
    }

    @Test func alreadyHereComparesToTheMinuteWhenTheListingKnowsTheMinute() throws {
        let dir = FileManager.default.temporaryDirectory.path + "/precision-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/a.txt"
        try Data(repeating: 7, count: 10).write(to: URL(fileURLWithPath: file))
        // The download set the server's exact time: 20:16:37.
        ExistingFile.stampModificationTime(file, to: at("2026-12-01T20:16:37Z"))
        let listed = RemoteEntry(name: "a.txt", path: "/a.txt", kind: .file, size: 10, modified: Self.minute)
        #expect(ExistingFile.download(listed, to: file, timeZone: utc) == .same)
        var otherMinute = listed
        otherMinute.modified = RemoteTimestamp(
            year: 2026, month: 12, day: 1, hour: 20, minute: 17, zone: .floating, precision: .minute)
        #expect(ExistingFile.download(otherMinute, to: file, timeZone: utc) != .same)
        // The same fields to the second are another time.
        var toTheSecond = listed
        toTheSecond.modified = RemoteTimestamp(year: 2026, month: 12, day: 1, hour: 20, minute: 16, zone: .floating)
        #expect(ExistingFile.download(toTheSecond, to: file, timeZone: utc) != .same)

        // The listing's minute is not stamped over the exact time it contains...
        ExistingFile.stampModificationTime(file, from: listed, timeZone: utc)
        let kept = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date
        #expect(kept == at("2026-12-01T20:16:37Z"))
        // ...but is where the file's time lies elsewhere.
        ExistingFile.stampModificationTime(file, from: otherMinute, timeZone: utc)
        let stamped = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date
        #expect(stamped == at("2026-12-01T20:17:00Z"))
    }

    @Test func uploadCountsATimeToTheMinuteAsNewAsItsLastSecond() throws {
        let dir = FileManager.default.temporaryDirectory.path + "/precision-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/a.txt"
        try Data(repeating: 7, count: 10).write(to: URL(fileURLWithPath: file))
        ExistingFile.stampModificationTime(file, to: at("2026-12-01T20:16:50Z"))
        var remote = RemoteEntry(name: "a.txt", path: "/a.txt", kind: .file, size: 10)
        remote.modified = RemoteTimestamp(
            year: 2026, month: 12, day: 1, hour: 20, minute: 16, zone: .utc, precision: .minute)
        #expect(ExistingFile.upload(file, to: remote, timeZone: utc) == .same)
        remote.modified = RemoteTimestamp(year: 2026, month: 12, day: 1, hour: 20, minute: 10, zone: .utc)
        #expect(ExistingFile.upload(file, to: remote, timeZone: utc) != .same)
    }
}
