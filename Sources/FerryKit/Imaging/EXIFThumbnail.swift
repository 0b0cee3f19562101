import Foundation

/// Finds the thumbnail a camera embeds in a JPEG's Exif data, as FlashAir's
/// `thumbnail.cgi` serves it.
///
/// The Exif data lives in one APP1 segment, whose 16-bit length caps it at 65,537
/// bytes with its marker; Exif puts it right after the start-of-image marker, or
/// after a JFIF APP0. The thumbnail lies inside that segment, so the first
/// ``sufficientPrefixLength`` bytes of a file are always enough: callers need not
/// read a whole photo.
///
/// Parsing never trusts the file: every offset is bounds-checked, IFDs with absurd
/// entry counts are rejected, each IFD is visited at most once, and the marker walk
/// always moves forward, so hostile input gives nil, never a crash or a hang.
public enum EXIFThumbnail {
    /// An embedded thumbnail and what the Exif data says about the main image.
    ///
    /// The bytes are the thumbnail as the camera stored it, **not turned
    /// upright**: cameras store it in the main image's pixel layout, and the
    /// thumbnail carries no Exif of its own, so a browser or decoder shows it
    /// as stored. To show it upright, apply ``orientation`` to its decoded
    /// pixels (see ``ExifOrientation`` for what each value means); the sizes
    /// as shown are ``displayedWidth`` and ``displayedHeight``.
    public struct Thumbnail: Sendable, Hashable {
        /// The thumbnail, a complete JPEG starting with `FF D8`, as stored (not turned upright).
        public var jpeg: Data
        /// Width of the main image in pixels as stored (not of the thumbnail, not turned).
        public var width: Int?
        /// Height of the main image in pixels as stored (not of the thumbnail, not turned).
        public var height: Int?
        /// Exif orientation of the main image, 1...8 (1 is upright), when recorded:
        /// the turn (or mirror) that shows the main image and this thumbnail upright.
        /// From a card, its `X-exif-ORIENTATION` header; elsewhere IFD0's `Orientation`.
        /// nil (older cards send no header) is shown as stored.
        public var orientation: Int?

        /// The main image's width once shown upright (``height`` for orientations 5...8).
        public var displayedWidth: Int? { ExifOrientation.swapsSides(orientation) ? height : width }
        /// The main image's height once shown upright (``width`` for orientations 5...8).
        public var displayedHeight: Int? { ExifOrientation.swapsSides(orientation) ? width : height }

        /// Creates a thumbnail description.
        public init(jpeg: Data, width: Int? = nil, height: Int? = nil, orientation: Int? = nil) {
            self.jpeg = jpeg
            self.width = width
            self.height = height
            self.orientation = orientation
        }
    }

    /// How many leading bytes of a JPEG file are enough to find the thumbnail: the
    /// largest possible APP0 and APP1 segments, with room to spare (128 KiB).
    public static let sufficientPrefixLength = 128 * 1024

    /// Extracts the Exif thumbnail from a JPEG, or from its first bytes.
    ///
    /// Width and height are those of the main image, which is what FlashAir's
    /// `X-exif-WIDTH` and `X-exif-HEIGHT` headers carry: Exif `PixelXDimension` and
    /// `PixelYDimension`, or else the frame header (SOF) when it is within `data`.
    ///
    /// - Parameter data: The JPEG file, or at least its first ``sufficientPrefixLength`` bytes.
    /// - Returns: The thumbnail, or nil when the data is not a JPEG, has no Exif
    ///   APP1 segment, or the thumbnail is missing, out of bounds, or not a JPEG.
    public static func extract(fromJPEG data: some RandomAccessCollection<UInt8>) -> Thumbnail? {
        if let result = data.withContiguousStorageIfAvailable({ extract(buffer: $0) }) {
            return result
        }
        return Array(data).withUnsafeBufferPointer { extract(buffer: $0) }
    }

    /// Extracts the Exif thumbnail from a JPEG file, reading only its first
    /// ``sufficientPrefixLength`` bytes.
    ///
    /// - Parameter path: The local file.
    /// - Returns: The thumbnail, or nil when the file has none.
    /// - Throws: `FerryError` (`.localIO`) when the file cannot be opened or read.
    public static func extract(fromFileAt path: String) throws(FerryError) -> Thumbnail? {
        return extract(fromJPEG: try LocalFile.prefix(ofFileAt: path, length: sufficientPrefixLength))
    }

    // MARK: - Parsing

    /// IFDs in real files have a few dozen entries; more means garbage.
    private static let maxIFDEntries = 1000

    private static func extract(buffer: UnsafeBufferPointer<UInt8>) -> Thumbnail? {
        guard let segments = scanMarkers(buffer), let exif = segments.exif else { return nil }
        let tiffBytes = UnsafeBufferPointer(rebasing: buffer[exif])
        guard let tiff = TIFF(tiffBytes) else { return nil }
        var visited: Set<Int> = []

        guard let ifd0 = tiff.ifd(at: tiff.firstIFDOffset, visited: &visited) else { return nil }
        // IFD0 describes the main image; an orientation in IFD1 would be the thumbnail's.
        let orientation = ifd0.value(0x0112).flatMap { (1...8).contains($0) ? $0 : nil }
        var width: Int?
        var height: Int?
        if let exifOffset = ifd0.value(0x8769),
            let exifIFD = tiff.ifd(at: exifOffset, visited: &visited),
            let w = exifIFD.value(0xA002), let h = exifIFD.value(0xA003), w > 0, h > 0
        {
            width = w
            height = h
        }
        if width == nil, let frame = segments.frame {
            width = frame.width
            height = frame.height
        }
        guard let ifd1Offset = ifd0.next,
            let ifd1 = tiff.ifd(at: ifd1Offset, visited: &visited),
            let start = ifd1.value(0x0201), let length = ifd1.value(0x0202),
            start > 0, length >= 4, start <= tiffBytes.count - length,
            tiffBytes[start] == 0xFF, tiffBytes[start + 1] == 0xD8
        else { return nil }
        return Thumbnail(
            jpeg: Data(tiffBytes[start..<(start + length)]), width: width, height: height,
            orientation: orientation)
    }

    private struct Segments {
        /// Byte range of the TIFF data inside the Exif APP1 segment.
        var exif: Range<Int>?
        /// Main image size from the first SOF segment, when non-zero.
        var frame: (width: Int, height: Int)?
    }

    /// Walks the markers from SOI up to SOS (or the end of the data).
    private static func scanMarkers(_ b: UnsafeBufferPointer<UInt8>) -> Segments? {
        guard b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        var found = Segments()
        var pos = 2
        while case .segment(let marker, let at, let length) = JPEGMarkers.next(b, from: &pos) {
            let start = at + 4
            let end = min(at + 2 + length, b.count)
            if marker == 0xE1, found.exif == nil, end - start >= 6,
                b[start] == 0x45, b[start + 1] == 0x78, b[start + 2] == 0x69,
                b[start + 3] == 0x66, b[start + 4] == 0  // "Exif\0", then a pad byte
            {
                found.exif = (start + 6)..<end
            } else if JPEGMarkers.isStartOfFrame(marker), found.frame == nil, end - start >= 5 {
                let height = Int(b[start + 1]) << 8 | Int(b[start + 2])
                let width = Int(b[start + 3]) << 8 | Int(b[start + 4])
                if width > 0, height > 0 { found.frame = (width, height) }
            }
            if found.exif != nil, found.frame != nil { break }
            pos = at + 2 + length
        }
        return found
    }

    /// The TIFF structure inside the Exif segment; offsets are from its first byte.
    private struct TIFF {
        let bytes: UnsafeBufferPointer<UInt8>
        let bigEndian: Bool
        private(set) var firstIFDOffset: Int

        init?(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard bytes.count >= 8 else { return nil }
            self.bytes = bytes
            switch (bytes[0], bytes[1]) {
            case (0x49, 0x49): bigEndian = false  // "II", Intel
            case (0x4D, 0x4D): bigEndian = true  // "MM", Motorola
            default: return nil
            }
            firstIFDOffset = 0
            guard u16(2) == 42, let first = u32(4) else { return nil }
            firstIFDOffset = first
        }

        func u16(_ at: Int) -> Int? {
            guard at >= 0, at <= bytes.count - 2 else { return nil }
            let a = Int(bytes[at])
            let b = Int(bytes[at + 1])
            return bigEndian ? a << 8 | b : b << 8 | a
        }

        func u32(_ at: Int) -> Int? {
            guard let first = u16(at), let second = u16(at + 2) else { return nil }
            return bigEndian ? first << 16 | second : second << 16 | first
        }

        /// Reads the IFD at `offset`, or nil when it is out of bounds, absurd, or seen before.
        func ifd(at offset: Int, visited: inout Set<Int>) -> IFD? {
            guard offset >= 8, visited.insert(offset).inserted, let count = u16(offset),
                count <= EXIFThumbnail.maxIFDEntries,
                offset + 2 + 12 * count <= bytes.count
            else { return nil }
            var values: [Int: Int] = [:]
            for i in 0..<count {
                let entry = offset + 2 + 12 * i
                guard let tag = u16(entry), let type = u16(entry + 2),
                    let n = u32(entry + 4), n >= 1
                else { continue }
                let value: Int?
                switch type {
                case 3: value = u16(entry + 8)  // SHORT
                case 4, 13: value = u32(entry + 8)  // LONG, IFD
                default: value = nil
                }
                if let value, values[tag] == nil { values[tag] = value }
            }
            let next = u32(offset + 2 + 12 * count).flatMap { $0 == 0 ? nil : $0 }
            return IFD(values: values, next: next)
        }
    }

    /// The single-number entries of one IFD, by tag, and the next IFD's offset.
    private struct IFD {
        var values: [Int: Int]
        var next: Int?

        func value(_ tag: Int) -> Int? { values[tag] }
    }
}
