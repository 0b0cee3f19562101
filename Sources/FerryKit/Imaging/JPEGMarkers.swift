/// JPEG's marker layout, read in one place for the Exif readers
/// (``EXIFThumbnail``, ``ExifTIFF``, the prefix a thumbnail needs): fill bytes,
/// markers without a length (RSTn, SOI, TEM), and the length of every other
/// segment, up to EOI or SOS, after which no header follows.
enum JPEGMarkers {
    /// What lies at a position in the bytes.
    enum Next: Equatable {
        /// A segment: its marker, where its `FF` is, and its length field (which counts
        /// itself, not the marker: the segment ends at `at + 2 + length`).
        case segment(marker: UInt8, at: Int, length: Int)
        /// The bytes end before a segment's header (4 bytes) at `at`.
        case needMore(at: Int)
        /// No more headers: EOI, SOS, a byte that starts no marker, or a length under 2.
        case end
    }

    /// The next segment from `pos` (a marker's `FF`; 2 after SOI), past fill bytes
    /// and markers without a length; `pos` moves to where it was found. `bytes`
    /// is indexed from 0 (an array or a buffer).
    static func next<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, from pos: inout Int) -> Next
    where Bytes.Index == Int {
        // Every pass moves `pos` forward by at least one byte.
        while true {
            guard pos + 4 <= bytes.count else { return .needMore(at: pos) }
            guard bytes[pos] == 0xFF else { return .end }
            let marker = bytes[pos + 1]
            if marker == 0xFF {  // fill byte
                pos += 1
                continue
            }
            if marker == 0xD9 || marker == 0xDA { return .end }  // EOI, SOS: no more headers
            if (0xD0...0xD8).contains(marker) || marker == 0x01 {  // no length field
                pos += 2
                continue
            }
            let length = Int(bytes[pos + 2]) << 8 | Int(bytes[pos + 3])
            guard length >= 2 else { return .end }
            return .segment(marker: marker, at: pos, length: length)
        }
    }

    /// SOF0–SOF15, less DHT (C4), JPG (C8) and DAC (CC).
    static func isStartOfFrame(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }
}
