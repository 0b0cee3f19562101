import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// The journal's time validator as a type (`SourceTime`, issue 27 item 3), and
/// journals written before it: `.part` files on users' disks must still resume.
struct DownloadJournalTests {
    /// A journal as version 1 wrote it, before `modifiedKind` existed.
    static func oldJournal(source: String, lastModified: String, boot: String = "boot") -> Data {
        Data(
            """
            {"bootID":"\(boot)","durableLength":4096,"lastModified":"\(lastModified)",\
            "source":"\(source)","totalSize":10000,"version":1}
            """.utf8)
    }

    static func decode(_ data: Data) throws -> DownloadJournal {
        try JSONDecoder().decode(DownloadJournal.self, from: data)
    }

    /// Each source's format of today, read as what it was meant.
    @Test(arguments: [
        ("https://host/f.bin", "Tue, 01 Dec 2026 05:14:44 GMT", SourceTime.httpDate("Tue, 01 Dec 2026 05:14:44 GMT")),
        ("ftp://host/pub/f.bin", "20261201051444", SourceTime.mdtm("20261201051444")),
        ("ftp://host/pub/f.bin", "20261201051444.250", SourceTime.mdtm("20261201051444.250")),
        ("sftp://nas/f.bin", "1796102084", SourceTime.stamp(seconds: 1_796_102_084, nanoseconds: 0)),
        ("/home/me/f.bin", "@1700000000.123456789", SourceTime.stamp(seconds: 1_700_000_000, nanoseconds: 123_456_789)),
        ("smb://nas/share/f.bin", "@1700000000.5", SourceTime.stamp(seconds: 1_700_000_000, nanoseconds: 5)),
        // An HTTP server's date is its text, whatever it looks like (it goes back in If-Range).
        ("http://host/f.bin", "20261201051444", SourceTime.httpDate("20261201051444")),
        ("http://host/f.bin", "@1.2", SourceTime.httpDate("@1.2")),
        // Digits are Unix seconds only from SFTP.
        ("ftp://host/f.bin", "1796102084", SourceTime.httpDate("1796102084")),
    ])
    func journalsOfTodaysFormatReadTheirTime(source: String, text: String, expected: SourceTime) throws {
        let j = try Self.decode(Self.oldJournal(source: source, lastModified: text))
        #expect(j.modified == expected)
        #expect(j.durableLength == 4096 && j.totalSize == 10000 && j.source == source && j.version == 1)
    }

    /// A journal written now reads back the same, and still carries today's
    /// `lastModified` text, which an older Ferry reads as before.
    @Test(arguments: [
        SourceTime.httpDate("Tue, 01 Dec 2026 05:14:44 GMT"), .httpDate("1796102084"), .mdtm("20261201051444.250"),
        .stamp(seconds: 1_700_000_000, nanoseconds: 123_456_789), .stamp(seconds: -5, nanoseconds: 0),
    ])
    func journalsRoundTrip(time: SourceTime) throws {
        var j = DownloadJournal(source: "ftp://host/f.bin", identity: "id", bootID: "boot")
        j.etag = "\"e\""
        j.modified = time
        j.totalSize = 5
        j.finalSource = "ftp://other/f.bin"
        j.unverifiable = true
        j.durableLength = 3
        let data = try JSONEncoder().encode(j)
        #expect(try Self.decode(data) == j)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["lastModified"] as? String == time.text)
        #expect(object["modifiedKind"] as? String == time.kind)
    }

    @Test func aJournalWithAKindThisVersionDoesNotKnowIsNotResumed() throws {
        let dir = try TempDir(prefix: "journal")
        let path = dir.file("f.part.journal")
        try Data(
            #"{"bootID":"b","durableLength":1,"lastModified":"x","modifiedKind":"future","source":"s","version":1}"#
                .utf8
        ).write(to: URL(fileURLWithPath: path))
        #expect(DownloadJournal.load(from: path) == nil)
    }

    @Test func eachKindComparesAsItsSourceMeansIt() {
        #expect(SourceTime.mdtm("20240501120000").sameVersion(as: .mdtm("20240501120000.250")))
        #expect(!SourceTime.mdtm("20240501120000").sameVersion(as: .mdtm("20240501120001")))
        #expect(!SourceTime.httpDate("Mon, 01 Jan 2024 00:00:00 GMT").sameVersion(as: .httpDate("Mon, 01 Jan 2024")))
        #expect(SourceTime.stamp(seconds: 1, nanoseconds: 2).sameVersion(as: .stamp(seconds: 1, nanoseconds: 2)))
        #expect(!SourceTime.stamp(seconds: 1, nanoseconds: 2).sameVersion(as: .stamp(seconds: 1, nanoseconds: 3)))
        #expect(!SourceTime.mdtm("19700101000001").sameVersion(as: .stamp(seconds: 1, nanoseconds: 0)))
    }

    @Test func eachKindIsADate() {
        let d = Date(timeIntervalSince1970: 1_796_102_084)
        #expect(SourceTime.httpDate("Tue, 01 Dec 2026 05:14:44 GMT").date == d)
        #expect(SourceTime.mdtm("20261201051444").date == d)
        #expect(SourceTime.stamp(seconds: 1_796_102_084, nanoseconds: 0).date == d)
        #expect(SourceTime.httpDate("yesterday").date == nil)
        #expect(SourceTime.mdtm("2026").date == nil)
    }

    /// An SFTP part left by today's Ferry (its time as plain Unix seconds) is
    /// continued when the server's `stat` still says that time.
    @Test func anSFTPPartOfTodaysFormatContinues() throws {
        let j = try Self.decode(Self.oldJournal(source: "sftp://nas/f.bin", lastModified: "1796102084"))
        var m = SizeAndTimeDownloadDecision(offset: 4096, journal: j, listed: nil, display: "sftp://nas/f.bin")
        let action = m.handle(
            .head(.init(size: 10000, modified: .stamp(seconds: 1_796_102_084, nanoseconds: 0))))
        #expect(
            action
                == .begin(
                    PartStart(at: 4096, modified: .stamp(seconds: 1_796_102_084, nanoseconds: 0), totalSize: 10000)))
    }

    /// A local copy's `.part` with a journal of today's format resumes from its
    /// bytes, and the copy carries the source's time (issue 27 item 3).
    @Test func aLocalCopysPartOfTodaysFormatResumes() async throws {
        let dir = try TempDir(prefix: "journal-local")
        let source = dir.file("src.bin")
        let data = try TestData.file(source, size: 3_000_000)
        var times = [
            timespec(tv_sec: 1_700_000_000, tv_nsec: 123_456_789),
            timespec(tv_sec: 1_700_000_000, tv_nsec: 123_456_789),
        ]
        #expect(utimensat(AT_FDCWD, source, &times, 0) == 0)
        let dest = dir.file("dst.bin")
        try data.prefix(2_000_000).write(to: URL(fileURLWithPath: dest + ".part"))
        try Data(
            """
            {"bootID":"\(DownloadJournal.currentBootID)","durableLength":2000000,\
            "lastModified":"@1700000000.123456789","source":"\(source)","totalSize":3000000,"version":1}
            """.utf8
        ).write(to: URL(fileURLWithPath: dest + ".part.journal"))
        let fs = LocalFileSystem(url: try RemoteURL(parsing: dir.path))
        let r = try await fs.download(source, to: dest, options: .init()).result
        #expect(r.resumedFrom == 2_000_000)
        #expect(r.bytesTransferred == 1_000_000)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data)
        let expected = Date(timeIntervalSince1970: 1_700_000_000.123456789)
        #expect(abs((r.sourceModified ?? .distantPast).timeIntervalSince(expected)) < 1e-5)
        var st = stat()
        #expect(lstat(dest, &st) == 0)
        #expect(st.st_mtim.tv_sec == 1_700_000_000 && abs(Int(st.st_mtim.tv_nsec) - 123_456_789) < 1_000)
        #expect(!FileManager.default.fileExists(atPath: dest + ".part.journal"))
    }
}
