import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// libjpeg-turbo through the CJPEG shim: scaled decoding, encoding, errors
/// that do not end the process, and the demo's photos with Exif thumbnails.
struct ImagingTests {
    @Test func samplePhotosCarryAnExifThumbnail() throws {
        let bytes = try SamplePhotos.jpeg(index: 7, width: 1600, height: 1200)
        #expect(bytes.count > 200_000 && bytes.count < 900_000, "\(bytes.count) bytes")
        #expect(Array(bytes.prefix(4)) == [0xFF, 0xD8, 0xFF, 0xE1], "APP1 right after SOI")
        let thumbnail = try #require(EXIFThumbnail.extract(fromJPEG: bytes))
        #expect(thumbnail.width == 1600 && thumbnail.height == 1200)
        #expect(thumbnail.orientation == 1)
        let small = try JPEGCodec.decode(data: thumbnail.jpeg)
        #expect(small.image.width == 160 && small.image.height == 120)
    }

    @Test func decodesWithDCTScaling() throws {
        let bytes = try SamplePhotos.jpeg(index: 2, width: 1600, height: 1200, grain: 0)
        let full = try JPEGCodec.decode(data: bytes)
        #expect(full.image.width == 1600 && full.scaleDenominator == 1)
        let eighth = try JPEGCodec.decode(data: bytes, minSide: 200)
        #expect(eighth.scaleDenominator == 8 && eighth.image.width == 200 && eighth.image.height == 150)
        let quarter = try JPEGCodec.decode(data: bytes, minSide: 256)
        #expect(quarter.scaleDenominator == 4 && quarter.image.width == 400)
        #expect(quarter.sourceWidth == 1600 && quarter.sourceHeight == 1200)
        let thumb = JPEGCodec.downscale(quarter.image, maxSide: 256)
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

    @Test func populatesACameraFolder() throws {
        let dir = try TempDir(prefix: "demo")
        var layout = SamplePhotos.Layout()
        layout.folders = [("100FERRY", 2), ("101FERRY", 1)]
        layout.width = 640
        layout.height = 480
        let written = try SamplePhotos.populate(folder: dir.path, layout: layout)
        #expect(
            written.map { String($0.dropFirst(dir.path.count)) } == [
                "/DCIM/100FERRY/FER_0001.JPG", "/DCIM/100FERRY/FER_0002.JPG", "/DCIM/101FERRY/FER_0003.JPG",
            ])
        #expect(FileManager.default.fileExists(atPath: dir.path + "/DCIM/100FERRY/NOTES.TXT"))
        #expect(try EXIFThumbnail.extract(fromFileAt: written[2]) != nil)
    }
}
