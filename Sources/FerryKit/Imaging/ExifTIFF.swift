/// The TIFF structure that holds a photo's Exif data: inside a JPEG's Exif APP1
/// segment, the whole header of a TIFF-based raw file (CR2, NEF, ARW, DNG,
/// ORF, RW2, PEF), or a CR3 file's `CMT1` box (`CR3`), read from the file's first bytes.
///
/// Nothing in the bytes is trusted: every read is bounds-checked against the
/// bytes given (a truncated file reads as missing fields), an IFD with more than
/// ``maxEntries`` entries is refused, and every IFD is visited at most once, so
/// looping or bogus offsets end the walk instead of a crash or a hang.
struct ExifTIFF {
    /// One IFD entry: its type, count and where its value starts (absolute index
    /// into the bytes), or nil when the value lies outside them.
    struct Entry {
        var type: Int
        var count: Int
        var at: Int?
    }

    /// The entries of one IFD by tag (the first of a repeated tag wins), and the next IFD's offset.
    struct IFD {
        var entries: [Int: Entry]
        var next: Int?

        subscript(tag: Int) -> Entry? { entries[tag] }
    }

    /// IFDs in real files have a few dozen entries; more means garbage.
    static let maxEntries = 1000

    private let bytes: [UInt8]
    /// Index of the TIFF header ("II"/"MM") in `bytes`; offsets count from here.
    private let base: Int
    /// One past the last byte the TIFF data may use.
    private let end: Int
    private let bigEndian: Bool
    /// Offset of IFD0.
    private(set) var firstIFD: Int

    /// Reads the header at `base`; nil when it is not a TIFF header.
    ///
    /// Besides TIFF's 42, accepts the magic numbers of Olympus ORF (`RO`, `SR`)
    /// and Panasonic RW2 (0x55), whose IFDs are laid out as TIFF's.
    init?(_ bytes: [UInt8], base: Int = 0, end: Int? = nil) {
        let end = min(end ?? bytes.count, bytes.count)
        guard base >= 0, end - base >= 8 else { return nil }
        self.bytes = bytes
        self.base = base
        self.end = end
        switch (bytes[base], bytes[base + 1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        firstIFD = 0
        guard let magic = u16(2), [42, 0x4F52, 0x5352, 0x55].contains(magic), let first = u32(4) else { return nil }
        firstIFD = first
    }

    /// The Exif TIFF data of a JPEG (its Exif APP1 segment), of a TIFF-based
    /// raw file (the file itself) or of a CR3 file (`CMT1`, its IFD0), or nil when `bytes` show none.
    static func locate(in bytes: [UInt8]) -> ExifTIFF? {
        guard bytes.count >= 8 else { return nil }
        if bytes[0] == 0xFF, bytes[1] == 0xD8 { return inJPEG(bytes) }
        if CR3.isCR3(bytes) { return inCR3(bytes).ifd0 }
        return ExifTIFF(bytes)
    }

    /// A CR3 file's `CMT1` (IFD0) and `CMT2` (whose IFD0 is the Exif IFD) TIFF blocks.
    static func inCR3(_ bytes: [UInt8]) -> (ifd0: ExifTIFF?, exif: ExifTIFF?) {
        guard let blocks = CR3.tiffBlocks(in: bytes) else { return (nil, nil) }
        return (
            blocks.ifd0.flatMap { ExifTIFF(bytes, base: $0.lowerBound, end: $0.upperBound) },
            blocks.exif.flatMap { ExifTIFF(bytes, base: $0.lowerBound, end: $0.upperBound) }
        )
    }

    /// Walks a JPEG's markers from SOI to the first Exif APP1 segment (before SOS).
    private static func inJPEG(_ b: [UInt8]) -> ExifTIFF? {
        var pos = 2
        while case .segment(let marker, let at, let length) = JPEGMarkers.next(b, from: &pos) {
            let start = at + 4
            if marker == 0xE1, start + 6 <= b.count, b[start] == 0x45, b[start + 1] == 0x78,
                b[start + 2] == 0x69, b[start + 3] == 0x66, b[start + 4] == 0, b[start + 5] == 0
            {
                return ExifTIFF(b, base: start + 6, end: at + 2 + length)
            }
            pos = at + 2 + length
        }
        return nil
    }

    func u16(_ offset: Int) -> Int? {
        guard offset >= 0, offset <= end - base - 2 else { return nil }
        let a = Int(bytes[base + offset])
        let b = Int(bytes[base + offset + 1])
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    func u32(_ offset: Int) -> Int? {
        guard let first = u16(offset), let second = u16(offset + 2) else { return nil }
        return bigEndian ? first << 16 | second : second << 16 | first
    }

    /// The IFD at `offset`, or nil when it lies outside the bytes, is absurd, or was seen before.
    func ifd(at offset: Int?, visited: inout Set<Int>) -> IFD? {
        guard let offset, offset >= 8, offset < end - base, visited.insert(offset).inserted,
            let count = u16(offset), count <= Self.maxEntries
        else { return nil }
        var entries: [Int: Entry] = [:]
        for i in 0..<count {
            let e = offset + 2 + 12 * i
            // A truncated IFD keeps the entries that arrived.
            guard let tag = u16(e), let type = u16(e + 2), let n = u32(e + 4) else { break }
            guard entries[tag] == nil else { continue }
            let unit: Int
            switch type {
            case 1, 2, 6, 7: unit = 1  // BYTE, ASCII, SBYTE, UNDEFINED
            case 3, 8: unit = 2  // SHORT, SSHORT
            case 4, 9, 11, 13: unit = 4  // LONG, SLONG, FLOAT, IFD
            case 5, 10, 12: unit = 8  // RATIONAL, SRATIONAL, DOUBLE
            default: continue
            }
            let size = unit.multipliedReportingOverflow(by: n)
            let valueOffset: Int?
            if size.overflow {
                valueOffset = nil
            } else if size.partialValue <= 4 {
                valueOffset = e + 8
            } else {
                valueOffset = u32(e + 8)
            }
            var at: Int?
            if let valueOffset, !size.overflow, valueOffset >= 0, valueOffset <= end - base - size.partialValue {
                at = base + valueOffset
            }
            entries[tag] = Entry(type: type, count: n, at: at)
        }
        let next = u32(offset + 2 + 12 * count).flatMap { $0 == 0 ? nil : $0 }
        return IFD(entries: entries, next: next)
    }

    /// The first value of a SHORT or LONG entry.
    func number(_ entry: Entry?) -> Int? {
        guard let entry, entry.count >= 1, let at = entry.at else { return nil }
        switch entry.type {
        case 3: return u16(at - base)
        case 4, 13: return u32(at - base)
        default: return nil
        }
    }

    /// An ASCII entry up to its first NUL, trimmed of spaces; nil when empty or
    /// longer than `limit` bytes (dates and offsets are a few dozen).
    func text(_ entry: Entry?, limit: Int = 64) -> String? {
        guard let entry, entry.type == 2 || entry.type == 7, entry.count <= limit, let at = entry.at else {
            return nil
        }
        let raw = bytes[at..<(at + entry.count)].prefix { $0 != 0 }
        guard raw.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        let s = String(decoding: raw, as: UTF8.self).drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()
        return s.isEmpty ? nil : String(s)
    }
}
