import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// A remote HEIC's tile from its `meta` box and thumbnail item read by range
/// (`HEIF`, `HEIFRangeRead`, `HEIFCodec.decode(sparse:)`): the pixels libheif
/// gives from the whole file, a fraction of its bytes; a file without a
/// thumbnail item downloaded whole as before; a garbage `meta` refused at once.
struct HEIFRangeTests {
    /// The orientation sample's blocks on noisy grey, 1280 x 960: noise so that the
    /// coded image is hundreds of KB, as a photo's is, and the thumbnail a few.
    static func noisy(width: Int = 1280, height: Int = 960) -> RGBImage {
        var image = OrientedSamples.marked(width: width, height: height)
        var random = SeededRandom(seed: 26)
        for i in stride(from: 0, to: image.pixels.count, by: 3) where image.pixels[i] == 128 {
            let v = UInt8(88 + Int(random.next() % 80))
            image.pixels[i] = v
            image.pixels[i + 1] = v &+ UInt8(random.next() % 8)
            image.pixels[i + 2] = v
        }
        return image
    }

    /// `heif-enc -t 320` of a noisy 1280 x 960 JPEG; `thumbnail: false` leaves out `-t`.
    static func heifEnc(_ path: String, thumbnail: Bool = true) async throws {
        let heifEnc = try #require(TestProcess.which("heif-enc"), "heif-enc is missing: run scripts/setup.sh")
        let jpeg = path + ".jpg"
        try Data(try await onThread { try JPEGCodec.encode(Self.noisy(), quality: 92) })
            .write(to: URL(fileURLWithPath: jpeg))
        let out = try TestProcess.run(
            heifEnc, ["-q", "70"] + (thumbnail ? ["-t", "320"] : []) + ["-o", path, jpeg])
        #expect(out.status == 0, "heif-enc: \(out.stdout) \(out.stderr)")
        try FileManager.default.removeItem(atPath: jpeg)
    }

    /// The `iloc` box of a file whose `meta` (a full box: 4 bytes before its boxes) follows `ftyp`.
    static func iloc(_ file: [UInt8]) -> ISOBMFF.Box? {
        guard let ftyp = ISOBMFF.box(in: file, at: 0, limit: file.count),
            let meta = ISOBMFF.box(in: file, at: ftyp.end, limit: file.count), meta.is("meta")
        else { return nil }
        return ISOBMFF.boxes(in: file, from: meta.payload + 4, to: meta.end).first { $0.is("iloc") }
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// Reads from `bytes` as a range-reading source would, counting what it sends.
    final class Counted: @unchecked Sendable {
        let bytes: [UInt8]
        var sent = 0
        var reads = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        func read(_ range: Range<Int64>) -> Data {
            reads += 1
            let slice = bytes[min(bytes.count, Int(range.lowerBound))..<min(bytes.count, Int(range.upperBound))]
            sent += slice.count
            return Data(slice)
        }
    }

    @Test func theSparseCopyDecodesToTheWholeFilesThumbnail() async throws {
        let folder = try TempDir(prefix: "heif-range")
        let path = folder.file("IMG_0001.HEIC")
        try await Self.heifEnc(path)
        let file = try Self.bytes(path)
        #expect(file.count > 200_000, "a photo-sized sample: \(file.count)")
        // The layout: one 320 x 240 thumbnail item, its data in mdat, past the meta box.
        guard case .found(let layout) = HEIF.scan(Array(file.prefix(HEIF.firstRead)), fileSize: file.count) else {
            Issue.record("scan: \(HEIF.scan(Array(file.prefix(HEIF.firstRead)), fileSize: file.count))")
            return
        }
        let thumbnail = try #require(layout.thumbnail(minSide: 256))
        #expect(thumbnail.width == 320 && thumbnail.height == 240, "\(thumbnail)")
        #expect(layout.thumbnail(minSide: 321) == nil)
        #expect(thumbnail.extents.allSatisfy { $0.lowerBound >= layout.metaEnd && $0.upperBound <= file.count })
        // Through a counting reader: the pixels are libheif's from the whole file.
        let source = Counted(file)
        let outcome = try await HEIFRangeRead.thumbnail(fileSize: file.count, minSide: 256) { source.read($0) }
        guard case .sparse(let sparse) = outcome else {
            Issue.record("outcome: \(outcome)")
            return
        }
        let decoded = try HEIFCodec.decode(sparse: sparse)
        let whole = try HEIFCodec.decode(file: path, minSide: 256)
        #expect(decoded.fromThumbnail && decoded.image.width == 320 && decoded.image.height == 240)
        #expect(decoded.image.pixels == whole.image.pixels, "the same pixels as from the whole file")
        #expect(decoded.imageWidth == 1280 && decoded.imageHeight == 960)
        // The first 64 KiB, then only the item's bytes past them.
        let past = thumbnail.extents.map { max(0, $0.upperBound - max($0.lowerBound, HEIF.firstRead)) }
        #expect(source.sent == HEIF.firstRead + past.reduce(0, +), "read \(source.sent) of \(file.count)")
        #expect(source.sent * 4 < file.count, "read \(source.sent) of \(file.count)")
        #expect(source.reads <= 2, "\(source.reads) reads")
        // Asked for more than the thumbnail has: the whole file.
        let large = try await HEIFRangeRead.thumbnail(fileSize: file.count, minSide: 512) { source.read($0) }
        guard case .whole = large else {
            Issue.record("512: \(large)")
            return
        }
    }

    /// heif-enc's sample with an Exif item (HEIFTests): from only its `meta` box and the
    /// thumbnail item's bytes, the Exif item's bytes left as zeros, libheif gives the same pixels.
    @Test func aSparseCopyNeedsNoOtherItemsBytes() async throws {
        let folder = try TempDir(prefix: "heif-range-exif")
        let path = try await HEIFTests.heifEnc(into: folder)
        let file = try Self.bytes(path)
        guard case .found(let layout) = HEIF.scan(Array(file.prefix(HEIF.firstRead)), fileSize: file.count),
            let thumbnail = layout.thumbnail(minSide: 256)
        else {
            Issue.record("no thumbnail item found")
            return
        }
        let parts =
            [(offset: 0, bytes: Array(file[..<layout.metaEnd]))]
            + thumbnail.extents.map { (offset: $0.lowerBound, bytes: Array(file[$0])) }
        let sparse = try HEIFCodec.decode(
            sparse: HEIFCodec.Sparse(fileSize: file.count, thumbnail: thumbnail.item, parts: parts))
        let whole = try HEIFCodec.decode(file: path, minSide: 256)
        #expect(sparse.fromThumbnail && sparse.image.pixels == whole.image.pixels)
        #expect(try HEIFCodec.exif(file: path).tiff != nil, "the sample has an Exif item")
        // The primary item is never decoded from a sparse copy: an item that is no thumbnail is refused.
        #expect(throws: JPEGError.self) {
            try HEIFCodec.decode(
                sparse: HEIFCodec.Sparse(fileSize: file.count, thumbnail: layout.primary, parts: parts))
        }
    }

    /// A `meta` box past the first read is read in one more; one that does not come first
    /// (after `mdat`) is not looked for; bogus sizes and counts are refused, never followed.
    @Test func scanGrowsOnceAndRefusesGarbage() async throws {
        let folder = try TempDir(prefix: "heif-scan")
        let path = folder.file("IMG_0001.HEIC")
        try await Self.heifEnc(path)
        let file = try Self.bytes(path)
        guard case .found(let layout) = HEIF.scan(Array(file.prefix(HEIF.firstRead)), fileSize: file.count) else {
            Issue.record("no layout")
            return
        }
        #expect(HEIF.scan(Array(file.prefix(100)), fileSize: file.count) == .needs(layout.metaEnd))
        let ftyp = try #require(ISOBMFF.box(in: file, at: 0, limit: file.count))
        #expect(HEIF.scan(Array(file.prefix(ftyp.end + 4)), fileSize: file.count) == .needs(ftyp.end + HEIF.firstRead))
        // ftyp, mdat, meta: the meta box lies after the image data.
        let meta = try #require(ISOBMFF.box(in: file, at: ftyp.end, limit: file.count))
        let rest = Array(file[meta.end...])
        let moved = Array(file[..<ftyp.end]) + rest + Array(file[meta.offset..<meta.end])
        #expect(HEIF.scan(Array(moved.prefix(HEIF.firstRead)), fileSize: moved.count) == .elsewhere)
        // bench/photo_bench.py's "meta behind mdat": a free box as long as meta keeps every offset;
        // libheif reads it, the scan does not look behind mdat (the whole file is downloaded).
        let length = meta.end - meta.offset
        let free =
            [UInt8(length >> 24), UInt8(length >> 16 & 255), UInt8(length >> 8 & 255), UInt8(length & 255)]
            + Array("free".utf8) + [UInt8](repeating: 0, count: length - 8)
        let padded = Array(file[..<ftyp.end]) + free + rest + Array(file[meta.offset..<meta.end])
        #expect(HEIF.scan(Array(padded.prefix(HEIF.firstRead)), fileSize: padded.count) == .elsewhere)
        let fromPadded = try HEIFCodec.decode(data: padded, minSide: 256)
        let fromFile = try HEIFCodec.decode(file: path, minSide: 256)
        #expect(fromPadded.fromThumbnail && fromPadded.image.pixels == fromFile.image.pixels)
        #expect(HEIF.scan(Array("not a heif file at all".utf8), fileSize: 22) == .invalid)
        // An ftyp of brands not known here: libheif decides, on the whole file.
        let odd: [UInt8] = [0, 0, 0, 16] + Array("ftypodd1".utf8) + [0, 0, 0, 0] + [0, 0, 0, 8] + Array("free".utf8)
        #expect(HEIF.scan(odd, fileSize: odd.count) == .elsewhere)
        let cut = layout.metaEnd - 1
        #expect(HEIF.scan(Array(file.prefix(cut)), fileSize: cut) == .invalid, "meta past the file's end")
        // iloc claiming 2^32 - 1 items, 8-byte offsets: refused, in no time.
        var bogus = file
        let iloc = try #require(Self.iloc(file))
        bogus[iloc.payload] = 2
        for i in 0..<4 { bogus[iloc.payload + 6 + i] = 0xFF }
        #expect(HEIF.scan(Array(bogus.prefix(HEIF.firstRead)), fileSize: bogus.count) == .invalid)
        // Seeded single-byte corruptions of the meta box: a layout inside the file, or a refusal.
        var random = SeededRandom(seed: 2026)
        let started = ContinuousClock.now
        for _ in 0..<3000 {
            var bytes = Array(file.prefix(layout.metaEnd + 64))
            for _ in 0..<(1 + Int(random.next() % 3)) {
                bytes[Int(random.next() % UInt64(layout.metaEnd))] = UInt8(truncatingIfNeeded: random.next())
            }
            if case .found(let found) = HEIF.scan(bytes, fileSize: file.count) {
                for thumbnail in found.thumbnails {
                    #expect(thumbnail.extents.allSatisfy { $0.lowerBound >= 0 && $0.upperBound <= file.count })
                    #expect(thumbnail.extents.reduce(0) { $0 + $1.count } <= HEIF.maxThumbnailLength)
                }
            }
        }
        #expect(ContinuousClock.now - started < .seconds(10), "3000 scans: \(ContinuousClock.now - started)")
    }

    /// From nginx: tiles of HEICs with a thumbnail item (`heif-enc -t 320`; libheif's encoder
    /// in orientations 3, 6 and 8) stand upright and cost the meta box and the item, a
    /// fraction of the file (nginx's log says); one without a thumbnail item is downloaded
    /// whole as before and still gets its tile; a garbage meta box is a 422 at once.
    @Test(.enabled(if: NginxServer.isAvailable)) func remoteTilesReadOnlyTheMetaBoxAndTheThumbnail() async throws {
        let root = try TempDir(prefix: "heif-http")
        try await Self.heifEnc(root.file("IMG_0001.HEIC"))
        try await Self.heifEnc(root.file("PLAIN.HEIC"), thumbnail: false)
        let image = Self.noisy()
        try await onThread {
            for n in [3, 6, 8] {
                try HEIFCodec.encode(image, to: root.file("IMG_000\(n).HEIC"), orientation: n, thumbnailSide: 320)
            }
        }
        var broken = try Self.bytes(root.file("IMG_0001.HEIC"))
        let iloc = try #require(Self.iloc(broken))
        broken[iloc.payload] = 9  // no such iloc version
        try Data(broken).write(to: URL(fileURLWithPath: root.file("BROKEN.HEIC")))
        let nginx = try NginxServer(root: root.path)
        let cache = try TempDir(prefix: "heif-http-cache")
        var configuration = WebConfiguration(source: try RemoteURL(parsing: nginx.url("/")), host: "127.0.0.1", port: 0)
        configuration.cacheDirectory = cache.path
        configuration.importDirectory = cache.file("imported")
        let api = try WebAPI(configuration: configuration)
        for n in [1, 3, 6, 8] {
            let name = "/IMG_000\(n).HEIC"
            let size = try Self.bytes(root.path + name).count
            let thumb = await api.handle(APITests.request("/api/thumb?path=\(name)&v=1"))
            guard case .data(let t) = thumb.body, thumb.status == 200 else {
                Issue.record("HEIC tile \(n): \(thumb.status) \(APITests.object(thumb))")
                continue
            }
            try OrientedSamples.expectUpright([UInt8](t), n, "HEIC range tile")
            let tile = try JPEGCodec.decode(data: t).image
            #expect(max(tile.width, tile.height) == 256, "\(tile.width)x\(tile.height)")
            let sent = InMemoryReadTests.nginxSent(nginx, name)
            #expect(sent.bytes * 4 < size, "HEIC tile \(n): nginx sent \(sent) of \(size)")
            print("HEIC tile over HTTP: nginx sent \(sent.bytes) bytes in \(sent.requests) requests of \(size)")
        }
        // No thumbnail item: the whole file, and a tile made from the image.
        let plain = await api.handle(APITests.request("/api/thumb?path=/PLAIN.HEIC&v=1"))
        guard case .data(let p) = plain.body, plain.status == 200 else {
            Issue.record("PLAIN.HEIC: \(plain.status)")
            return
        }
        try OrientedSamples.expectUpright([UInt8](p), 1, "HEIC without a thumbnail item")
        let plainSize = try Self.bytes(root.file("PLAIN.HEIC")).count
        #expect(InMemoryReadTests.nginxSent(nginx, "/PLAIN.HEIC").bytes >= plainSize, "downloaded whole")
        // A garbage meta box: the file-type tile at once, no download.
        let started = ContinuousClock.now
        let bad = await api.handle(APITests.request("/api/thumb?path=/BROKEN.HEIC&v=1"))
        #expect(bad.status == 422, "\(bad.status)")
        #expect(ContinuousClock.now - started < .seconds(2), "answered in \(ContinuousClock.now - started)")
        let message = APITests.object(bad)["error"] as? String ?? ""
        #expect(message.hasPrefix("cannot read /BROKEN.HEIC as a photo: not a readable HEIF image ("), "\(message)")
        let badSent = InMemoryReadTests.nginxSent(nginx, "/BROKEN.HEIC")
        #expect(badSent.bytes <= HEIF.firstRead + 1024, "BROKEN.HEIC: nginx sent \(badSent)")
    }
}
