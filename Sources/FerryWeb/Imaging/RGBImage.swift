/// An image as packed RGB bytes (3 a pixel, rows top to bottom, no padding).
public struct RGBImage: Sendable, Hashable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// `width * height * 3` bytes.
    public var pixels: [UInt8]

    /// Creates an image from its pixels.
    ///
    /// - Precondition: `pixels.count == width * height * 3`.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height * 3, "RGB size mismatch")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The size that fits inside `maxSide` x `maxSide` keeping the aspect ratio; never larger than now.
    public func fittedSize(maxSide: Int) -> (width: Int, height: Int) {
        let longer = max(width, height)
        guard longer > maxSide else { return (width, height) }
        let scale = Double(maxSide) / Double(longer)
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }
}
