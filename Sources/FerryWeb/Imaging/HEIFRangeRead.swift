import FerryKit
import Foundation

/// Reads what a remote HEIF file's thumbnail needs by range (see ``HEIF`` for the
/// layout): the first 64 KiB, grown to the end of the `meta` box when it is longer
/// (at most twice, never past ``HEIF/maxMetaLength``), then the thumbnail item's
/// extents that lie past what was read (one read each; a 320 x 240 item is 10-30
/// KB). The primary image's megabytes never travel. The result is decoded by
/// ``HEIFCodec/decode(sparse:)``.
enum HEIFRangeRead {
    /// What a range read found.
    enum Outcome: Sendable {
        /// The bytes of the `meta` box and of a thumbnail item large enough.
        case sparse(HEIFCodec.Sparse)
        /// No thumbnail item large enough, or a layout not read by range (`meta` after
        /// `mdat`, data in another file, brands not known here): only the whole file will do.
        case whole
        /// No ISO-BMFF file, or a HEIF file whose `meta` box is garbage: no download can help.
        case invalid(String)
    }

    /// Reads the thumbnail of a HEIF file of `fileSize` bytes through `read` (byte ranges).
    ///
    /// - Parameters:
    ///   - minSide: The longer side the thumbnail item must have.
    ///   - read: Reads a byte range; a server that ignores ranges may send more (cut here).
    /// - Throws: What `read` throws.
    static func thumbnail(fileSize: Int, minSide: Int, read: (Range<Int64>) async throws -> Data) async throws
        -> Outcome
    {
        guard fileSize > 0 else { return .invalid("an empty file") }
        // Only what was asked counts, and a short answer for a range inside the file means
        // the server cannot be read this way.
        func fetch(_ range: Range<Int>) async throws -> [UInt8]? {
            let bytes = [UInt8](try await read(Int64(range.lowerBound)..<Int64(range.upperBound)).prefix(range.count))
            return bytes.count == range.count ? bytes : nil
        }
        guard var prefix = try await fetch(0..<min(fileSize, HEIF.firstRead)) else { return .whole }
        var grows = 0
        while true {
            switch HEIF.scan(prefix, fileSize: fileSize) {
            case .found(let layout):
                guard let thumbnail = layout.thumbnail(minSide: minSide) else { return .whole }
                var parts: [(offset: Int, bytes: [UInt8])] = [(0, prefix)]
                for extent in thumbnail.extents where extent.upperBound > prefix.count {
                    let start = max(extent.lowerBound, prefix.count)
                    guard let bytes = try await fetch(start..<extent.upperBound) else { return .whole }
                    parts.append((start, bytes))
                }
                return .sparse(HEIFCodec.Sparse(fileSize: fileSize, thumbnail: thumbnail.item, parts: parts))
            case .needs(let n):
                guard n > prefix.count, grows < 2 else { return .whole }
                grows += 1
                guard let more = try await fetch(prefix.count..<n) else { return .whole }
                prefix += more
            case .elsewhere:
                return .whole
            case .invalid:
                return .invalid(HEIF.isHEIF(prefix) ? "its meta box is unreadable" : "no ftyp box: not a HEIF file")
            }
        }
    }
}
