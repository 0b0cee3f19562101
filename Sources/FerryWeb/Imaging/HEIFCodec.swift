import CHeif
import Foundation

/// HEIC/HEIF decoding on libheif (`CHeif/shim.h`): phones' photos.
///
/// The decoded pixels are upright: libheif applies the file's `irot`/`imir`
/// transforms, which is how HEIF records orientation (an Exif `Orientation` in
/// a HEIF file only mirrors them, and is not applied again). Errors come back
/// as ``JPEGError`` `.heif` with libheif's message; a file over 16384 pixels a
/// side or 50 MP is refused before any pixels are decoded. Calls block: run
/// them off the cooperative pool (see ``BlockingWorkers``).
public enum HEIFCodec {
    /// Decoded pixels and the size of the image as shown.
    public struct Decoded: Sendable {
        /// The pixels: the file's thumbnail item or the whole image, upright.
        public var image: RGBImage
        /// Width of the primary image as shown.
        public var imageWidth: Int
        /// Height of the primary image as shown.
        public var imageHeight: Int
        /// Whether the pixels are the file's own thumbnail item.
        public var fromThumbnail: Bool
    }

    /// Decodes a HEIF file's primary image, or its thumbnail item when that has a
    /// longer side of at least `minSide` (0: always the image).
    ///
    /// - Throws: ``JPEGError``: `.heif` when libheif refuses the file, `.outOfMemory`.
    public static func decode(file path: String, minSide: Int = 0) throws(JPEGError) -> Decoded {
        var image = ferry_heif_image()
        var message = [CChar](repeating: 0, count: 256)
        let status = ferry_heif_decode(path, nil, 0, Int32(minSide), &image, &message, message.count)
        return try finish(status, image, message, path: path)
    }

    /// Decodes HEIF bytes held in memory; see ``decode(file:minSide:)``.
    public static func decode(data: [UInt8], minSide: Int = 0) throws(JPEGError) -> Decoded {
        guard !data.isEmpty else { throw JPEGError(.invalidArgument) }
        var image = ferry_heif_image()
        var message = [CChar](repeating: 0, count: 256)
        let status = data.withUnsafeBytes { raw in
            ferry_heif_decode(nil, raw.baseAddress, raw.count, Int32(minSide), &image, &message, message.count)
        }
        return try finish(status, image, message, path: nil)
    }

    /// A file known only in part: its first bytes (the `meta` box) and the bytes of one
    /// thumbnail item, as a range read fetched them; everything else reads as zeros.
    public struct Sparse: Sendable {
        /// The file's size.
        public var fileSize: Int
        /// The thumbnail item to decode.
        public var thumbnail: UInt32
        /// The bytes known, each at its file offset (inside the file).
        public var parts: [(offset: Int, bytes: [UInt8])]

        /// Creates a sparse copy; parts reaching past `fileSize` are cut there.
        public init(fileSize: Int, thumbnail: UInt32, parts: [(offset: Int, bytes: [UInt8])]) {
            self.fileSize = fileSize
            self.thumbnail = thumbnail
            self.parts = parts.compactMap { part in
                guard part.offset >= 0, part.offset < fileSize else { return nil }
                return (part.offset, Array(part.bytes.prefix(fileSize - part.offset)))
            }
        }
    }

    /// Decodes the thumbnail item of a sparse copy (never the primary image, whose bytes it lacks).
    ///
    /// - Throws: ``JPEGError``: `.heif` when libheif refuses the bytes or the file has no such
    ///   thumbnail item, `.outOfMemory`.
    public static func decode(sparse: Sparse) throws(JPEGError) -> Decoded {
        guard sparse.fileSize > 0, sparse.thumbnail > 0, !sparse.parts.isEmpty else {
            throw JPEGError(.invalidArgument)
        }
        var buffer: [UInt8] = []
        var spans: [ferry_heif_span] = []
        for part in sparse.parts {
            spans.append(
                ferry_heif_span(offset: Int64(part.offset), length: Int64(part.bytes.count), at: Int64(buffer.count)))
            buffer += part.bytes
        }
        var image = ferry_heif_image()
        var message = [CChar](repeating: 0, count: 256)
        let status = buffer.withUnsafeBufferPointer { bytes in
            spans.withUnsafeBufferPointer { spans in
                ferry_heif_decode_sparse(
                    bytes.baseAddress, spans.baseAddress, Int32(spans.count), Int64(sparse.fileSize), sparse.thumbnail,
                    &image, &message, message.count)
            }
        }
        if status == FERRY_HEIF_NONE { throw JPEGError(.heif, detail: "no thumbnail item \(sparse.thumbnail)") }
        return try finish(status, image, message, path: nil)
    }

    /// The primary image's Exif data (from its TIFF header on) and its size as shown.
    ///
    /// - Returns: nil for the Exif data when the file has none.
    /// - Throws: ``JPEGError`` `.heif` when libheif refuses the file.
    public static func exif(file path: String) throws(JPEGError) -> (tiff: [UInt8]?, width: Int, height: Int) {
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var width: Int32 = 0
        var height: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = ferry_heif_exif(path, &out, &size, &width, &height, &message, message.count)
        defer { if let out { ferry_heif_free(out) } }
        if status == FERRY_HEIF_NONE { return (nil, Int(width), Int(height)) }
        guard status == FERRY_HEIF_OK, let out else { throw error(status, message, path: path) }
        return (Array(UnsafeBufferPointer(start: out, count: size)), Int(width), Int(height))
    }

    /// Writes `image` as a HEIC file (HEVC), its `orientation` (Exif's 1...8) as
    /// `irot`/`imir`, with a thumbnail item of at most `thumbnailSide` pixels
    /// (0: none) and an Exif item (TIFF data) when given: the tests' samples.
    public static func encode(
        _ image: RGBImage, to path: String, quality: Int = 70, orientation: Int = 1, thumbnailSide: Int = 0,
        exif: [UInt8]? = nil
    ) throws(JPEGError) {
        var message = [CChar](repeating: 0, count: 256)
        let exifBytes = exif ?? []
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            exifBytes.withUnsafeBufferPointer { tiff in
                ferry_heif_encode(
                    pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(quality), Int32(orientation),
                    Int32(thumbnailSide), tiff.baseAddress, Int32(tiff.count), path, &message, message.count)
            }
        }
        guard status == FERRY_HEIF_OK else { throw error(status, message, path: path) }
    }

    private static func finish(
        _ status: Int32, _ image: ferry_heif_image, _ message: [CChar], path: String?
    ) throws(JPEGError) -> Decoded {
        guard status == FERRY_HEIF_OK, let pixels = image.pixels else { throw error(status, message, path: path) }
        defer { ferry_heif_free(pixels) }
        let width = Int(image.width)
        let height = Int(image.height)
        return Decoded(
            image: RGBImage(
                width: width, height: height,
                pixels: Array(UnsafeBufferPointer(start: pixels, count: width * height * 3))),
            imageWidth: Int(image.image_width), imageHeight: Int(image.image_height),
            fromThumbnail: image.from_thumbnail != 0)
    }

    private static func error(_ status: Int32, _ message: [CChar], path: String?) -> JPEGError {
        let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        switch status {
        case FERRY_HEIF_MEMORY: return JPEGError(.outOfMemory, path: path)
        case FERRY_HEIF_ARGUMENT: return JPEGError(.invalidArgument, path: path)
        default: return JPEGError(.heif, path: path, detail: text.isEmpty ? nil : text)
        }
    }
}
