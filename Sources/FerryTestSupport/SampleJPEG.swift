/// Small JPEG files built byte by byte for tests: an Exif segment with the main
/// image's orientation and pixel size and an embedded thumbnail, as a camera
/// writes it.
public enum SampleJPEG {
    /// A tiny stand-in thumbnail: SOI, a comment, EOI.
    public static let thumbnail: [UInt8] = [0xFF, 0xD8, 0xFF, 0xFE, 0x00, 0x07] + Array("thumb".utf8) + [0xFF, 0xD9]

    /// A JPEG whose Exif data says `width` × `height`, `orientation`, and holds
    /// ``thumbnail`` (little-endian TIFF).
    public static func withThumbnail(width: Int = 4000, height: Int = 3000, orientation: Int = 6) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] {
            [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)]
        }
        func short(_ tag: Int, _ v: Int) -> [UInt8] { u16(tag) + u16(3) + u32(1) + u16(v) + [0, 0] }
        func long(_ tag: Int, _ v: Int) -> [UInt8] { u16(tag) + u16(4) + u32(1) + u32(v) }
        func ifd(_ entries: [[UInt8]], next: Int) -> [UInt8] { u16(entries.count) + entries.flatMap { $0 } + u32(next) }
        let ifd0 = 8
        let exif = ifd0 + 2 + 12 * 2 + 4
        let ifd1 = exif + 2 + 12 * 2 + 4
        let thumbAt = ifd1 + 2 + 12 * 3 + 4
        var tiff: [UInt8] = [0x49, 0x49] + u16(42) + u32(ifd0)
        tiff += ifd([short(0x0112, orientation), long(0x8769, exif)], next: ifd1)
        tiff += ifd([short(0xA002, width), short(0xA003, height)], next: 0)
        tiff += ifd([short(0x0103, 6), long(0x0201, thumbAt), long(0x0202, thumbnail.count)], next: 0)
        tiff += thumbnail
        func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
            let n = payload.count + 2
            return [0xFF, marker, UInt8(n >> 8), UInt8(n & 0xFF)] + payload
        }
        let app1 = segment(0xE1, Array("Exif".utf8) + [0, 0] + tiff)
        let scan = segment(0xDA, [1, 1, 0, 0, 0x3F, 0]) + [0x12, 0x34, 0xFF, 0x00, 0x56]
        return [0xFF, 0xD8] + app1 + scan + [0xFF, 0xD9]
    }
}
