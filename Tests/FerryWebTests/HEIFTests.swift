import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// HEIC/HEIF through libheif: samples made with `heif-enc` (libheif-examples)
/// from a JPEG with Exif, and with libheif's encoder in all eight orientations
/// (`irot`/`imir`, as phones write them); broken files.
struct HEIFTests {
    /// `heif-enc -q 60 -t 320` of a 640 x 480 JPEG with an Exif block: a HEIC with a
    /// thumbnail item of 320 x 240 and the JPEG's Exif as its Exif item.
    static func heifEnc(into folder: TempDir, name: String = "IMG_0001.HEIC") async throws -> String {
        let heifEnc = try #require(TestProcess.which("heif-enc"), "heif-enc is missing: run scripts/setup.sh")
        let jpeg = folder.file("source.jpg")
        try Data(try await onThread { try OrientedSamples.photo() }).write(to: URL(fileURLWithPath: jpeg))
        let path = folder.file(name)
        let out = try TestProcess.run(heifEnc, ["-q", "60", "-t", "320", "-o", path, jpeg])
        #expect(out.status == 0, "heif-enc: \(out.stdout) \(out.stderr)")
        try FileManager.default.removeItem(atPath: jpeg)
        return path
    }

    static func api(_ folder: TempDir) throws -> WebAPI {
        var configuration = WebConfiguration(source: try RemoteURL(parsing: folder.path))
        configuration.cacheDirectory = folder.path + "/.cache"
        return try WebAPI(configuration: configuration)
    }

    @Test func heifEncPhotosGetThumbnailsPreviewsAndTheirExif() async throws {
        let folder = try TempDir(prefix: "ferry-heif")
        let path = try await Self.heifEnc(into: folder)
        // The thumbnail item when it is large enough, else the image.
        let small = try HEIFCodec.decode(file: path, minSide: 256)
        #expect(small.fromThumbnail && small.image.width == 320 && small.image.height == 240)
        #expect(small.imageWidth == 640 && small.imageHeight == 480)
        let large = try HEIFCodec.decode(file: path, minSide: 400)
        #expect(!large.fromThumbnail && large.image.width == 640)
        let api = try Self.api(folder)
        let listing = APITests.object(await api.handle(APITests.request("/api/list?path=/")))
        let entry = (listing["entries"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "IMG_0001.HEIC" }
        #expect(entry?["thumbnail"] as? Bool == true && entry?["image"] as? Bool == true)
        #expect(entry?["media"] as? String == "raw", "the viewer shows the preview, never the original")
        let thumb = await api.handle(APITests.request("/api/thumb?path=/IMG_0001.HEIC"))
        guard case .data(let t) = thumb.body, thumb.status == 200 else {
            Issue.record("thumbnail: \(thumb.status)")
            return
        }
        try OrientedSamples.expectUpright([UInt8](t), 1, "HEIC thumbnail")
        #expect(try JPEGCodec.decode(data: t).image.width == 256)
        let preview = await api.handle(APITests.request("/api/preview?path=/IMG_0001.HEIC&w=600&h=600"))
        guard case .data(let p) = preview.body, preview.status == 200 else {
            Issue.record("preview: \(preview.status)")
            return
        }
        try OrientedSamples.expectUpright([UInt8](p), 1, "HEIC preview")
        #expect(preview.headers["X-Image-Width"] == "640" && preview.headers["X-Image-Height"] == "480")
        // The Exif item: heif-enc copied the JPEG's.
        let info = APITests.object(await api.handle(APITests.request("/api/info?path=/IMG_0001.HEIC")))
        #expect(info["camera"] as? String == "Ferry demo", "\(info)")
        #expect((info["taken"] as? String)?.hasPrefix("2024-06-01") == true, "\(info)")
        #expect(info["width"] as? Int == 640 && info["height"] as? Int == 480, "\(info)")
    }

    /// Orientation in HEIF is the file's `irot`/`imir` transforms: libheif applies them on decode.
    @Test func allEightOrientationsStandUpright() async throws {
        let folder = try TempDir(prefix: "ferry-heif-orient")
        let marked = OrientedSamples.marked(width: 640, height: 480)
        try await onThread {
            for n in 1...8 {
                try HEIFCodec.encode(marked, to: folder.file("IMG_000\(n).HEIC"), orientation: n, thumbnailSide: 320)
            }
        }
        let api = try Self.api(folder)
        for n in 1...8 {
            let name = "/IMG_000\(n).HEIC"
            let decoded = try HEIFCodec.decode(file: folder.path + name, minSide: 256)
            #expect(decoded.fromThumbnail, "orientation \(n): the thumbnail item")
            #expect(decoded.imageWidth == (n >= 5 ? 480 : 640), "orientation \(n): the size as shown")
            let thumb = await api.handle(APITests.request("/api/thumb?path=\(name)"))
            guard case .data(let t) = thumb.body, thumb.status == 200 else {
                Issue.record("thumbnail \(n): \(thumb.status)")
                continue
            }
            try OrientedSamples.expectUpright([UInt8](t), n, "HEIC thumbnail")
            let preview = await api.handle(APITests.request("/api/preview?path=\(name)&w=700&h=700"))
            guard case .data(let p) = preview.body, preview.status == 200 else {
                Issue.record("preview \(n): \(preview.status)")
                continue
            }
            try OrientedSamples.expectUpright([UInt8](p), n, "HEIC preview")
            #expect(preview.headers["X-Image-Width"] == (n >= 5 ? "480" : "640"), "preview \(n)")
            let info = APITests.object(await api.handle(APITests.request("/api/info?path=\(name)")))
            #expect(info["width"] as? Int == (n >= 5 ? 480 : 640), "info \(n): \(info)")
        }
    }

    /// Truncated, corrupted and fake HEIF files: a 422 naming the file, within a second, never a crash.
    @Test func brokenHEIFIsAClearErrorNotACrash() async throws {
        let folder = try TempDir(prefix: "ferry-heif-broken")
        let good = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try await Self.heifEnc(into: folder))))
        let fake = [0, 0, 0, 24] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)
        let broken: [(String, [UInt8])] = [
            ("HALF.HEIC", Array(good.prefix(good.count / 2))), ("HEAD.HEIC", Array(good.prefix(300))),
            ("FAKE.HEIC", fake + [UInt8](repeating: 0xAB, count: 4000)), ("EMPTY.HEIC", []),
            ("TEXT.HEIF", Array("not a heif file".utf8)),
        ]
        for (name, bytes) in broken { try Data(bytes).write(to: URL(fileURLWithPath: folder.file(name))) }
        let api = try Self.api(folder)
        for (name, _) in broken {
            var started = ContinuousClock.now
            func answered(_ what: String) {
                // About 10 ms each on an idle machine; the bound allows for the two cores being busy.
                #expect(
                    ContinuousClock.now - started < .seconds(2),
                    "\(name): \(what) took \(ContinuousClock.now - started)")
                started = ContinuousClock.now
            }
            let thumb = await api.handle(APITests.request("/api/thumb?path=/\(name)"))
            answered("thumb")
            let preview = await api.handle(APITests.request("/api/preview?path=/\(name)"))
            answered("preview")
            let info = await api.handle(APITests.request("/api/info?path=/\(name)"))
            answered("info")
            #expect(thumb.status == 422 && preview.status == 422, "\(name): \(thumb.status) \(preview.status)")
            let message = APITests.object(thumb)["error"] as? String ?? ""
            #expect(message.hasPrefix("cannot read /\(name) as a photo: "), "\(message)")
            #expect(!message.contains("\u{FFFD}"), "libheif's message intact: \(message)")
            #expect(info.status == 200, "\(name)")
        }
        // The reason, in libheif's words.
        let half = APITests.object(await api.handle(APITests.request("/api/thumb?path=/TEXT.HEIF")))
        #expect((half["error"] as? String ?? "").contains("not a readable HEIF image ("), "\(half)")
        // Seeded single-byte corruptions decoded from memory: an image or an error, never a crash.
        var random = UInt64(26)
        var decoded = 0
        for _ in 0..<150 {
            var bytes = good
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[Int(random >> 33) % bytes.count] = UInt8(truncatingIfNeeded: random >> 20)
            if (try? HEIFCodec.decode(data: bytes, minSide: 256)) != nil { decoded += 1 }
        }
        #expect(decoded > 0, "most corruptions still decode (or fail cleanly)")
    }
}
