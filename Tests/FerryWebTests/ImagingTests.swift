import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// libjpeg-turbo through the CJPEG shim: scaled decoding, encoding, errors
/// that do not end the process, and the demo's photos with Exif thumbnails.
struct ImagingTests {
    @Test func samplePhotosCarryAnExifThumbnail() async throws {
        // The demo's size; drawn on a thread of its own (slow in a debug build).
        let bytes = try await onThread { try SamplePhotos.jpeg(index: 7, width: 1600, height: 1200) }
        #expect(bytes.count > 200_000 && bytes.count < 900_000, "\(bytes.count) bytes")
        #expect(Array(bytes.prefix(4)) == [0xFF, 0xD8, 0xFF, 0xE1], "APP1 right after SOI")
        let thumbnail = try #require(EXIFThumbnail.extract(fromJPEG: bytes))
        #expect(thumbnail.width == 1600 && thumbnail.height == 1200)
        #expect(thumbnail.orientation == 1)
        let small = try JPEGCodec.decode(data: thumbnail.jpeg)
        #expect(small.image.width == 160 && small.image.height == 120)
    }

    @Test func decodesWithDCTScaling() async throws {
        let bytes = try await onThread { try SamplePhotos.jpeg(index: 2, width: 800, height: 600, grain: 0) }
        let full = try JPEGCodec.decode(data: bytes)
        #expect(full.image.width == 800 && full.scaleDenominator == 1)
        let eighth = try JPEGCodec.decode(data: bytes, minSide: 100)
        #expect(eighth.scaleDenominator == 8 && eighth.image.width == 100 && eighth.image.height == 75)
        let half = try JPEGCodec.decode(data: bytes, minSide: 256)
        #expect(half.scaleDenominator == 2 && half.image.width == 400)
        #expect(half.sourceWidth == 800 && half.sourceHeight == 600)
        let thumb = JPEGCodec.downscale(half.image, maxSide: 256)
        #expect(thumb.width == 256 && thumb.height == 192)
    }

    @Test func corruptDataIsAnErrorNotACrash() throws {
        let bytes = try SamplePhotos.jpeg(index: 4, width: 320, height: 240)
        for broken in [
            [UInt8](), [0xFF, 0xD8], Array("not a jpeg at all".utf8), Array(bytes.prefix(bytes.count / 3)),
            Array(bytes.prefix(600)),
        ] {
            do {
                let decoded = try JPEGCodec.decode(data: broken.isEmpty ? [0] : broken)
                // libjpeg pads a truncated scan with grey and warns; that is a picture, not a crash.
                #expect(decoded.image.width == 320, "\(broken.count) bytes decoded to \(decoded.image.width)")
            } catch {
                #expect(error.code == .corrupt || error.code == .invalidArgument)
            }
        }
        let dir = try TempDir(prefix: "jpeg")
        #expect(throws: JPEGError.self) { try ThumbnailMaker.thumbnail(ofFile: dir.file("missing.jpg")) }
        do {
            _ = try JPEGCodec.decode(file: dir.file("missing.jpg"))
        } catch {
            #expect(error.code == .unreadable)
            #expect(error.description.contains("missing.jpg"))
        }
    }

    @Test func populatesACameraFolder() async throws {
        let dir = try TempDir(prefix: "demo")
        var layout = SamplePhotos.Layout()
        layout.folders = [("100FERRY", 2), ("101FERRY", 1)]
        layout.width = 320
        layout.height = 240
        let written = try await onThread { [layout] in try SamplePhotos.populate(folder: dir.path, layout: layout) }
        #expect(
            written.map { String($0.dropFirst(dir.path.count)) } == [
                "/DCIM/100FERRY/FER_0001.JPG", "/DCIM/100FERRY/FER_0002.JPG", "/DCIM/101FERRY/FER_0003.JPG",
            ])
        #expect(FileManager.default.fileExists(atPath: dir.path + "/DCIM/100FERRY/NOTES.TXT"))
        #expect(try EXIFThumbnail.extract(fromFileAt: written[2]) != nil)
    }
}
