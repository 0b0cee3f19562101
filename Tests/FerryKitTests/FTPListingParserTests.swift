import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// 2024-03-15 12:00:00 UTC: recent Unix dates in these tests resolve against it.
private let march2024 = Date(timeIntervalSince1970: 1_710_504_000)
private let utc = TimeZone(identifier: "UTC")!

private func ts(
    _ y: Int, _ mo: Int, _ d: Int, _ h: Int = 0, _ mi: Int = 0, _ s: Int = 0,
    _ zone: RemoteTimestamp.Zone = .floating
) -> RemoteTimestamp {
    RemoteTimestamp(year: y, month: mo, day: d, hour: h, minute: mi, second: s, zone: zone)!
}

private func list(_ lines: [String], folder: String = "/pub", now: Date = march2024) -> DirectoryListing {
    FTPListingParser.parseLIST(lines.joined(separator: "\r\n"), folder: folder, now: now)
}

private func line(
    _ text: String, folder: String = "/pub", now: Date = march2024, timeZone: TimeZone = utc
)
    -> RemoteEntry?
{
    FTPListingParser.parseLISTLine(text[...], folder: folder, now: now, timeZone: timeZone)
}

/// Checks the invariants every parsed entry must satisfy.
private func expectWellFormed(
    _ e: RemoteEntry, prefix: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(!e.name.isEmpty, sourceLocation: sourceLocation)
    #expect(!e.name.contains("/"), sourceLocation: sourceLocation)
    #expect(e.name != "." && e.name != "..", sourceLocation: sourceLocation)
    #expect(!e.name.contains("\n"), sourceLocation: sourceLocation)
    #expect(e.path == prefix + e.name, sourceLocation: sourceLocation)
    #expect((e.size ?? 0) >= 0, sourceLocation: sourceLocation)
    #expect(e.kind == .symlink || e.symlinkTarget == nil, sourceLocation: sourceLocation)
    if let m = e.modified {
        #expect(
            RemoteTimestamp(
                year: m.year, month: m.month, day: m.day, hour: m.hour, minute: m.minute,
                second: m.second, zone: m.zone) != nil, sourceLocation: sourceLocation)
    }
}

@Suite struct FTPUnixListTests {
    @Test func vsftpd() {
        let l = list([
            "drwxr-xr-x    2 ftp      ftp          4096 Mar 14 09:12 incoming",
            "-rw-r--r--    1 ftp      ftp      5368709120 Jan 02  2023 big.iso",
            "lrwxrwxrwx    1 ftp      ftp             7 Mar 14 09:12 latest -> big.iso",
            "-rw-r--r--    1 1000     1000          123 Nov 30 23:59 numeric-owner.txt",
        ])
        #expect(l.skippedLines == 0)
        #expect(
            l.entries == [
                RemoteEntry(
                    name: "incoming", path: "/pub/incoming", kind: .directory, size: 4096,
                    modified: ts(2024, 3, 14, 9, 12)),
                RemoteEntry(
                    name: "big.iso", path: "/pub/big.iso", kind: .file, size: 5_368_709_120,
                    modified: ts(2023, 1, 2)),
                RemoteEntry(
                    name: "latest", path: "/pub/latest", kind: .symlink, size: 7,
                    modified: ts(2024, 3, 14, 9, 12), symlinkTarget: "big.iso"),
                RemoteEntry(
                    name: "numeric-owner.txt", path: "/pub/numeric-owner.txt", kind: .file,
                    size: 123,
                    modified: ts(2023, 11, 30, 23, 59)),
            ])
    }

    @Test func proftpdPyftpdlibFileZillaBusybox() {
        let l = list([
            // proftpd
            "-rw-r--r--   1 ftpuser  ftpgroup     1024 Mar 14 09:12 a.txt",
            "drwxr-xr-x   3 ftpuser  ftpgroup     4096 Dec 31  2022 old",
            // pyftpdlib ("%b %d %H:%M" / "%b %d  %Y")
            "-rw-r--r--   1 user     user         1234 Mar 01 10:00 file.txt",
            "drwxr-xr-x   2 owner    group        4096 Jan 05  2021 dir",
            // FileZilla Server
            "-rw-r--r-- 1 ftp ftp         1234 Feb 29 16:20 leap.txt",
            "drwxr-xr-x 1 ftp ftp            0 Mar 15 11:59 fz dir",
            // busybox ftpd
            "-rw-r--r--    1 0        0             42 Mar  3 08:07 bb",
            // Microsoft IIS in "UNIX" style
            "-rwxrwxrwx   1 owner    group               1234 Mar 14  9:12 iis.txt",
        ])
        #expect(l.skippedLines == 0)
        #expect(
            l.entries.map(\.name) == [
                "a.txt", "old", "file.txt", "dir", "leap.txt", "fz dir", "bb", "iis.txt",
            ])
        #expect(
            l.entries.map(\.kind) == [
                .file, .directory, .file, .directory, .file, .directory, .file, .file,
            ])
        #expect(l.entries.map(\.size) == [1024, 4096, 1234, 4096, 1234, 0, 42, 1234])
        #expect(
            l.entries.map(\.modified) == [
                ts(2024, 3, 14, 9, 12), ts(2022, 12, 31), ts(2024, 3, 1, 10), ts(2021, 1, 5),
                ts(2024, 2, 29, 16, 20), ts(2024, 3, 15, 11, 59), ts(2024, 3, 3, 8, 7),
                ts(2024, 3, 14, 9, 12),
            ])
        #expect(l.entries.allSatisfy { !$0.isReadOnly && !$0.isHidden })
    }

    @Test func aclMarksAndGluedLinkCount() {
        let l = list([
            "drwxr-xr-x+ 12 user group 4096 Mar 14 09:12 acl",
            "drwxr-xr-x+12 user group 4096 Mar 14 09:12 glued",
            "-rw-r--r--@  1 user staff 10 Mar 14 09:12 mac",
            "-rw-r--r--.  1 root root  11 Mar 14 09:12 selinux",
            "drwxrwsr-t   2 root staff 4096 Mar 14 09:12 sticky",
        ])
        #expect(l.skippedLines == 0)
        #expect(l.entries.map(\.name) == ["acl", "glued", "mac", "selinux", "sticky"])
        #expect(l.entries.map(\.size) == [4096, 4096, 10, 11, 4096])
    }

    @Test func missingOrSpacedOwnerAndGroup() throws {
        let l = list([
            "-rw-r--r--   1 ftp   1234 Mar 14 09:12 no-group",
            "-rw-r--r--   1234 Mar 14 09:12 nothing",
            "-rw-r--r--  1 jdoe  Domain Users  5678 Mar 14 09:12 report.docx",
            "-rw-r--r--  1 Jan   staff  9 Mar 14 09:12 owner-named-jan",
            "-rw-r--r--  1 5     12 Jan 01 12:00 digits",
        ])
        #expect(l.skippedLines == 0)
        #expect(
            l.entries.map(\.name) == [
                "no-group", "nothing", "report.docx", "owner-named-jan", "digits",
            ])
        #expect(l.entries.map(\.size) == [1234, 1234, 5678, 9, 12])
        try #require(l.entries.count == 5)
        #expect(l.entries[4].modified == ts(2024, 1, 1, 12))
    }

    @Test func namesKeepEveryByteAfterOneSeparator() throws {
        let l = list([
            "-rw-r--r-- 1 u g 1 Mar 14 09:12   leading spaces",
            "-rw-r--r-- 1 u g 1 Mar 14 09:12 runs   of    spaces",
            "-rw-r--r-- 1 u g 1 Mar 14 09:12 trailing  ",
            "-rw-r--r-- 1 u g 1 Jan 01  2020  year then leading",
            "-rw-r--r-- 1 u g 1 Mar 14 09:12 Jan 01 12:00 looks like a date",
            "-rw-r--r-- 1 u g 1 Mar 14 09:12 a -> b",
            "-rw-r--r-- 1 u g 1 Mar 14 09:12 日本語 ファイル.txt",
            "-rw-r--r-- 1 u g 1 Mar 14 09:12 émoji 🚀",
            "-rw-r--r--\t1 u g 1 Mar 14 09:12\ttabbed",
        ])
        #expect(l.skippedLines == 0)
        #expect(
            l.entries.map(\.name) == [
                "  leading spaces", "runs   of    spaces", "trailing  ", " year then leading",
                "Jan 01 12:00 looks like a date", "a -> b", "日本語 ファイル.txt", "émoji 🚀", "tabbed",
            ])
        try #require(l.entries.count == 9)
        #expect(l.entries[0].path == "/pub/  leading spaces")
        #expect(l.entries[5].kind == .file && l.entries[5].symlinkTarget == nil)
    }

    @Test func symlinks() {
        let l = list([
            "lrwxrwxrwx 1 root root 11 Mar 14 09:12 lib -> usr/lib",
            "lrwxrwxrwx 1 root root 11 Mar 14 09:12 my link -> /a b/c -> d",
            "lrwxrwxrwx 1 root root 11 Mar 14 09:12 dangling",
        ])
        #expect(l.skippedLines == 0)
        #expect(l.entries.map(\.name) == ["lib", "my link", "dangling"])
        #expect(l.entries.map(\.symlinkTarget) == ["usr/lib", "/a b/c -> d", nil])
        #expect(l.entries.allSatisfy { $0.kind == .symlink })
    }

    @Test func devicesAndOtherTypes() throws {
        let l = list([
            "crw-rw-rw-   1 root     root       1,   3 Jan  1 00:00 null",
            "crw--w----   1 root     tty        4,  64 Jan  1 00:00 tty",
            "brw-rw----   1 root     disk       8,0 Jan  1 00:00 sda",
            "prw-r--r--   1 root     root          0 Jan  1 00:00 fifo",
            "srwxrwxrwx   1 root     root          0 Jan  1 00:00 socket",
        ])
        #expect(l.skippedLines == 0)
        #expect(l.entries.map(\.name) == ["null", "tty", "sda", "fifo", "socket"])
        #expect(l.entries.allSatisfy { $0.kind == .other })
        #expect(l.entries.map(\.size) == [nil, nil, nil, 0, 0])
        try #require(l.entries.count == 5)
        #expect(l.entries[0].modified == ts(2024, 1, 1))
    }

    @Test func sizes() {
        let l = list([
            "-rw-r--r-- 1 u g 4294967296 Mar 14 09:12 four-gib",
            "-rw-r--r-- 1 u g 9223372036854775807 Mar 14 09:12 int64-max",
            "-rw-r--r-- 1 u g 9223372036854775808 Mar 14 09:12 int64-max-plus-one",
            "-rw-r--r-- 1 u g 99999999999999999999999999999999999999 Mar 14 09:12 absurd",
            "-rw-r--r-- 1 u g 0 Mar 14 09:12 empty",
        ])
        #expect(l.skippedLines == 0)
        #expect(l.entries.map(\.size) == [4_294_967_296, Int64.max, nil, nil, 0])
        #expect(
            l.entries.map(\.name) == [
                "four-gib", "int64-max", "int64-max-plus-one", "absurd", "empty",
            ])
    }

    @Test func isoAndOtherDateStyles() {
        let l = list([
            "-rw-r--r-- 1 u g 10 2023-07-04 13:45 long-iso",
            "-rw-r--r-- 1 u g 10 2023-07-04 13:45:30.123456789 +0200 full-iso",
            "-rw-r--r-- 1 u g 10 2023-01-01 00:30:00.000000000 +0100 crosses-year",
            "-rw-r--r-- 1 u g 10 Jul  4 13:45:30 2021 bsd-T",
            "-rw-r--r-- 1 u g 10 04 Jul 13:45 day-first",
            "-rw-r--r-- 1 u g 10 4 jul  2019 day-first-year",
            "-rw-r--r-- 1 u g 10 SEPT 9 2019 sept",
            "-rw-r--r-- 1 u g 10 dec 24 18:00 lowercase",
        ])
        #expect(l.skippedLines == 0)
        #expect(
            l.entries.map(\.modified) == [
                ts(2023, 7, 4, 13, 45), ts(2023, 7, 4, 11, 45, 30, .utc),
                ts(2022, 12, 31, 23, 30, 0, .utc),
                ts(2021, 7, 4, 13, 45, 30), ts(2023, 7, 4, 13, 45), ts(2019, 7, 4), ts(2019, 9, 9),
                ts(2023, 12, 24, 18),
            ])
        #expect(l.entries.map(\.name).last == "lowercase")
    }

    @Test func netWare() throws {
        let l = list([
            "d [RWCEAFMS] admin                    512 Mar 14 09:12 SYSTEM",
            "- [R----F--] jdoe                    1234 Jan 02  2020 read me.txt",
        ])
        #expect(l.skippedLines == 0)
        #expect(l.entries.map(\.kind) == [.directory, .file])
        #expect(l.entries.map(\.name) == ["SYSTEM", "read me.txt"])
        #expect(l.entries.map(\.size) == [512, 1234])
        try #require(l.entries.count == 2)
        #expect(l.entries[1].modified == ts(2020, 1, 2))
        // NetWare servers pad the name column (the name is "login", not "   login").
        let padded = list([
            "d [R----F--] supervisor            512       Jan 16 18:53    login",
            "- [R----F--] rhesus             214059       Oct 20  2019    cx.exe",
        ])
        #expect(padded.entries.map(\.name) == ["login", "cx.exe"])
        #expect(padded.entries.map(\.path) == ["/pub/login", "/pub/cx.exe"])
    }

    @Test func noiseIsNotCounted() {
        let l = list([
            "total 12",
            "TOTAL 0",
            "",
            "   ",
            "drwxr-xr-x 2 u g 4096 Mar 14 09:12 .",
            "drwxr-xr-x 2 u g 4096 Mar 14 09:12 ..",
            "-rw-r--r-- 1 u g 1 Mar 14 09:12 real",
            "",
        ])
        #expect(l.skippedLines == 0)
        #expect(l.entries.map(\.name) == ["real"])
        #expect(line("total 1234") == nil)
        #expect(line("drwxr-xr-x 2 u g 4096 Mar 14 09:12 ..") == nil)
    }

    @Test func badLinesAreSkippedAndCounted() {
        let bad = [
            "-rw-r--r-- 1 u g 10 Foo 14 09:12 bad-month",
            "-rw-r--r-- 1 u g 10 Mar 14 30:12 hour-30",
            "-rw-r--r-- 1 u g 10 Mar 14 09:60 minute-60",
            "-rw-r--r-- 1 u g 10 Mar 32 09:12 day-32",
            "-rw-r--r-- 1 u g 10 Feb 30  2020 feb-30",
            "-rw-r--r-- 1 u g 10 Mar 00 09:12 day-0",
            "-rw-r--r-- 1 u g 10 2023-13-01 10:00 iso-month-13",
            "-rw-r--r-- 1 u g 10 Mar 14 09:12",
            "-rw-r--r-- 1 u g 10 Mar 14 09:12 ",
            "-rw-r--r-- 1 u g ten Mar 14 09:12 size-not-number",
            "-rw-r--r-- 1 u g 10 Mar 14 09:12 with/slash",
            "xrw-r--r-- 1 u g 10 Mar 14 09:12 bad-type",
            "-rw-r--r-X 1 u g 10 Mar 14 09:12 bad-perm",
            "-rw-r--r--x 1 u g 10 Mar 14 09:12 bad-acl",
            "Listing of /pub",
            "550 Permission denied",
            "+i8388621.48594,m825718503,r,s280,\tdjb.html",
            "d [RWCEAFMS] admin Mar 14 09:12 no-size",
        ]
        let good = "-rw-r--r-- 1 u g 1 Mar 14 09:12 good"
        let l = list(bad + [good])
        #expect(l.skippedLines == bad.count)
        #expect(l.entries.map(\.name) == ["good"])
        for b in bad { #expect(line(b) == nil, "\(b)") }
    }

    @Test func lineEndsAndFolders() {
        let text =
            "-rw-r--r-- 1 u g 1 Mar 14 09:12 a\r\n-rw-r--r-- 1 u g 2 Mar 14 09:12 b\n"
            + "-rw-r--r-- 1 u g 3 Mar 14 09:12 c\r\n\r\n-rw-r--r-- 1 u g 4 Mar 14 09:12 d"
        let l = FTPListingParser.parseLIST(text, folder: "/", now: march2024)
        #expect(l.entries.map(\.path) == ["/a", "/b", "/c", "/d"])
        #expect(l.skippedLines == 0)
        let sub = FTPListingParser.parseLIST(text, folder: "/pub/sub/", now: march2024)
        #expect(sub.entries.map(\.path).first == "/pub/sub/a")
        let single = line("-rw-r--r-- 1 u g 1 Mar 14 09:12 x\r\n", folder: "/p q")
        #expect(single?.name == "x")
        #expect(single?.path == "/p q/x")
    }
}

@Suite struct FTPYearInferenceTests {
    /// 2024-01-02 10:00 UTC, two days into a new year.
    let newYear = Date(timeIntervalSince1970: 1_704_189_600)

    @Test func acrossTheNewYear() {
        #expect(
            line("-rw-r--r-- 1 u g 1 Dec 31 23:59 x", now: newYear)?.modified
                == ts(2023, 12, 31, 23, 59))
        #expect(
            line("-rw-r--r-- 1 u g 1 Jan 02 09:00 x", now: newYear)?.modified == ts(2024, 1, 2, 9))
        // Within a day ahead (clock skew, zones): still this year.
        #expect(
            line("-rw-r--r-- 1 u g 1 Jan 02 12:00 x", now: newYear)?.modified == ts(2024, 1, 2, 12))
        #expect(
            line("-rw-r--r-- 1 u g 1 Jan 03 09:59 x", now: newYear)?.modified
                == ts(2024, 1, 3, 9, 59))
        // More than a day ahead: last year.
        #expect(
            line("-rw-r--r-- 1 u g 1 Jan 03 10:01 x", now: newYear)?.modified
                == ts(2023, 1, 3, 10, 1))
        #expect(
            line("-rw-r--r-- 1 u g 1 Jun 15 12:00 x", now: newYear)?.modified == ts(2023, 6, 15, 12)
        )
        // Explicit years are never adjusted.
        #expect(
            line("-rw-r--r-- 1 u g 1 Jun 15  2030 x", now: newYear)?.modified == ts(2030, 6, 15))
    }

    @Test func leapDay() {
        let jan2025 = Date(timeIntervalSince1970: 1_736_503_200)  // 2025-01-10 10:00 UTC
        #expect(
            line("-rw-r--r-- 1 u g 1 Feb 29 10:00 x", now: jan2025)?.modified == ts(2024, 2, 29, 10)
        )
        let jun2026 = Date(timeIntervalSince1970: 1_781_000_000)  // no leap year this or last
        #expect(line("-rw-r--r-- 1 u g 1 Feb 29 10:00 x", now: jun2026) == nil)
    }

    @Test func yearOfNowIsReadInTheGivenZone() {
        let now = Date(timeIntervalSince1970: 1_704_074_400)  // 2024-01-01 02:00 UTC
        let newYork = TimeZone(identifier: "America/New_York")!  // 2023-12-31 21:00 there
        let text = "-rw-r--r-- 1 u g 1 Jan 01 01:00 x"
        #expect(line(text, now: now, timeZone: utc)?.modified == ts(2024, 1, 1, 1))
        #expect(line(text, now: now, timeZone: newYork)?.modified == ts(2023, 1, 1, 1))
        let l = FTPListingParser.parseLIST(
            "-rw-r--r-- 1 u g 1 Dec 31 20:00 x", folder: "/", now: now, timeZone: newYork)
        #expect(l.entries.first?.modified == ts(2023, 12, 31, 20))
    }
}

@Suite struct FTPDOSListTests {
    @Test func iis() throws {
        let l = list([
            "03-14-23  09:12AM       <DIR>          aspnet_client",
            "03-14-23  12:05PM                 1234 iisstart.htm",
            "12-31-99  11:59PM                    0 party like 1999.txt",
            "01-01-00  12:00AM                   42 y2k.txt",
            "01-01-70  12:30AM                    1 epoch.txt",
            "12-31-69  01:00PM                    1 pivot.txt",
        ])
        #expect(l.skippedLines == 0)
        #expect(l.entries.map(\.kind) == [.directory, .file, .file, .file, .file, .file])
        #expect(l.entries.map(\.size) == [nil, 1234, 0, 42, 1, 1])
        #expect(
            l.entries.map(\.name) == [
                "aspnet_client", "iisstart.htm", "party like 1999.txt", "y2k.txt", "epoch.txt",
                "pivot.txt",
            ])
        #expect(
            l.entries.map(\.modified) == [
                ts(2023, 3, 14, 9, 12), ts(2023, 3, 14, 12, 5), ts(1999, 12, 31, 23, 59),
                ts(2000, 1, 1, 0, 0),
                ts(1970, 1, 1, 0, 30), ts(2069, 12, 31, 13, 0),
            ])
        try #require(l.entries.count == 6)
        #expect(l.entries[0].path == "/pub/aspnet_client")
    }

    @Test func fourDigitYearsAnd24HourTimes() throws {
        let l = list([
            "03-14-2023  21:12       <DIR>          Program Files",
            "03-14-2023  00:00                 5368709120 big.vhd",
            "2023-03-14  09:12              1,234 commas.txt",
            "03/14/2023  09:12 PM            77 slash date.txt",
            "3-4-2023  9:05am                1 short.txt",
            "03-14-2023  09:12:59  <dir>  seconds",
            "03-14-23  09:12AM       <JUNCTION>     Docs [C:\\Users\\Docs]",
        ])
        #expect(l.skippedLines == 0)
        #expect(
            l.entries.map(\.name) == [
                "Program Files", "big.vhd", "commas.txt", "slash date.txt", "short.txt", "seconds",
                "Docs",
            ])
        #expect(l.entries.map(\.size) == [nil, 5_368_709_120, 1234, 77, 1, nil, nil])
        #expect(
            l.entries.map(\.modified) == [
                ts(2023, 3, 14, 21, 12), ts(2023, 3, 14), ts(2023, 3, 14, 9, 12),
                ts(2023, 3, 14, 21, 12),
                ts(2023, 3, 4, 9, 5), ts(2023, 3, 14, 9, 12, 59), ts(2023, 3, 14, 9, 12),
            ])
        try #require(l.entries.count == 7)
        #expect(l.entries[6].kind == .symlink)
        #expect(l.entries[6].symlinkTarget == "C:\\Users\\Docs")
    }

    @Test func badDOSLines() {
        let bad = [
            "13-14-23  09:12AM  1 month-13",
            "02-30-23  09:12AM  1 feb-30",
            "03-14-23  30:12  1 hour-30",
            "03-14-23  13:12PM  1 pm-13",
            "03-14-23  09:12XM  1 xm",
            "03-14-23  09:12AM  <FILE> unknown-field",
            "03-14-23  09:12AM  12",
            "03-14-23  09:12AM  12   ",
            "03-14-23  09:12AM",
            "03-14/23  09:12AM  1 mixed-separators",
            "03-14-231  09:12AM  1 three-digit-year",
            "1234",
        ]
        let l = list(bad + ["03-14-23  09:12AM  <DIR>  .", "03-14-23  09:12AM  1 ok"])
        #expect(l.skippedLines == bad.count)
        #expect(l.entries.map(\.name) == ["ok"])
    }
}

@Suite struct FTPMLSDTests {
    @Test func proftpdAndPyftpdlib() {
        let text =
            [
                "type=cdir;modify=20240314091200;perm=flcdmpe; .",
                "type=pdir;modify=20240314091200;perm=flcdmpe; ..",
                "modify=20240314091200;perm=adfrw;size=1024;type=file;unique=803U1;UNIX.group=1000;UNIX.mode=0644;UNIX.owner=1000; a.txt",
                "modify=20240314091200;perm=flcdmpe;type=dir;unique=803U2;UNIX.group=1000;UNIX.mode=0755;UNIX.owner=1000; my dir",
                "modify=20240314091200;perm=adfrw;size=7;type=OS.unix=slink:/pub/a.txt;unique=803U3; link",
                "modify=20240314091200;perm=adfrw;size=7;type=OS.unix=symlink;unique=803U4; link2",
                "type=file;size=5368709120;modify=20230102030405.123;perm=r; big.iso",
                "type=OS.unix=chr-4/64;modify=20240314091200; tty",
            ].joined(separator: "\r\n") + "\r\n"
        let l = FTPListingParser.parseMLSD(text, folder: "/pub")
        #expect(l.skippedLines == 0)
        #expect(
            l.entries == [
                RemoteEntry(
                    name: "a.txt", path: "/pub/a.txt", kind: .file, size: 1024,
                    modified: ts(2024, 3, 14, 9, 12, 0, .utc)),
                RemoteEntry(
                    name: "my dir", path: "/pub/my dir", kind: .directory,
                    modified: ts(2024, 3, 14, 9, 12, 0, .utc)),
                RemoteEntry(
                    name: "link", path: "/pub/link", kind: .symlink, size: 7,
                    modified: ts(2024, 3, 14, 9, 12, 0, .utc), symlinkTarget: "/pub/a.txt"),
                RemoteEntry(
                    name: "link2", path: "/pub/link2", kind: .symlink, size: 7,
                    modified: ts(2024, 3, 14, 9, 12, 0, .utc)),
                RemoteEntry(
                    name: "big.iso", path: "/pub/big.iso", kind: .file, size: 5_368_709_120,
                    modified: ts(2023, 1, 2, 3, 4, 5, .utc), isReadOnly: true),
                RemoteEntry(
                    name: "tty", path: "/pub/tty", kind: .other,
                    modified: ts(2024, 3, 14, 9, 12, 0, .utc)),
            ])
    }

    @Test func awkwardNamesAndFacts() throws {
        let l = FTPListingParser.parseMLSD(
            [
                "TYPE=File;SIZE=1;Modify=20240101000000; semi; colon; name",
                "type=file;size=2;  two leading spaces",
                "type=file;size=3; trailing ",
                "type=file;size=4;x.empty=;x.eq==a=b; odd values",
                "type=dir;sizd=4096; sized dir",
                "type=file;size=99999999999999999999999; huge",
                "type=file; 日本語.txt",
                "type=OS.unix=slink:/a b/c;size=1; spaced target",
                " no facts",
            ].joined(separator: "\n"), folder: "/")
        #expect(l.skippedLines == 0)
        #expect(
            l.entries.map(\.name) == [
                "semi; colon; name", " two leading spaces", "trailing ", "odd values", "sized dir",
                "huge", "日本語.txt",
                "spaced target", "no facts",
            ])
        #expect(l.entries.map(\.size) == [1, 2, 3, 4, 4096, nil, nil, 1, nil])
        try #require(l.entries.count == 9)
        #expect(l.entries[0].modified == ts(2024, 1, 1, 0, 0, 0, .utc))
        #expect(l.entries[7].symlinkTarget == "/a b/c")
        #expect(l.entries[8].kind == .other)
        #expect(l.entries[0].path == "/semi; colon; name")
    }

    @Test func malformedLinesAreSkipped() {
        let bad = [
            "type=file;size=abc; bad-size",
            "type=file;size=; empty-size",
            "type=file;modify=2024031409; short-modify",
            "type=file;modify=20241314091200; month-13",
            "type=file;modify=20240314301200; hour-30",
            "type=file;modify=20240332091200; day-32",
            "type=file;modify=20240314091200.; empty-fraction",
            "type=file;size12; no-equals",
            "type=file;=x; no-fact-name",
            "type=file;;size=1; empty-fact",
            "type=file;size=1 no-semicolon-space",
            "type=file;size=1;",
            "type=file;size=1; ",
            "type=file;size=1; sub/dir",
            "garbage",
        ]
        let l = FTPListingParser.parseMLSD(
            (bad + ["", "type=file; ok"]).joined(separator: "\r\n"), folder: "/pub")
        #expect(l.skippedLines == bad.count)
        #expect(l.entries.map(\.name) == ["ok"])
        for b in bad.dropLast(2) {
            #expect(FTPListingParser.parseMLSDLine(b[...], folder: "/pub") == nil, "\(b)")
        }
    }

    @Test func permissionsAndReadOnly() {
        func entry(_ s: String) -> RemoteEntry? {
            FTPListingParser.parseMLSDLine(s[...], folder: "/")
        }
        #expect(entry("type=file;perm=r; a")?.isReadOnly == true)
        #expect(entry("type=file;perm=rw; a")?.isReadOnly == false)
        #expect(entry("type=file;perm=ra; a")?.isReadOnly == false)
        #expect(entry("type=file;perm=; a")?.isReadOnly == true)
        #expect(entry("type=file; a")?.isReadOnly == false)
        #expect(entry("type=dir;perm=el; a")?.isReadOnly == false)
    }

    @Test func mlstReplyLines() {
        func entry(_ s: String, _ folder: String = "/home") -> RemoteEntry? {
            FTPListingParser.parseMLSDLine(s[...], folder: folder)
        }
        let file = entry(" type=file;size=12;modify=20240314091200; /pub/a b.txt\r\n")
        #expect(
            file
                == RemoteEntry(
                    name: "a b.txt", path: "/pub/a b.txt", kind: .file, size: 12,
                    modified: ts(2024, 3, 14, 9, 12, 0, .utc)))
        #expect(entry("type=dir; /pub/")?.path == "/pub")
        #expect(entry("type=dir; /pub/")?.name == "pub")
        #expect(entry("type=cdir;modify=20240314091200; /pub")?.kind == .directory)
        #expect(entry("type=cdir; /")?.name == "/")
        #expect(entry("type=file; sub/x")?.path == "/home/sub/x")
        #expect(entry("type=file; x")?.path == "/home/x")
        #expect(entry("type=cdir; .") == nil)
        #expect(entry("type=pdir; /") == nil)
        #expect(entry("type=file; ../etc/passwd") == nil)
        #expect(entry("type=file; ..") == nil)
        #expect(entry("type=file; a\u{0}b") == nil)
    }
}

@Suite struct FTPListingRobustnessTests {
    static let seeds = [
        "drwxr-xr-x+12 user group 4096 Mar 14 09:12 dir",
        "-rw-r--r--   1 ftp      ftp      5368709120 Jan 02  2023 big.iso",
        "lrwxrwxrwx    1 ftp      ftp             7 Mar 14 09:12 latest -> big.iso",
        "crw-rw-rw-   1 root     root       1,   3 Jan  1 00:00 null",
        "-rw-r--r-- 1 u g 10 2023-07-04 13:45:30.123456789 +0200 full-iso",
        "-rw-r--r-- 1 u g 10 Jul  4 13:45:30 2021 bsd",
        "d [RWCEAFMS] admin 512 Mar 14 09:12 SYSTEM",
        "03-14-23  09:12AM       <DIR>          aspnet_client",
        "03-14-2023  21:12                 1,234 a file.txt",
        "03-14-23  09:12AM  <JUNCTION>  Docs [C:\\x]",
        "type=file;size=1024;modify=20240314091200.5;perm=r; a; b",
        "type=OS.unix=slink:/x y;size=1; link",
        " type=dir;sizd=1; /abs/path",
        "total 42",
    ]
    static let alphabet = Array(
        " \t-:;=,+@.[]<>/0123456789AMPmpdlrwxJanFebDec2024\r\u{0}é🚀".unicodeScalars)

    static func mutate(_ s: String, _ rng: inout SeededRandom) -> String {
        var scalars = Array(s.unicodeScalars)
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let pick = alphabet.randomElement(using: &rng)!
            switch Int.random(in: 0..<6, using: &rng) {
            case 0 where !scalars.isEmpty:
                scalars.remove(at: Int.random(in: 0..<scalars.count, using: &rng))
            case 1: scalars.insert(pick, at: Int.random(in: 0...scalars.count, using: &rng))
            case 2 where !scalars.isEmpty:
                scalars[Int.random(in: 0..<scalars.count, using: &rng)] = pick
            case 3 where !scalars.isEmpty:
                scalars = Array(scalars.prefix(Int.random(in: 0..<scalars.count, using: &rng)))
            case 4:
                // Digits that overflow every integer type.
                let digits = String(repeating: "9", count: Int.random(in: 1...40, using: &rng))
                scalars.insert(
                    contentsOf: digits.unicodeScalars,
                    at: Int.random(in: 0...scalars.count, using: &rng))
            default:
                scalars = (0..<Int.random(in: 0...60, using: &rng)).map { _ in
                    alphabet.randomElement(using: &rng)!
                }
            }
        }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars.filter { $0 != "\n" })
        return String(out)
    }

    @Test func fuzzedLinesNeverCrashAndYieldWellFormedEntries() {
        var rng = SeededRandom(seed: 0x5EED)
        var lines: [String] = []
        for _ in 0..<20_000 {
            lines.append(Self.mutate(Self.seeds.randomElement(using: &rng)!, &rng))
        }
        let text = lines.joined(separator: "\n")
        for folder in ["/", "/pub"] {
            let prefix = folder == "/" ? "/" : folder + "/"
            let l = FTPListingParser.parseLIST(text, folder: folder, now: march2024)
            let m = FTPListingParser.parseMLSD(text, folder: folder)
            for parsed in [l, m] {
                #expect(parsed.entries.count + parsed.skippedLines <= lines.count)
                #expect(parsed.skippedLines > 0)
                for e in parsed.entries { expectWellFormed(e, prefix: prefix) }
            }
            // Line by line gives the same entries as the whole body.
            let singles = lines.compactMap { line($0, folder: folder) }
            #expect(singles == l.entries)
        }
        for s in lines.prefix(5_000) {
            if let e = FTPListingParser.parseMLSDLine(s[...], folder: "/pub") {
                #expect(!e.name.isEmpty && e.path.hasPrefix("/"))
                #expect(!e.path.split(separator: "/").contains { $0 == ".." })
            }
        }
    }

    @Test func randomBytesLossilyDecoded() {
        var rng = SeededRandom(seed: 42)
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...120, using: &rng)).map { _ in
                UInt8.random(in: 0...255, using: &rng)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let l = FTPListingParser.parseLIST(text, folder: "/x", now: march2024)
            let m = FTPListingParser.parseMLSD(text, folder: "/x")
            for e in l.entries + m.entries { expectWellFormed(e, prefix: "/x/") }
        }
    }

    @Test func skippedCountsInAMixedBody() {
        let body = [
            "total 3",
            "-rw-r--r-- 1 u g 1 Mar 14 09:12 one",
            "garbage line",
            "",
            "03-14-23  09:12AM  2 two",
            "-rw-r--r-- 1 u g 1 Mar 34 09:12 bad-day",
            "drwxr-xr-x 2 u g 4096 Mar 14 09:12 .",
            "03-14-23  09:12AM  <DIR>  ..",
            "type=file;size=1; mlsd-in-list",
        ].joined(separator: "\r\n")
        let l = FTPListingParser.parseLIST(body, folder: "/", now: march2024)
        #expect(l.entries.map(\.name) == ["one", "two"])
        #expect(l.skippedLines == 3)
    }

    @Test func hundredThousandLines() {
        let sample = [
            "-rw-r--r--    1 ftp      ftp      5368709120 Jan 02  2023 big file.iso",
            "drwxr-xr-x    2 ftp      ftp          4096 Mar 14 09:12 incoming",
            "lrwxrwxrwx    1 ftp      ftp             7 Mar 14 09:12 latest -> big.iso",
            "03-14-23  09:12AM                 1234 iisstart.htm",
        ]
        var lines: [String] = []
        for i in 0..<100_000 { lines.append(sample[i % 4]) }
        let text = lines.joined(separator: "\r\n")
        let clock = ContinuousClock()
        let start = clock.now
        let l = FTPListingParser.parseLIST(text, folder: "/pub", now: march2024)
        let elapsed = clock.now - start
        #expect(l.entries.count == 100_000)
        #expect(l.skippedLines == 0)
        // Debug builds are far slower than release (where this takes well under a second).
        #expect(elapsed < .seconds(10))

        let mlsd = String(
            repeating:
                "type=file;size=1024;modify=20240314091200;perm=adfrw;unique=1; name.txt\r\n",
            count: 100_000)
        #expect(FTPListingParser.parseMLSD(mlsd, folder: "/").entries.count == 100_000)
    }
}
