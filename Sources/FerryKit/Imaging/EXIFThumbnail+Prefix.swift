import Foundation

extension EXIFThumbnail {
    /// How many bytes the first read of a remote photo asks for: the Exif block of
    /// most cameras (20-60 KB) fits, so one request usually finds the thumbnail.
    public static let firstReadLength = 64 * 1024

    /// The most a thumbnail search reads from one file (256 KiB).
    public static let maximumPrefixLength = 256 * 1024

    /// How many leading bytes of a JPEG hold its Exif block, judged from the first
    /// bytes alone.
    ///
    /// The markers before the Exif segment say how long each segment is, so the
    /// prefix tells whether the Exif block lies further than it reaches.
    ///
    /// - Parameter prefix: The first bytes of a file.
    /// - Returns: The length of prefix needed when the Exif block (or the segment
    ///   before it) goes on past `prefix`; nil when `prefix` already holds the
    ///   Exif block, or shows there is none (not a JPEG, image data reached), or
    ///   it would lie beyond ``maximumPrefixLength``.
    public static func prefixLengthNeeded(forJPEGPrefix prefix: some RandomAccessCollection<UInt8>) -> Int? {
        let b = Array(prefix)
        guard b.count >= 2, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        var pos = 2
        while true {
            switch JPEGMarkers.next(b, from: &pos) {
            case .needMore(let at): return grow(to: at + 4 + 64 * 1024)
            case .end: return nil
            case .segment(let marker, let at, let length):
                let end = at + 2 + length
                if marker == 0xE1 {
                    // The Exif segment: everything the thumbnail needs is inside it.
                    return end > b.count ? grow(to: end) : nil
                }
                // Exif comes first (after SOI or a JFIF APP0): past the frame there is none.
                if JPEGMarkers.isStartOfFrame(marker) { return nil }
                if end > b.count { return grow(to: end + 4 + 64 * 1024) }
                pos = end
            }
        }
    }

    private static func grow(to length: Int) -> Int? {
        let capped = min(length, maximumPrefixLength)
        return capped > 0 ? capped : nil
    }

    /// Finds the Exif thumbnail of a remote JPEG by reading only its first bytes.
    ///
    /// Reads ``firstReadLength`` bytes, then more only when the Exif block says
    /// the thumbnail lies further (``prefixLengthNeeded(forJPEGPrefix:)``), never
    /// past ``maximumPrefixLength``.
    ///
    /// - Parameter read: Reads one byte range of the file (fewer bytes at its end).
    /// - Returns: The thumbnail, or nil when the file has none.
    /// - Throws: What `read` throws, and `FerryError` `.cancelled` when the task is cancelled.
    public static func fetch(reading read: (Range<Int64>) async throws(FerryError) -> Data) async throws(FerryError)
        -> Thumbnail?
    {
        var bytes = [UInt8](try await read(0..<Int64(firstReadLength)))
        var asked = firstReadLength
        while bytes.count == asked, let need = prefixLengthNeeded(forJPEGPrefix: bytes), need > bytes.count {
            if Task.isCancelled { throw FerryError(.cancelled, operation: "thumbnail") }
            let more = try await read(Int64(bytes.count)..<Int64(need))
            asked = need
            bytes.append(contentsOf: more)
        }
        return extract(fromJPEG: bytes)
    }
}
