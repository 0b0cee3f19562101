import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// The capture date (`DateTimeOriginal`, `SubSecTimeOriginal`, `OffsetTimeOriginal`)
/// and the orientation from photos whose tags `exiftool` wrote: a JPEG and a
/// TIFF-based raw file; and hostile bytes that must give nil, never a crash or a hang.
struct CaptureDateTests {
    /// A minimal valid TIFF (1 x 1 grey, uncompressed), the structure every TIFF-based raw file has.
    static func tiff(bigEndian: Bool = false) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] {
            bigEndian ? [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)]
        }
        func u32(_ v: Int) -> [UInt8] { bigEndian ? u16(v >> 16) + u16(v & 0xFFFF) : u16(v & 0xFFFF) + u16(v >> 16) }
        func short(_ tag: Int, _ v: Int) -> [UInt8] { u16(tag) + u16(3) + u32(1) + u16(v) + u16(0) }
        func long(_ tag: Int, _ v: Int) -> [UInt8] { u16(tag) + u16(4) + u32(1) + u32(v) }
        let entries = 9
        let pixelAt = 8 + 2 + 12 * entries + 4
        var out: [UInt8] = (bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + u16(42) + u32(8) + u16(entries)
        out += short(256, 1) + short(257, 1) + short(258, 8) + short(259, 1) + short(262, 1)
        out += long(273, pixelAt) + short(277, 1) + short(278, 1) + long(279, 1)
        return out + u32(0) + [0x80, 0]
    }

    /// Writes `bytes` to `name` in `dir` and runs `exiftool ARGS` on it; the file's bytes after.
    static func exiftool(_ bytes: [UInt8], _ name: String, in dir: TempDir, _ arguments: [String]) throws -> [UInt8] {
        let exiftool = try #require(TestProcess.which("exiftool"), "exiftool is missing: run scripts/setup.sh")
        let path = dir.file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let out = try TestProcess.run(exiftool, ["-q", "-overwrite_original"] + arguments + [path])
        #expect(out.status == 0, "exiftool \(arguments): \(out.stderr)")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static let full = [
        "-DateTimeOriginal=2024:06:01 23:45:12", "-SubSecTimeOriginal=25", "-OffsetTimeOriginal=+02:00",
    ]

    @Test func readsTheDateWithSubSecondsAndOffsetFromAJPEG() throws {
        let dir = try TempDir(prefix: "capture")
        let jpeg = try Self.exiftool(SampleJPEG.withThumbnail(), "a.jpg", in: dir, Self.full)
        let date = try #require(CaptureDate.read(from: jpeg))
        #expect(
            date.local
                == RemoteTimestamp(year: 2024, month: 6, day: 1, hour: 23, minute: 45, second: 12, zone: .floating))
        #expect(date.nanoseconds == 250_000_000)
        #expect(date.utcOffsetSeconds == 7200)
        #expect(date.utc == RemoteTimestamp(year: 2024, month: 6, day: 1, hour: 21, minute: 45, second: 12, zone: .utc))
        #expect(date.timestamp == date.utc)
        #expect(date.description == "2024-06-01T23:45:12.25+02:00")
        #expect(date.date().timeIntervalSince1970 == 1_717_278_312.25)
        // From the file, reading its first bytes only; the first 64 KiB are enough.
        #expect(try CaptureDate.read(fileAt: dir.file("a.jpg")) == date)
        #expect(CaptureDate.read(from: jpeg.prefix(64 * 1024)) == date)
        #expect(ExifOrientation.read(from: jpeg) == 6, "the sample's own orientation survives exiftool")
    }

    @Test func withoutAnOffsetTheTimeFloats() throws {
        let dir = try TempDir(prefix: "capture")
        let jpeg = try Self.exiftool(
            SampleJPEG.withThumbnail(), "a.jpg", in: dir, ["-DateTimeOriginal=2019:02:28 08:00:59"])
        let date = try #require(CaptureDate.read(from: jpeg))
        #expect(date.utcOffsetSeconds == nil && date.utc == nil && date.nanoseconds == 0)
        #expect(date.timestamp.zone == .floating)
        #expect(date.timestamp.iso8601 == "2019-02-28T08:00:59" && date.description == "2019-02-28T08:00:59")
        let utc = TimeZone(identifier: "UTC")!
        #expect(date.date(floatingIn: utc) == date.local.date(floatingIn: utc))
    }

    @Test func theDigitizedTimeStandsInTheLastEditDoesNot() throws {
        let dir = try TempDir(prefix: "capture")
        let digitized = try Self.exiftool(
            SampleJPEG.withThumbnail(), "d.jpg", in: dir,
            ["-CreateDate=2020:01:02 03:04:05", "-SubSecTimeDigitized=5", "-OffsetTimeDigitized=-03:30"])
        let date = try #require(CaptureDate.read(from: digitized))
        #expect(date.description == "2020-01-02T03:04:05.5-03:30")
        let edited = try Self.exiftool(
            SampleJPEG.withThumbnail(), "e.jpg", in: dir, ["-ModifyDate=2020:01:02 03:04:05"])
        #expect(CaptureDate.read(from: edited) == nil)
        #expect(CaptureDate.read(from: SampleJPEG.withThumbnail()) == nil)
    }

    @Test func readsATIFFBasedRawFile() throws {
        let dir = try TempDir(prefix: "capture")
        let raw = try Self.exiftool(
            Self.tiff(), "IMG_0001.tif", in: dir,
            [
                "-DateTimeOriginal=2023:12:31 23:59:59", "-SubSecTimeOriginal=123456789123",
                "-OffsetTimeOriginal=-05:00",
                "-Orientation#=8",
            ])
        let date = try #require(CaptureDate.read(from: raw))
        #expect(date.local.iso8601 == "2023-12-31T23:59:59")
        #expect(date.nanoseconds == 123_456_789, "digits past the ninth are dropped")
        #expect(date.utc?.iso8601 == "2024-01-01T04:59:59Z", "the UTC day is the next one")
        #expect(ExifOrientation.read(from: raw) == 8)
        // Big-endian too.
        let mm = try Self.exiftool(
            Self.tiff(bigEndian: true), "IMG_0002.tif", in: dir,
            ["-DateTimeOriginal=2023:12:31 23:59:59", "-SubSecTimeOriginal=123456789123", "-OffsetTimeOriginal=-05:00"])
        #expect(mm.starts(with: [0x4D, 0x4D]), "exiftool wrote big-endian")
        #expect(CaptureDate.read(from: mm) == date)
    }

    @Test func impossibleAndBlankDatesAreNone() throws {
        for text in [
            "0000:00:00 00:00:00", "2024:02:30 12:00:00", "2024:13:01 12:00:00", "2024:06:01 24:00:00",
            "    :  :     :  :  ", "2024:06:01", "2024:06:01X12:00:00", "２０２４:06:01 12:00:00",
        ] {
            #expect(CaptureDate.read(from: Self.jpeg(dateTimeOriginal: text)) == nil, "\(text)")
        }
        #expect(
            CaptureDate.read(from: Self.jpeg(dateTimeOriginal: "2024-06-01 12:00:00"))?.local.iso8601
                == "2024-06-01T12:00:00")
        for (offset, seconds) in [
            ("+05:45", 20_700), ("-00:00", 0), ("+18:00", 64_800), ("+19:00", nil), ("0530", nil), ("+5:30", nil),
            ("+05:60", nil),
        ] {
            #expect(
                CaptureDate.read(from: Self.jpeg(dateTimeOriginal: "2024:06:01 12:00:00", offset: offset))?
                    .utcOffsetSeconds == seconds, "\(offset)")
        }
    }

    /// Every prefix of a real file: nil or the right date, never anything else; and
    /// 3,000 seeded single-byte corruptions: no crash, no hang.
    @Test func truncatedAndCorruptedFilesNeverCrash() throws {
        let dir = try TempDir(prefix: "capture")
        let jpeg = try Self.exiftool(SampleJPEG.withThumbnail(), "a.jpg", in: dir, Self.full)
        let raw = try Self.exiftool(Self.tiff(), "a.tif", in: dir, Self.full)
        for file in [jpeg, raw] {
            let want = try #require(CaptureDate.read(from: file))
            var found = 0
            for n in 0...file.count {
                if let got = CaptureDate.read(from: file.prefix(n)) {
                    #expect(got.local == want.local, "prefix \(n)")
                    found += 1
                }
                _ = ExifOrientation.read(from: file.prefix(n))
            }
            #expect(found > 0)
            var random = SeededRandom(seed: 26)
            for _ in 0..<3000 {
                var broken = file
                broken[Int(random.next() % UInt64(broken.count))] = UInt8(truncatingIfNeeded: random.next())
                if let date = CaptureDate.read(from: broken) { _ = date.description }
                _ = ExifOrientation.read(from: broken)
            }
        }
    }

    /// IFDs that point at themselves or at each other, counts past the end, offsets past the end.
    @Test func loopingIFDsAndBogusOffsetsEnd() {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }
        // IFD0 at 8: its Exif pointer is IFD0 itself, and its next IFD too.
        let loop: [UInt8] =
            [0x49, 0x49, 0x2A, 0] + le32(8) + le16(1) + le16(0x8769) + le16(4) + le32(1) + le32(8) + le32(8)
        #expect(CaptureDate.read(from: loop) == nil)
        // A date whose count says 4 GB, one whose offset lies past the end, an IFD of 65,535 entries.
        let huge: [UInt8] =
            [0x49, 0x49, 0x2A, 0] + le32(8) + le16(1) + le16(0x9003) + le16(2) + le32(0xFFFF_FFFF) + le32(26) + le32(0)
        #expect(CaptureDate.read(from: huge) == nil)
        let past: [UInt8] =
            [0x49, 0x49, 0x2A, 0] + le32(8) + le16(1) + le16(0x9003) + le16(2) + le32(20) + le32(0x7FFF_FFF0) + le32(0)
        #expect(CaptureDate.read(from: past) == nil)
        let many: [UInt8] = [0x49, 0x49, 0x2A, 0] + le32(8) + le16(0xFFFF) + [UInt8](repeating: 0x41, count: 5000)
        #expect(CaptureDate.read(from: many) == nil && ExifOrientation.read(from: many) == nil)
        // An IFD0 offset that is negative as a signed number, or before the header's end.
        #expect(CaptureDate.read(from: [0x4D, 0x4D, 0, 0x2A, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0]) == nil)
        #expect(CaptureDate.read(from: [0x49, 0x49, 0x2A, 0, 2, 0, 0, 0, 0, 0]) == nil)
        // A JPEG whose markers run off the end, or lie about their length.
        #expect(CaptureDate.read(from: [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 0x45, 0x78, 0x69, 0x66, 0, 0]) == nil)
        #expect(CaptureDate.read(from: [0xFF, 0xD8, 0xFF, 0xE1, 0, 0, 0, 0, 0, 0]) == nil)
        #expect(CaptureDate.read(from: [UInt8]()) == nil)
        #expect(throws: FerryError.self) { try CaptureDate.read(fileAt: "/nonexistent/photo.jpg") }
    }

    @Test func orientationHelpers() {
        #expect(ExifOrientation.displayedSize(width: 6000, height: 4000, orientation: 6) == (4000, 6000))
        #expect(ExifOrientation.displayedSize(width: 6000, height: 4000, orientation: 3) == (6000, 4000))
        #expect(ExifOrientation.displayedSize(width: 6000, height: 4000, orientation: nil) == (6000, 4000))
        let thumbnail = EXIFThumbnail.Thumbnail(jpeg: Data(), width: 4000, height: 3000, orientation: 8)
        #expect(thumbnail.displayedWidth == 3000 && thumbnail.displayedHeight == 4000)
        #expect(ExifOrientation.read(from: SampleJPEG.withThumbnail(orientation: 9)) == nil, "outside 1...8")
        #expect(ExifOrientation.read(from: SampleJPEG.withThumbnail(orientation: 7)) == 7)
    }

    /// A JPEG whose Exif IFD holds `DateTimeOriginal` = `text` (and `OffsetTimeOriginal`), byte by byte.
    static func jpeg(dateTimeOriginal text: String, offset: String? = nil) -> [UInt8] {
        func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func be32(_ v: Int) -> [UInt8] { be16(v >> 16) + be16(v & 0xFFFF) }
        let date = Array(text.utf8) + [0]
        let zone = offset.map { Array($0.utf8) + [0] }
        let count = zone == nil ? 1 : 2
        let exifAt = 8 + 2 + 12 + 4
        let dataAt = exifAt + 2 + 12 * count + 4
        var tiff: [UInt8] = [0x4D, 0x4D, 0, 0x2A] + be32(8) + be16(1) + be16(0x8769) + be16(4) + be32(1) + be32(exifAt)
        tiff += be32(0) + be16(count) + be16(0x9003) + be16(2) + be32(date.count) + be32(dataAt)
        if let zone { tiff += be16(0x9011) + be16(2) + be32(zone.count) + be32(dataAt + date.count) }
        tiff += be32(0) + date + (zone ?? [])
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        return [0xFF, 0xD8, 0xFF, 0xE1] + be16(payload.count + 2) + payload + [0xFF, 0xD9]
    }
}
