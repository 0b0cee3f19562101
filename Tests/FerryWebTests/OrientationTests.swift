import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// Photos made with `exiftool` in all eight Exif orientations: landscape pixels
/// with a red block in the stored top-left corner and a green one in the stored
/// top-right, as a camera stores a turned shot. Every picture Ferry makes or
/// passes to the page must show the blocks where the orientation puts them.
enum OrientedSamples {
    enum Corner: String, Sendable { case topLeft, topRight, bottomLeft, bottomRight }

    /// Where the red (stored top-left) and green (stored top-right) blocks are shown,
    /// by Exif's definitions (exiftool's names in the comments).
    static let expected: [Int: (red: Corner, green: Corner)] = [
        1: (.topLeft, .topRight),  // Horizontal (normal)
        2: (.topRight, .topLeft),  // Mirror horizontal
        3: (.bottomRight, .bottomLeft),  // Rotate 180
        4: (.bottomLeft, .bottomRight),  // Mirror vertical
        5: (.topLeft, .bottomLeft),  // Mirror horizontal and rotate 270 CW
        6: (.topRight, .bottomRight),  // Rotate 90 CW
        7: (.bottomRight, .topRight),  // Mirror horizontal and rotate 90 CW
        8: (.bottomLeft, .topLeft),  // Rotate 270 CW
    ]

    /// Grey pixels with the two blocks (a quarter wide, a third high) in the top corners.
    static func marked(width: Int, height: Int) -> RGBImage {
        var pixels = [UInt8](repeating: 128, count: width * height * 3)
        for y in 0..<(height / 3) {
            for x in 0..<(width / 4) {
                pixels.replaceSubrange((y * width + x) * 3..<(y * width + x) * 3 + 3, with: [230, 20, 20])
                let g = y * width + width - 1 - x
                pixels.replaceSubrange(g * 3..<g * 3 + 3, with: [20, 210, 20])
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    /// A 640 x 480 JPEG with an Exif block (orientation 1) holding a 160 x 120 thumbnail of the same pixels.
    static func photo(width: Int = 640, height: Int = 480) throws -> [UInt8] {
        let thumbnail = try JPEGCodec.encode(marked(width: 160, height: 120), quality: 90)
        let exif = try #require(
            ExifBlock.make(
                width: width, height: height, taken: Date(timeIntervalSince1970: 1_717_243_200), thumbnail: thumbnail))
        return try JPEGCodec.encode(marked(width: width, height: height), quality: 90, app1: exif)
    }

    /// `exiftool -Orientation#=N` on the file.
    static func setOrientation(_ n: Int, of path: String) throws {
        let exiftool = try #require(TestProcess.which("exiftool"), "exiftool is missing: run scripts/setup.sh")
        let out = try TestProcess.run(exiftool, ["-q", "-overwrite_original", "-Orientation#=\(n)", path])
        #expect(out.status == 0, "\(out.stderr)")
    }

    /// What exiftool reads as the file's orientation (a check on the samples themselves).
    static func exiftoolOrientation(_ path: String) throws -> Int? {
        let exiftool = try #require(TestProcess.which("exiftool"))
        return Int(
            try TestProcess.run(exiftool, ["-n", "-s3", "-Orientation", path]).stdout.trimmingCharacters(
                in: .whitespacesAndNewlines))
    }

    /// Writes `IMG_000N.JPG` for N in 1...8 into `folder`, each with orientation N.
    static func writeEight(into folder: String, width: Int = 640, height: Int = 480) throws {
        let base = try photo(width: width, height: height)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for n in 1...8 {
            let path = folder + "/IMG_000\(n).JPG"
            try Data(base).write(to: URL(fileURLWithPath: path))
            try setOrientation(n, of: path)
            #expect(try exiftoolOrientation(path) == n)
        }
    }

    /// The corner a colour's block is shown in, sampling each corner a tenth of the way in.
    static func corner(of color: (UInt8, UInt8, UInt8) -> Bool, in image: RGBImage) -> [Corner] {
        let points: [(Corner, Int, Int)] = [
            (.topLeft, image.width / 10, image.height / 10),
            (.topRight, image.width - 1 - image.width / 10, image.height / 10),
            (.bottomLeft, image.width / 10, image.height - 1 - image.height / 10),
            (.bottomRight, image.width - 1 - image.width / 10, image.height - 1 - image.height / 10),
        ]
        return points.filter { _, x, y in
            let i = (y * image.width + x) * 3
            return color(image.pixels[i], image.pixels[i + 1], image.pixels[i + 2])
        }.map(\.0)
    }

    static func isRed(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> Bool { r > 170 && g < 90 && b < 90 }
    static func isGreen(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> Bool { g > 150 && r < 90 && b < 90 }

    /// Checks that `jpeg` shows orientation `n`'s sample upright: the blocks in their
    /// corners, and portrait for 5...8.
    static func expectUpright(
        _ jpeg: [UInt8], _ n: Int, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        let image = try JPEGCodec.decode(data: jpeg).image
        let want = expected[n]!
        #expect(
            corner(of: isRed, in: image) == [want.red], "\(what) orientation \(n): red", sourceLocation: sourceLocation)
        #expect(
            corner(of: isGreen, in: image) == [want.green], "\(what) orientation \(n): green",
            sourceLocation: sourceLocation)
        #expect(
            (image.height > image.width) == (n >= 5), "\(what) orientation \(n): \(image.width)x\(image.height)",
            sourceLocation: sourceLocation)
    }

    /// A TIFF-based raw file: IFD0 with `Orientation` N and the offset and length of
    /// the embedded JPEG (which has no Exif of its own), then "sensor data".
    static func tiffRaw(embedding jpeg: [UInt8], orientation: Int) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }
        let jpegAt = 8 + 2 + 4 * 12 + 4
        var out: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + le32(8) + le16(4)
        out += le16(0x0103) + le16(3) + le32(1) + le16(6) + le16(0)
        out += le16(0x0112) + le16(3) + le32(1) + le16(orientation) + le16(0)
        out += le16(0x0201) + le16(4) + le32(1) + le32(jpegAt)
        out += le16(0x0202) + le16(4) + le32(1) + le32(jpeg.count)
        out += le32(0)
        return out + jpeg + [UInt8](repeating: 0x55, count: 5000)
    }
}

/// Upright everywhere: server-made thumbnails and previews, the card's Exif
/// thumbnails, a range read's Exif thumbnails, raw files' embedded previews.
struct OrientationTests {
    /// The pixel turn itself, on a 3 x 2 image whose pixels are numbered.
    @Test func orientTurnsPixelsAsExifDefines() {
        // Stored:  0 1 2
        //          3 4 5
        let stored = RGBImage(width: 3, height: 2, pixels: (0..<6).flatMap { [UInt8($0), 0, 0] })
        let shown: [Int: (Int, Int, [Int])] = [
            1: (3, 2, [0, 1, 2, 3, 4, 5]), 2: (3, 2, [2, 1, 0, 5, 4, 3]), 3: (3, 2, [5, 4, 3, 2, 1, 0]),
            4: (3, 2, [3, 4, 5, 0, 1, 2]), 5: (2, 3, [0, 3, 1, 4, 2, 5]), 6: (2, 3, [3, 0, 4, 1, 5, 2]),
            7: (2, 3, [5, 2, 4, 1, 3, 0]), 8: (2, 3, [2, 5, 1, 4, 0, 3]),
        ]
        for (n, (w, h, order)) in shown {
            let turned = JPEGCodec.orient(stored, orientation: n)
            #expect(turned.width == w && turned.height == h, "orientation \(n)")
            #expect(
                stride(from: 0, to: turned.pixels.count, by: 3).map { Int(turned.pixels[$0]) } == order,
                "orientation \(n)")
        }
        for bogus in [nil, 0, 9, -1] { #expect(JPEGCodec.orient(stored, orientation: bogus) == stored) }
    }

    @Test func localThumbnailsPreviewsAndInfoStandUpright() async throws {
        let folder = try TempDir(prefix: "ferry-orient")
        try await onThread { try OrientedSamples.writeEight(into: folder.path + "/root") }
        var configuration = WebConfiguration(source: try RemoteURL(parsing: folder.path + "/root"))
        configuration.cacheDirectory = folder.path + "/cache"
        let api = try WebAPI(configuration: configuration)
        for n in 1...8 {
            let name = "/IMG_000\(n).JPG"
            let thumb = await api.handle(APITests.request("/api/thumb?path=\(name)"))
            guard case .data(let t) = thumb.body, thumb.status == 200 else {
                Issue.record("thumbnail \(n): \(thumb.status)")
                continue
            }
            try OrientedSamples.expectUpright([UInt8](t), n, "thumbnail")
            let preview = await api.handle(APITests.request("/api/preview?path=\(name)&w=400&h=400"))
            guard case .data(let p) = preview.body, preview.status == 200 else {
                Issue.record("preview \(n): \(preview.status)")
                continue
            }
            try OrientedSamples.expectUpright([UInt8](p), n, "preview")
            // The original's size as shown, for the viewer's zoom.
            let (w, h) = n >= 5 ? ("480", "640") : ("640", "480")
            #expect(preview.headers["X-Image-Width"] == w && preview.headers["X-Image-Height"] == h, "preview \(n)")
            let info = APITests.object(await api.handle(APITests.request("/api/info?path=\(name)")))
            #expect(info["width"] as? Int == Int(w) && info["height"] as? Int == Int(h), "info \(n): \(info)")
            #expect(info["orientation"] as? Int == n)
        }
    }

    /// `ferry card` sends each thumbnail's orientation as `X-exif-ORIENTATION`; the page gets it turned.
    @Test func cardThumbnailsStandUpright() async throws {
        let folder = try TempDir(prefix: "ferry-orient-card")
        try await onThread {
            try OrientedSamples.writeEight(into: folder.path + "/card/DCIM/100FERRY")
            // A phone's portrait HEIC beside them: no thumbnail.cgi for it, downloaded and decoded here.
            try HEIFCodec.encode(
                OrientedSamples.marked(width: 640, height: 480), to: folder.path + "/card/DCIM/100FERRY/IMG_0009.HEIC",
                orientation: 6, thumbnailSide: 320)
        }
        let card = try ServerProcess(
            TestProcess.ferryExecutable(), ["card", folder.path + "/card", "--port", "0"],
            logPath: folder.path + "/card.log")
        defer { card.stop() }
        let url = try await onThread { try ServeFixture.cardURL(card) }
        let source = try RemoteURL(parsing: url)
        let fs = try Ferry.fileSystem(for: source)
        var configuration = WebConfiguration(source: source)
        configuration.cacheDirectory = folder.path + "/cache"
        let api = try WebAPI(configuration: configuration)
        for n in 1...8 {
            let path = "/DCIM/100FERRY/IMG_000\(n).JPG"
            // What FerryKit gives apps: the bytes as stored and the orientation to apply.
            let embedded = try #require(try await fs.thumbnail(path))
            #expect(embedded.orientation == n)
            #expect(try JPEGCodec.decode(data: embedded.jpeg).image.width == 160)
            #expect(embedded.displayedWidth == (n >= 5 ? 480 : 640))
            let thumb = await api.handle(APITests.request("/api/thumb?path=\(path)&v=1"))
            guard case .data(let t) = thumb.body, thumb.status == 200 else {
                Issue.record("card thumbnail \(n): \(thumb.status)")
                continue
            }
            let image = try JPEGCodec.decode(data: t).image
            #expect(max(image.width, image.height) == 160, "the card's Exif thumbnail, not one made here")
            try OrientedSamples.expectUpright([UInt8](t), n, "card thumbnail")
        }
        let heic = await api.handle(APITests.request("/api/thumb?path=/DCIM/100FERRY/IMG_0009.HEIC&v=1"))
        guard case .data(let h) = heic.body, heic.status == 200 else {
            Issue.record("HEIC from the card: \(heic.status)")
            return
        }
        try OrientedSamples.expectUpright([UInt8](h), 6, "HEIC from the card")
    }

    /// Elsewhere (an HTTP server here) the Exif thumbnail comes by a range read, its orientation from IFD0.
    @Test(.enabled(if: NginxServer.isAvailable)) func rangeReadThumbnailsStandUpright() async throws {
        let www = try TempDir(prefix: "ferry-orient-www")
        try await onThread { try OrientedSamples.writeEight(into: www.path) }
        let nginx = try NginxServer(root: www.path, slowRate: 50_000_000)
        let cache = try TempDir(prefix: "ferry-orient-cache")
        var configuration = WebConfiguration(source: try RemoteURL(parsing: nginx.url("/")))
        configuration.cacheDirectory = cache.path
        let api = try WebAPI(configuration: configuration)
        for n in 1...8 {
            let thumb = await api.handle(APITests.request("/api/thumb?path=/IMG_000\(n).JPG&v=1"))
            guard case .data(let t) = thumb.body, thumb.status == 200 else {
                Issue.record("thumbnail \(n): \(thumb.status)")
                continue
            }
            #expect(max(try JPEGCodec.decode(data: t).image.width, try JPEGCodec.decode(data: t).image.height) == 160)
            try OrientedSamples.expectUpright([UInt8](t), n, "range-read thumbnail")
        }
    }

    /// A raw file's embedded JPEG is turned by the raw file's own IFD0, on disk and by range.
    @Test func rawPreviewsStandUpright() async throws {
        let folder = try TempDir(prefix: "ferry-orient-raw")
        let jpeg = try await onThread { try JPEGCodec.encode(OrientedSamples.marked(width: 640, height: 480)) }
        #expect(ExifOrientation.read(from: jpeg) == nil, "the embedded JPEG says nothing itself")
        for n in 1...8 {
            let path = folder.file("IMG_000\(n).CR2")
            try Data(OrientedSamples.tiffRaw(embedding: jpeg, orientation: n)).write(to: URL(fileURLWithPath: path))
            #expect(try OrientedSamples.exiftoolOrientation(path) == n, "exiftool reads the sample's orientation")
        }
        var configuration = WebConfiguration(source: try RemoteURL(parsing: folder.path))
        configuration.cacheDirectory = folder.path + "/.cache"
        let api = try WebAPI(configuration: configuration)
        for n in 1...8 {
            let name = "/IMG_000\(n).CR2"
            let thumb = await api.handle(APITests.request("/api/thumb?path=\(name)"))
            guard case .data(let t) = thumb.body, thumb.status == 200 else {
                Issue.record("raw thumbnail \(n): \(thumb.status)")
                continue
            }
            try OrientedSamples.expectUpright([UInt8](t), n, "raw thumbnail")
            let preview = await api.handle(APITests.request("/api/preview?path=\(name)&w=400&h=400"))
            guard case .data(let p) = preview.body, preview.status == 200 else {
                Issue.record("raw preview \(n): \(preview.status)")
                continue
            }
            try OrientedSamples.expectUpright([UInt8](p), n, "raw preview")
            #expect(preview.headers["X-Image-Width"] == (n >= 5 ? "480" : "640"), "raw preview \(n)")
            // By range, as from a card or server.
            let raw = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.path + name)))
            let embedded = try #require(
                try await RawPreview.jpeg(fileSize: raw.count) { range in
                    Data(raw[Int(range.lowerBound)..<min(raw.count, Int(range.upperBound))])
                })
            #expect(embedded.orientation == n)
        }
    }
}

/// The info panel's "Taken": the capture date with its offset, from a JPEG and a raw file.
struct PhotoInfoDateTests {
    @Test func theInfoPanelShowsTheDateTaken() async throws {
        let folder = try TempDir(prefix: "ferry-taken")
        let exiftool = try #require(TestProcess.which("exiftool"), "exiftool is missing: run scripts/setup.sh")
        let jpeg = folder.file("IMG_0001.JPG")
        try Data(try await onThread { try OrientedSamples.photo() }).write(to: URL(fileURLWithPath: jpeg))
        let raw = folder.file("IMG_0002.CR2")
        let embedded = try await onThread { try JPEGCodec.encode(OrientedSamples.marked(width: 640, height: 480)) }
        try Data(OrientedSamples.tiffRaw(embedding: embedded, orientation: 6)).write(to: URL(fileURLWithPath: raw))
        for path in [jpeg, raw] {
            let out = try TestProcess.run(
                exiftool,
                [
                    "-q", "-overwrite_original", "-DateTimeOriginal=2024:06:01 23:45:12", "-OffsetTimeOriginal=+02:00",
                    "-Model=Ferry Test", path,
                ])
            #expect(out.status == 0, "\(out.stderr)")
        }
        var configuration = WebConfiguration(source: try RemoteURL(parsing: folder.path))
        configuration.cacheDirectory = folder.path + "/.cache"
        let api = try WebAPI(configuration: configuration)
        let photo = APITests.object(await api.handle(APITests.request("/api/info?path=/IMG_0001.JPG")))
        #expect(photo["taken"] as? String == "2024-06-01 23:45:12 +02:00", "\(photo)")
        let rawInfo = APITests.object(await api.handle(APITests.request("/api/info?path=/IMG_0002.CR2")))
        #expect(rawInfo["taken"] as? String == "2024-06-01 23:45:12 +02:00", "\(rawInfo)")
        #expect((rawInfo["camera"] as? String)?.hasSuffix("Ferry Test") == true, "\(rawInfo)")
        #expect(rawInfo["orientation"] as? Int == 6)
    }
}
