import FerryKit
import Foundation

/// Makes small JPEG previews of photos with libjpeg-turbo: a DCT-scaled decode
/// (the cheapest size at least as large as the thumbnail), an area-averaging
/// reduction to the final size, the photo's Exif orientation applied to the
/// reduced pixels (so every result stands upright and carries no orientation
/// of its own), and a fresh encode.
///
/// Turning the decoded pixels rather than the JPEG (libjpeg-turbo's lossless
/// `tjTransform`) because every result here is decoded and re-encoded anyway,
/// and turning the already reduced pixels costs a copy of a few hundred KB at
/// most; the lossless transform cannot move the partial blocks at the edge of
/// an image whose sides are not multiples of the MCU (a 160 x 120 Exif
/// thumbnail in 4:2:0 is 7.5 MCUs high) without trimming them.
public enum ThumbnailMaker {
    /// What a photo file is, for what to decode.
    public enum Kind: Sendable {
        /// A JPEG.
        case jpeg
        /// A raw file whose embedded JPEG is shown (``RawPreview``).
        case raw
        /// A HEIC/HEIF image (``HEIFCodec``): its thumbnail item when large enough, else the image.
        case heif
    }

    /// The longest side of a thumbnail unless asked otherwise.
    public static let defaultSide = 256

    /// Makes an upright thumbnail of a JPEG file.
    ///
    /// - Parameters:
    ///   - path: The photo.
    ///   - maxSide: The longest side of the result; smaller photos keep their size.
    ///   - quality: JPEG quality of the result.
    /// - Returns: The thumbnail's JPEG bytes, turned as its Exif orientation says.
    /// - Throws: ``JPEGError`` when the file is missing or not a readable JPEG.
    public static func thumbnail(ofFile path: String, maxSide: Int = defaultSide, quality: Int = 80)
        throws(JPEGError) -> [UInt8]
    {
        let decoded = try JPEGCodec.decode(file: path, minSide: maxSide)
        let orientation = orientation(ofFile: path)
        return try JPEGCodec.encode(
            JPEGCodec.orient(JPEGCodec.downscale(decoded.image, maxSide: maxSide), orientation: orientation),
            quality: quality)
    }

    /// Makes a reduced upright JPEG of a photo, of the JPEG a raw file embeds (see ``RawPreview``),
    /// or of a HEIF image (from its thumbnail item when that has at least `maxSide` pixels).
    ///
    /// - Throws: ``JPEGError``; `.corrupt` also for a raw file without an embedded preview,
    ///   `.heif` for a HEIF file libheif refuses.
    public static func scaled(ofFile path: String, kind: Kind, maxSide: Int, quality: Int) throws(JPEGError)
        -> [UInt8]
    {
        switch kind {
        case .jpeg: return try thumbnail(ofFile: path, maxSide: maxSide, quality: quality)
        case .heif:
            // Upright already: libheif applies irot/imir.
            let decoded = try HEIFCodec.decode(file: path, minSide: maxSide)
            return try JPEGCodec.encode(JPEGCodec.downscale(decoded.image, maxSide: maxSide), quality: quality)
        case .raw: break
        }
        guard let embedded = RawPreview.jpeg(ofFile: path) else {
            throw JPEGError(.corrupt, path: path, detail: "no embedded preview in this raw file")
        }
        return try scaled(
            jpeg: Array(embedded.jpeg), maxSide: maxSide, quality: quality, orientation: embedded.orientation)
    }

    /// Makes a reduced JPEG of JPEG bytes (a raw file's embedded preview), turned by `orientation`.
    public static func scaled(jpeg: [UInt8], maxSide: Int, quality: Int, orientation: Int?) throws(JPEGError)
        -> [UInt8]
    {
        let decoded = try JPEGCodec.decode(data: jpeg, minSide: maxSide)
        return try JPEGCodec.encode(
            JPEGCodec.orient(JPEGCodec.downscale(decoded.image, maxSide: maxSide), orientation: orientation),
            quality: quality)
    }

    /// A small JPEG (a camera's Exif thumbnail) turned upright: the bytes unchanged
    /// when `orientation` is 1 or unknown, else decoded, turned and encoded again.
    public static func upright(jpeg: [UInt8], orientation: Int?, quality: Int = 90) throws(JPEGError) -> [UInt8] {
        guard let orientation, (2...8).contains(orientation) else { return jpeg }
        let decoded = try JPEGCodec.decode(data: jpeg)
        return try JPEGCodec.encode(JPEGCodec.orient(decoded.image, orientation: orientation), quality: quality)
    }

    /// The Exif orientation of a photo on disk, from its first 128 KiB; nil when it records none.
    static func orientation(ofFile path: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: EXIFThumbnail.sufficientPrefixLength)) ?? Data()
        return ExifOrientation.read(from: data)
    }
}
