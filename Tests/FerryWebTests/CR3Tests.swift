import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// Canon CR3 files (issue 26 item 3) built to their documented layout (``SampleCR3``),
/// checked with exiftool, shown upright as tiles and previews from a folder and by
/// range from nginx, dated by their CMT2, and bad ones answered at once.
@Suite(.serialized) struct CR3Tests {
    /// A CR3 in orientation `n`: the marked pixels as its THMB (160 x 120) and PRVW (1620 x 1080).
    static func sample(orientation n: Int, sensorBytes: Int = 2_000_000) throws -> [UInt8] {
        let thumb = try JPEGCodec.encode(OrientedSamples.marked(width: 160, height: 120), quality: 90)
        let preview = try JPEGCodec.encode(OrientedSamples.marked(width: 1620, height: 1080), quality: 85)
        var options = SampleCR3.Options()
        options.orientation = n
        options.sensorBytes = sensorBytes
        return SampleCR3.make(thumbnail: thumb, preview: preview, options: options)
    }

    static func write(_ bytes: [UInt8], _ path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// exiftool reads the sample as a CR3 with the tags it was given: the sample is not only self-consistent.
    @Test func exiftoolReadsTheSampleAsACR3() async throws {
        let exiftool = try #require(TestProcess.which("exiftool"), "exiftool is missing: run scripts/setup.sh")
        let folder = try TempDir(prefix: "cr3-exiftool")
        let path = folder.file("IMG_0001.CR3")
        try Self.write(try await onThread { try Self.sample(orientation: 6) }, path)
        let out = try TestProcess.run(exiftool, ["-a", "-G1", "-n", "-s", path])
        #expect(out.status == 0, "\(out.stderr)")
        let text = out.stdout
        for wanted in [
            "FileType                        : CR3", "[IFD0]          Orientation                     : 6",
            "[IFD0]          Make                            : Canon",
            "[ExifIFD]       DateTimeOriginal                : 2024:06:01 23:45:12",
            "[ExifIFD]       OffsetTimeOriginal              : +02:00",
            "[ExifIFD]       SubSecTimeOriginal              : 25",
            "[Canon]         CompressorVersion               : CanonCR3_001/00.10.00/00.00.00",
        ] {
            let squeezed = wanted.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            let lines = text.split(separator: "\n").map {
                $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            }
            #expect(lines.contains { $0.hasSuffix(squeezed) || $0 == squeezed }, "exiftool lacks \(wanted):\n\(text)")
        }
        #expect(!text.contains("Warning"), "\(text)")
        #expect(text.contains("ThumbnailImage") && text.contains("PreviewImage"), "\(text)")
        // exiftool's own extraction (the rest of the box: the JPEG and its padding to 4 bytes)
        // starts with the same JPEGs Ferry finds.
        for (tag, want) in [("PreviewImage", CR3Reader.Want.preview), ("ThumbnailImage", .thumbnail)] {
            let ours = try #require(RawPreview.jpeg(ofFile: path, want: want)).jpeg
            let bin = folder.file("\(tag).jpg")
            _ = try TestProcess.run("/bin/sh", ["-c", "'\(exiftool)' -b -\(tag) '\(path)' > '\(bin)'"])
            let theirs = try [UInt8](Data(contentsOf: URL(fileURLWithPath: bin)))
            #expect(theirs.starts(with: ours) && theirs.count - ours.count < 4, "\(tag): \(theirs.count) \(ours.count)")
            #expect(theirs.dropFirst(ours.count).allSatisfy { $0 == 0 }, "\(tag)")
        }
    }

    /// Tiles, previews and the info panel of CR3 files in every orientation, from a folder.
    @Test func localTilesAndPreviewsStandUpright() async throws {
        let folder = try TempDir(prefix: "cr3-local")
        for n in 1...8 {
            try Self.write(
                try await onThread { try Self.sample(orientation: n, sensorBytes: 100_000) },
                folder.file("IMG_000\(n).CR3"))
        }
        var configuration = WebConfiguration(source: try RemoteURL(parsing: folder.path))
        configuration.cacheDirectory = folder.path + "/.cache"
        let api = try WebAPI(configuration: configuration)
        for n in 1...8 {
            let name = "/IMG_000\(n).CR3"
            let thumb = await api.handle(APITests.request("/api/thumb?path=\(name)"))
            guard case .data(let t) = thumb.body, thumb.status == 200 else {
                Issue.record("CR3 tile \(n): \(thumb.status)")
                continue
            }
            try OrientedSamples.expectUpright([UInt8](t), n, "CR3 tile")
            let preview = await api.handle(APITests.request("/api/preview?path=\(name)&w=800&h=800"))
            guard case .data(let p) = preview.body, preview.status == 200 else {
                Issue.record("CR3 preview \(n): \(preview.status)")
                continue
            }
            try OrientedSamples.expectUpright([UInt8](p), n, "CR3 preview")
            #expect(preview.headers["X-Image-Width"] == (n >= 5 ? "1080" : "1620"), "CR3 preview \(n)")
            let info = APITests.object(await api.handle(APITests.request("/api/info?path=\(name)")))
            #expect(info["orientation"] as? Int == n, "info \(n): \(info)")
            #expect(info["taken"] as? String == "2024-06-01 23:45:12 +02:00", "info \(n): \(info)")
            #expect(info["camera"] as? String == "Canon EOS R6", "info \(n): \(info)")
            #expect(info["iso"] as? Int == 400 && info["aperture"] as? String == "f/2.8", "info \(n): \(info)")
            #expect(info["width"] as? Int == (n >= 5 ? 3648 : 5472), "info \(n): \(info)")
        }
        let listing = APITests.object(await api.handle(APITests.request("/api/list?path=/")))
        let entries = try #require(listing["entries"] as? [[String: Any]])
        #expect(entries.filter { $0["thumbnail"] as? Bool == true }.count == 8, "\(entries)")
    }

    /// From nginx by range: a tile is the THMB from the first 64 KiB (at most 256 KiB in
    /// all, nginx's log says), a preview the PRVW box; both upright.
    @Test(.enabled(if: NginxServer.isAvailable)) func rangeReadTilesReadAtMost256KiB() async throws {
        let root = try TempDir(prefix: "cr3-http")
        var sizes: [Int] = []
        for n in [1, 3, 6, 8] {
            let bytes = try await onThread { try Self.sample(orientation: n, sensorBytes: 8_000_000) }
            sizes.append(bytes.count)
            try Self.write(bytes, root.file("IMG_000\(n).CR3"))
        }
        let nginx = try NginxServer(root: root.path)
        let cache = try TempDir(prefix: "cr3-http-cache")
        var configuration = WebConfiguration(source: try RemoteURL(parsing: nginx.url("/")), host: "127.0.0.1", port: 0)
        configuration.cacheDirectory = cache.path
        configuration.importDirectory = cache.file("imported")
        let api = try WebAPI(configuration: configuration)
        for n in [1, 3, 6, 8] {
            let name = "/IMG_000\(n).CR3"
            let thumb = await api.handle(APITests.request("/api/thumb?path=\(name)&v=1"))
            guard case .data(let t) = thumb.body, thumb.status == 200 else {
                Issue.record("CR3 tile \(n): \(thumb.status)")
                continue
            }
            try OrientedSamples.expectUpright([UInt8](t), n, "CR3 range tile")
            let tile = InMemoryReadTests.nginxSent(nginx, name)
            #expect(tile.requests >= 1 && tile.bytes <= 256 * 1024, "CR3 tile \(n): nginx sent \(tile)")
            print("CR3 tile over HTTP: nginx sent \(tile.bytes) bytes in \(tile.requests) requests of \(sizes[0])")
            let preview = await api.handle(APITests.request("/api/preview?path=\(name)&w=800&h=800&v=1"))
            guard case .data(let p) = preview.body, preview.status == 200 else {
                Issue.record("CR3 preview \(n): \(preview.status)")
                continue
            }
            try OrientedSamples.expectUpright([UInt8](p), n, "CR3 range preview")
            let both = InMemoryReadTests.nginxSent(nginx, name)
            #expect(both.bytes - tile.bytes < 1_000_000, "CR3 preview \(n): nginx sent \(both) (no sensor data)")
        }
    }

    /// `CaptureDate` and `ExifOrientation` read a CR3's first bytes; sync's extension list has cr3.
    @Test func captureDateAndOrientationOfACR3() async throws {
        let bytes = try await onThread { try Self.sample(orientation: 8, sensorBytes: 1000) }
        let date = try #require(CaptureDate.read(from: bytes.prefix(CaptureDate.prefixLength)))
        #expect(date.description == "2024-06-01T23:45:12.25+02:00")
        #expect(ExifOrientation.read(from: bytes.prefix(64 * 1024)) == 8)
        #expect(CaptureDate.fileExtensions.contains("cr3"))
        let folder = try TempDir(prefix: "cr3-date")
        try Self.write(bytes, folder.file("IMG_0001.CR3"))
        #expect(try CaptureDate.read(fileAt: folder.file("IMG_0001.CR3")) == date)
    }

    /// Truncated and garbage CR3 files: no JPEG found, a 422 for the tile (the page shows
    /// its file-type tile), within a second; never a crash.
    @Test func truncatedAndGarbageCR3sAnswerAtOnce() async throws {
        let good = try await onThread { try Self.sample(orientation: 6, sensorBytes: 50_000) }
        let folder = try TempDir(prefix: "cr3-bad")
        var bad: [String: [UInt8]] = [
            "empty": [], "ftyp-only": Array(good.prefix(24)), "half-moov": Array(good.prefix(3000)),
            "garbage": (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) },
            "huge-sizes": Array(good.prefix(24)) + [0, 0, 0, 1] + Array("moov".utf8) + [0x7F]
                + [UInt8](repeating: 0xFF, count: 7),
            "zero-size-moov": Array(good.prefix(24)) + [0, 0, 0, 0] + Array("moov".utf8)
                + [UInt8](repeating: 0, count: 100),
        ]
        // Every box size in the Canon box replaced by garbage, one at a time.
        var mangled = good
        for at in stride(from: 24, to: 4000, by: 97) { mangled[at] = 0xFF }
        bad["mangled"] = mangled
        var nested: [UInt8] = []
        for _ in 0..<40 { nested = SampleCR3.box("moov", nested) }
        bad["nested"] = Array(good.prefix(24)) + nested
        for (name, bytes) in bad { try Self.write(bytes, folder.file("\(name).CR3")) }
        var configuration = WebConfiguration(source: try RemoteURL(parsing: folder.path))
        configuration.cacheDirectory = folder.path + "/.cache"
        let api = try WebAPI(configuration: configuration)
        for name in bad.keys.sorted() {
            let start = Date()
            let thumb = await api.handle(APITests.request("/api/thumb?path=/\(name).CR3"))
            let preview = await api.handle(APITests.request("/api/preview?path=/\(name).CR3"))
            let info = await api.handle(APITests.request("/api/info?path=/\(name).CR3"))
            #expect(Date().timeIntervalSince(start) < 1, "\(name): slow")
            if name == "mangled" && thumb.status == 200 { continue }
            #expect(thumb.status == 422 && preview.status == 422, "\(name): \(thumb.status) \(preview.status)")
            #expect(info.status == 200, "\(name): info \(info.status)")
            let bytes = bad[name]!
            _ = CaptureDate.read(from: bytes)
            _ = ExifOrientation.read(from: bytes)
            // By range, every prefix length of the truncated ones: nil, never a trap.
            let embedded = try await RawPreview.jpeg(fileSize: bytes.count, cr3: true) { range in
                Data(bytes[Int(range.lowerBound)..<min(bytes.count, Int(range.upperBound))])
            }
            #expect(name == "mangled" || embedded == nil, "\(name)")
        }
        // A file cut anywhere: never a crash; cut after the Canon box the thumbnail still comes.
        for cut in stride(from: 0, to: 60_000, by: 1001) {
            let bytes = Array(good.prefix(cut))
            _ = CR3.scan(bytes, fileSize: bytes.count)
            _ = CaptureDate.read(from: bytes)
            _ = try await RawPreview.jpeg(fileSize: bytes.count, cr3: true, want: .thumbnail) { range in
                Data(bytes[Int(range.lowerBound)..<min(bytes.count, Int(range.upperBound))])
            }
        }
    }

    /// The box walker: 64-bit sizes, size 0 (to the end), boxes past their parent, nesting.
    @Test func boxWalkerTrustsNoSize() {
        let small = SampleCR3.box("free", [1, 2, 3])
        let large: [UInt8] = [0, 0, 0, 1] + Array("wide".utf8) + [0, 0, 0, 0, 0, 0, 0, 20] + [9, 9, 9, 9]
        let toEnd: [UInt8] = [0, 0, 0, 0] + Array("mdat".utf8) + [7, 7, 7]
        let file = small + large + toEnd
        let boxes = ISOBMFF.boxes(in: file, from: 0, to: file.count)
        #expect(boxes.map(\.name) == ["free", "wide", "mdat"])
        #expect(boxes.map(\.end) == [11, 31, 42])
        #expect(boxes[1].payload == 27)
        // Reaching past the parent, or smaller than its own header: the walk stops.
        #expect(ISOBMFF.boxes(in: small, from: 0, to: 10).isEmpty)
        #expect(ISOBMFF.boxes(in: [0, 0, 0, 4] + Array("tiny".utf8), from: 0, to: 8).isEmpty)
        // A huge 64-bit size is refused, not overflowed.
        let huge: [UInt8] = [0, 0, 0, 1] + Array("wide".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0]
        #expect(ISOBMFF.box(in: huge, at: 0, limit: Int.max) == nil)
        var nested = SampleCR3.box("leaf", [])
        for _ in 0..<(ISOBMFF.maxDepth + 2) { nested = SampleCR3.box("moov", nested) }
        let deep = Array(repeating: "moov", count: ISOBMFF.maxDepth + 2) + ["leaf"]
        #expect(ISOBMFF.find(deep, in: nested, to: nested.count) == nil, "deeper than maxDepth")
        #expect(ISOBMFF.find(["moov", "moov", "moov"], in: nested, to: nested.count) != nil)
    }
}
