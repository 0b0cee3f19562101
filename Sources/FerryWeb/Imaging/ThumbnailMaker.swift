/// Makes small JPEG previews of photos with libjpeg-turbo: a DCT-scaled decode
/// (the cheapest size at least as large as the thumbnail), an area-averaging
/// reduction to the final size, and a fresh encode.
public enum ThumbnailMaker {
    /// The longest side of a thumbnail unless asked otherwise.
    public static let defaultSide = 256

    /// Makes a thumbnail of a JPEG file.
    ///
    /// - Parameters:
    ///   - path: The photo.
    ///   - maxSide: The longest side of the result; smaller photos keep their size.
    ///   - quality: JPEG quality of the result.
    /// - Returns: The thumbnail's JPEG bytes.
    /// - Throws: ``JPEGError`` when the file is missing or not a readable JPEG.
    public static func thumbnail(ofFile path: String, maxSide: Int = defaultSide, quality: Int = 80)
        throws(JPEGError) -> [UInt8]
    {
        let decoded = try JPEGCodec.decode(file: path, minSide: maxSide)
        return try JPEGCodec.encode(JPEGCodec.downscale(decoded.image, maxSide: maxSide), quality: quality)
    }

    /// Makes a reduced JPEG of a photo, or of the JPEG a raw file embeds (see ``RawPreview``).
    ///
    /// - Throws: ``JPEGError``; `.corrupt` also for a raw file without an embedded preview.
    public static func scaled(ofFile path: String, raw: Bool, maxSide: Int, quality: Int) throws(JPEGError) -> [UInt8] {
        guard raw else { return try thumbnail(ofFile: path, maxSide: maxSide, quality: quality) }
        guard let jpeg = RawPreview.jpeg(ofFile: path) else {
            throw JPEGError(.corrupt, path: path, detail: "no embedded preview in this raw file")
        }
        return try scaled(jpeg: jpeg, maxSide: maxSide, quality: quality)
    }

    /// Makes a reduced JPEG of JPEG bytes (a raw file's embedded preview).
    public static func scaled(jpeg: [UInt8], maxSide: Int, quality: Int) throws(JPEGError) -> [UInt8] {
        let decoded = try JPEGCodec.decode(data: jpeg, minSide: maxSide)
        return try JPEGCodec.encode(JPEGCodec.downscale(decoded.image, maxSide: maxSide), quality: quality)
    }
}
