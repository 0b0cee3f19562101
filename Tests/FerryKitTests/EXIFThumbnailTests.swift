import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// A tiny stand-in thumbnail: SOI, a comment, EOI.
private let sampleThumbnail: [UInt8] =
    [0xFF, 0xD8, 0xFF, 0xFE, 0x00, 0x07] + Array("thumb".utf8) + [0xFF, 0xD9]

/// Builds the TIFF part of an Exif segment by hand:
/// header, IFD0 (Orientation, ExifIFD pointer), Exif IFD (PixelX/YDimension),
/// IFD1 (Compression, JPEGInterchangeFormat, JPEGInterchangeFormatLength), thumbnail.
private struct TIFFBuilder {
    var bigEndian: Bool
    var orientation: Int? = 6
    var pixelSize: (width: Int, height: Int)? = (4000, 3000)
    var pixelAsLong = false
    var thumbnail: [UInt8]? = sampleThumbnail
    /// Added to the real offset / length written in IFD1 (to make them lie).
    var thumbnailOffsetDelta = 0
    var thumbnailLengthDelta = 0
    /// Overrides IFD0's next-IFD pointer.
    var ifd1OffsetOverride: Int?
    /// Overrides the Exif IFD pointer.
    var exifOffsetOverride: Int?

    func u16(_ v: Int) -> [UInt8] {
        let b = [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
        return bigEndian ? b : b.reversed()
    }

    func u32(_ v: Int) -> [UInt8] {
        let b = [
            UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF),
        ]
        return bigEndian ? b : b.reversed()
    }

    /// One 12-byte entry; SHORT values are left-justified in the 4-byte field.
    func entry(_ tag: Int, short value: Int) -> [UInt8] {
        u16(tag) + u16(3) + u32(1) + u16(value) + [0, 0]
    }

    func entry(_ tag: Int, long value: Int) -> [UInt8] {
        u16(tag) + u16(4) + u32(1) + u32(value)
    }

    func ifd(_ entries: [[UInt8]], next: Int) -> [UInt8] {
        u16(entries.count) + entries.flatMap { $0 } + u32(next)
    }

    func build() -> [UInt8] {
        let ifd0Count = (orientation == nil ? 0 : 1) + (pixelSize == nil ? 0 : 1)
        let ifd0Offset = 8
        let exifOffset = ifd0Offset + 2 + 12 * ifd0Count + 4
        let exifSize = pixelSize == nil ? 0 : 2 + 12 * 2 + 4
        let ifd1Offset = exifOffset + exifSize
        let thumbOffset = ifd1Offset + 2 + 12 * 3 + 4

        var ifd0Entries: [[UInt8]] = []
        if let orientation { ifd0Entries.append(entry(0x0112, short: orientation)) }
        if pixelSize != nil {
            ifd0Entries.append(entry(0x8769, long: exifOffsetOverride ?? exifOffset))
        }

        var out: [UInt8] = bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        out += u16(42) + u32(ifd0Offset)
        out += ifd(ifd0Entries, next: ifd1OffsetOverride ?? (thumbnail == nil ? 0 : ifd1Offset))
        if let pixelSize {
            let entries =
                pixelAsLong
                ? [entry(0xA002, long: pixelSize.width), entry(0xA003, long: pixelSize.height)]
                : [entry(0xA002, short: pixelSize.width), entry(0xA003, short: pixelSize.height)]
            out += ifd(entries, next: 0)
        }
        if let thumbnail {
            out += ifd(
                [
                    entry(0x0103, short: 6),
                    entry(0x0201, long: thumbOffset + thumbnailOffsetDelta),
                    entry(0x0202, long: thumbnail.count + thumbnailLengthDelta),
                ], next: 0)
            out += thumbnail
        }
        return out
    }
}

private func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
    let length = payload.count + 2
    return [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
}

private func exifSegment(_ tiff: [UInt8]) -> [UInt8] {
    segment(0xE1, Array("Exif".utf8) + [0, 0] + tiff)
}

private func sof(_ marker: UInt8 = 0xC0, width: Int, height: Int) -> [UInt8] {
    segment(
        marker,
        [8, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF), 3]
            + [1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1])
}

/// SOI, the given segments, a scan and EOI.
private func jpeg(_ segments: [[UInt8]]) -> [UInt8] {
    [0xFF, 0xD8] + segments.flatMap { $0 } + segment(0xDA, [1, 1, 0, 0, 0x3F, 0])
        + [0x12, 0x34, 0xFF, 0x00, 0x56] + [0xFF, 0xD9]
}

private func standardJPEG(bigEndian: Bool) -> [UInt8] {
    jpeg([exifSegment(TIFFBuilder(bigEndian: bigEndian).build()), sof(width: 4000, height: 3000)])
}

@Suite struct EXIFThumbnailTests {
    @Test(arguments: [false, true])
    func bothByteOrders(bigEndian: Bool) throws {
        let file = standardJPEG(bigEndian: bigEndian)
        let t = try #require(EXIFThumbnail.extract(fromJPEG: file))
        #expect(Array(t.jpeg) == sampleThumbnail)
        #expect(t.width == 4000)
        #expect(t.height == 3000)
        #expect(t.orientation == 6)
    }

    @Test(arguments: [false, true])
    func pixelDimensionsAsLong(bigEndian: Bool) throws {
        var b = TIFFBuilder(bigEndian: bigEndian)
        b.pixelSize = (70_000, 65_536)
        b.pixelAsLong = true
        let t = try #require(EXIFThumbnail.extract(fromJPEG: jpeg([exifSegment(b.build())])))
        #expect(t.width == 70_000)
        #expect(t.height == 65_536)
    }

    @Test func exifDimensionsWinOverFrameHeader() throws {
        let file = jpeg([
            exifSegment(TIFFBuilder(bigEndian: false).build()), sof(width: 640, height: 480),
        ])
        let t = try #require(EXIFThumbnail.extract(fromJPEG: file))
        #expect(t.width == 4000)
        #expect(t.height == 3000)
    }

    @Test(arguments: [UInt8(0xC0), 0xC2, 0xC1])
    func fallsBackToFrameHeader(marker: UInt8) throws {
        var b = TIFFBuilder(bigEndian: true)
        b.pixelSize = nil
        let file = jpeg([
            exifSegment(b.build()), segment(0xDB, [0] + Array(repeating: 1, count: 64)),
            sof(marker, width: 1920, height: 1080),
        ])
        let t = try #require(EXIFThumbnail.extract(fromJPEG: file))
        #expect(t.width == 1920)
        #expect(t.height == 1080)
        #expect(t.orientation == 6)
    }

    @Test func noDimensionsAnywhere() throws {
        var b = TIFFBuilder(bigEndian: false)
        b.pixelSize = nil
        b.orientation = nil
        let t = try #require(EXIFThumbnail.extract(fromJPEG: jpeg([exifSegment(b.build())])))
        #expect(Array(t.jpeg) == sampleThumbnail)
        #expect(t.width == nil)
        #expect(t.height == nil)
        #expect(t.orientation == nil)
    }

    @Test func zeroExifDimensionsFallBack() throws {
        var b = TIFFBuilder(bigEndian: false)
        b.pixelSize = (0, 0)
        let t = try #require(
            EXIFThumbnail.extract(
                fromJPEG: jpeg([exifSegment(b.build()), sof(width: 10, height: 20)])))
        #expect(t.width == 10)
        #expect(t.height == 20)
    }

    @Test(arguments: [0, 9, 0xFFFF])
    func invalidOrientationIsNil(_ value: Int) throws {
        var b = TIFFBuilder(bigEndian: true)
        b.orientation = value
        let t = try #require(EXIFThumbnail.extract(fromJPEG: jpeg([exifSegment(b.build())])))
        #expect(t.orientation == nil)
    }

    @Test func segmentsBeforeExif() throws {
        let jfif = segment(0xE0, Array("JFIF".utf8) + [0, 1, 2, 0, 0, 1, 0, 1, 0, 0])
        let xmp = segment(
            0xE1, Array("http://ns.adobe.com/xap/1.0/".utf8) + [0] + Array("<x:xmpmeta/>".utf8))
        let file = jpeg([
            jfif, xmp, [0xFF, 0xFF], exifSegment(TIFFBuilder(bigEndian: false).build()),
        ])
        let t = try #require(EXIFThumbnail.extract(fromJPEG: file))
        #expect(Array(t.jpeg) == sampleThumbnail)
    }

    @Test func collectionKinds() throws {
        let file = standardJPEG(bigEndian: true)
        #expect(EXIFThumbnail.extract(fromJPEG: Data(file)).map { Array($0.jpeg) } == sampleThumbnail)
        let padded = [0x00, 0x01] + file
        #expect(EXIFThumbnail.extract(fromJPEG: padded[2...]).map { Array($0.jpeg) } == sampleThumbnail)
        // Not contiguous: a lazily mapped range.
        let lazy = (0..<file.count).lazy.map { file[$0] }
        #expect(EXIFThumbnail.extract(fromJPEG: lazy).map { Array($0.jpeg) } == sampleThumbnail)
    }

    @Test func withoutThumbnailOrExif() {
        var b = TIFFBuilder(bigEndian: false)
        b.thumbnail = nil
        #expect(EXIFThumbnail.extract(fromJPEG: jpeg([exifSegment(b.build())])) == nil)
        #expect(EXIFThumbnail.extract(fromJPEG: jpeg([sof(width: 10, height: 10)])) == nil)
        #expect(EXIFThumbnail.extract(fromJPEG: [UInt8]()) == nil)
        #expect(EXIFThumbnail.extract(fromJPEG: [0xFF, 0xD8]) == nil)
        #expect(
            EXIFThumbnail.extract(fromJPEG: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == nil
        )
        // "Exif" without the NUL, and a bad TIFF byte order mark.
        let noNul = segment(
            0xE1, Array("Exif".utf8) + [0x20, 0] + TIFFBuilder(bigEndian: false).build())
        #expect(EXIFThumbnail.extract(fromJPEG: jpeg([noNul])) == nil)
        var badOrder = TIFFBuilder(bigEndian: false).build()
        badOrder[0] = 0x4D
        #expect(EXIFThumbnail.extract(fromJPEG: jpeg([exifSegment(badOrder)])) == nil)
        var badMagic = TIFFBuilder(bigEndian: true).build()
        badMagic[3] = 43
        #expect(EXIFThumbnail.extract(fromJPEG: jpeg([exifSegment(badMagic)])) == nil)
    }

    @Test func exifAfterScanIsNotSeen() {
        // Headers end at SOS; an APP1 after it is image data.
        let file =
            [0xFF, 0xD8] + segment(0xDA, [1, 1, 0, 0, 0x3F, 0])
            + exifSegment(TIFFBuilder(bigEndian: false).build())
        #expect(EXIFThumbnail.extract(fromJPEG: file) == nil)
    }

    @Test func thumbnailMustBeAJPEG() {
        var b = TIFFBuilder(bigEndian: false)
        b.thumbnail = [0x00, 0x00, 0x00, 0x00, 0x00]
        #expect(EXIFThumbnail.extract(fromJPEG: jpeg([exifSegment(b.build())])) == nil)
    }

    @Test(arguments: [
        (1, 0), (0, 1), (0, 1000), (-1, 0), (0, -sampleThumbnail.count),
        (0, -sampleThumbnail.count + 2), (100_000, 0), (-100, 0), (0, 0x7FFF_FFFF),
        (0x7FFF_FFF0, 0x7FFF_FFF0),
    ])
    func thumbnailBoundsAreChecked(offsetDelta: Int, lengthDelta: Int) {
        var b = TIFFBuilder(bigEndian: true)
        b.thumbnailOffsetDelta = offsetDelta
        b.thumbnailLengthDelta = lengthDelta
        #expect(EXIFThumbnail.extract(fromJPEG: jpeg([exifSegment(b.build())])) == nil)
    }

    @Test func thumbnailMustLieInsideTheSegment() {
        // The thumbnail's bytes exist in the file, but past the APP1 segment's end.
        let tiff = TIFFBuilder(bigEndian: false).build()
        let cut = tiff.count - sampleThumbnail.count
        var app1 = exifSegment(Array(tiff[..<cut]))
        app1 += sampleThumbnail
        #expect(EXIFThumbnail.extract(fromJPEG: jpeg([app1])) == nil)
    }

    @Test func ifdLoopsAreDetected() {
        var toSelf = TIFFBuilder(bigEndian: false)
        toSelf.ifd1OffsetOverride = 8  // IFD0's "next" is IFD0
        #expect(EXIFThumbnail.extract(fromJPEG: jpeg([exifSegment(toSelf.build())])) == nil)

        var exifLoop = TIFFBuilder(bigEndian: true)
        exifLoop.exifOffsetOverride = 8  // the Exif IFD pointer leads back to IFD0
        let file = jpeg([exifSegment(exifLoop.build()), sof(width: 33, height: 44)])
        let t = EXIFThumbnail.extract(fromJPEG: file)
        #expect(t.map { Array($0.jpeg) } == sampleThumbnail)
        #expect(t?.width == 33)
        #expect(t?.height == 44)
    }

    @Test func absurdIFDCountsAreRejected() {
        var tiff = TIFFBuilder(bigEndian: true).build()
        tiff[8] = 0xFF
        tiff[9] = 0xFF
        #expect(EXIFThumbnail.extract(fromJPEG: jpeg([exifSegment(tiff)])) == nil)
        var pointerOut = TIFFBuilder(bigEndian: false)
        pointerOut.ifd1OffsetOverride = 0x7FFF_FFFF
        pointerOut.exifOffsetOverride = 0xFFFF_FFFF
        #expect(EXIFThumbnail.extract(fromJPEG: jpeg([exifSegment(pointerOut.build())])) == nil)
    }

    @Test func brokenMarkerLengths() {
        let tiff = TIFFBuilder(bigEndian: false).build()
        // Length 0 and 1 are impossible; the walk stops instead of looping.
        #expect(
            EXIFThumbnail.extract(
                fromJPEG: [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00] + exifSegment(tiff)) == nil)
        #expect(
            EXIFThumbnail.extract(
                fromJPEG: [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01] + exifSegment(tiff)) == nil)
        // An APP1 claiming more than there is: the TIFF is cut at the data's end.
        var long = exifSegment(tiff)
        long[2] = 0xFF
        long[3] = 0xFF
        #expect(EXIFThumbnail.extract(fromJPEG: [0xFF, 0xD8] + long).map { Array($0.jpeg) } == sampleThumbnail)
        // Standalone markers (RST, TEM) between segments are skipped.
        #expect(
            EXIFThumbnail.extract(
                fromJPEG: [0xFF, 0xD8, 0xFF, 0xD0, 0xFF, 0x01] + exifSegment(tiff)
            ).map { Array($0.jpeg) } == sampleThumbnail)
    }

    @Test func everyTruncationIsSafe() {
        for bigEndian in [false, true] {
            let file = standardJPEG(bigEndian: bigEndian)
            let exifEnd = 2 + exifSegment(TIFFBuilder(bigEndian: bigEndian).build()).count
            for n in 0...file.count {
                let t = EXIFThumbnail.extract(fromJPEG: file[..<n])
                #expect((t != nil) == (n >= exifEnd), "prefix \(n)")
            }
        }
    }

    @Test func mutatedFilesNeverCrash() {
        var rng = SeededRandom(seed: 11)
        let interesting: [UInt8] = [
            0x00, 0x01, 0x02, 0x08, 0x0C, 0x2A, 0xD8, 0xD9, 0xDA, 0xE1, 0xFF, 0x7F, 0x80,
        ]
        for seed in 0..<4000 {
            var bytes = standardJPEG(bigEndian: seed % 2 == 0)
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: bytes[at] = .random(in: 0...255, using: &rng)
                case 1: bytes[at] = interesting.randomElement(using: &rng)!
                case 2: bytes.remove(at: at)
                case 3: bytes.insert(interesting.randomElement(using: &rng)!, at: at)
                default: bytes[at] ^= 1 << UInt8.random(in: 0...7, using: &rng)
                }
                if bytes.isEmpty { break }
            }
            if let t = EXIFThumbnail.extract(fromJPEG: bytes) {
                #expect(t.jpeg.count <= bytes.count)
                #expect(Array(t.jpeg.prefix(2)) == [0xFF, 0xD8])
                if let o = t.orientation { #expect((1...8).contains(o)) }
            }
        }
    }

    @Test func randomTIFFNeverCrashes() {
        var rng = SeededRandom(seed: 12)
        for i in 0..<4000 {
            var tiff: [UInt8] =
                i % 2 == 0
                ? [0x49, 0x49, 0x2A, 0x00, 0x08, 0, 0, 0] : [0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8]
            // Mostly small numbers, so offsets and counts often land in bounds.
            for _ in 0..<Int.random(in: 0...200, using: &rng) {
                tiff.append(
                    Bool.random(using: &rng)
                        ? .random(in: 0...24, using: &rng) : .random(in: 0...255, using: &rng))
            }
            let file = jpeg([exifSegment(tiff)])
            if let t = EXIFThumbnail.extract(fromJPEG: file) {
                #expect(Array(t.jpeg.prefix(2)) == [0xFF, 0xD8])
            }
            _ = EXIFThumbnail.extract(
                fromJPEG: [0xFF, 0xD8]
                    + (0..<Int.random(in: 0...100, using: &rng)).map { _ in
                        UInt8.random(in: 0...255, using: &rng)
                    })
        }
    }

    @Test func readsOnlyAPrefixOfAFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "exif-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        // A maximal APP0 and APP1 still fit in the prefix; 1 MiB of "image data" follows.
        var b = TIFFBuilder(bigEndian: true)
        b.thumbnail = sampleThumbnail + Array(repeating: 0xAB, count: 60_000)
        let app0 = segment(0xE0, Array(repeating: 0x20, count: 65_533))
        let app1 = exifSegment(b.build())
        #expect(2 + app0.count + app1.count <= EXIFThumbnail.sufficientPrefixLength)
        let big = jpeg([app0, app1]) + Array(repeating: 0x55, count: 1 << 20)
        let path = dir.appendingPathComponent("IMG_0001.JPG").path
        try Data(big).write(to: URL(fileURLWithPath: path))
        let t = try #require(try EXIFThumbnail.extract(fromFileAt: path))
        #expect(t.jpeg.count == sampleThumbnail.count + 60_000)

        let small = dir.appendingPathComponent("small.jpg").path
        try Data(standardJPEG(bigEndian: false)).write(to: URL(fileURLWithPath: small))
        #expect(try EXIFThumbnail.extract(fromFileAt: small)?.orientation == 6)

        let empty = dir.appendingPathComponent("empty.jpg").path
        try Data().write(to: URL(fileURLWithPath: empty))
        #expect(try EXIFThumbnail.extract(fromFileAt: empty) == nil)

        #expect(throws: FerryError.self) {
            try EXIFThumbnail.extract(fromFileAt: dir.appendingPathComponent("missing.jpg").path)
        }
    }
}
