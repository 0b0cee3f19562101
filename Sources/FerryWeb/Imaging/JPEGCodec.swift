import CJPEG
import FerryKit
import Foundation

/// JPEG decoding (with DCT scaling) and encoding on libjpeg-turbo.
///
/// Every call runs libjpeg entirely inside the C shim (`CJPEG/shim.h`), which
/// catches libjpeg's fatal errors with setjmp and returns them as codes: a
/// corrupt file gives a ``JPEGError``, never a dead process. Calls block;
/// run them off the cooperative pool (see ``BlockingWorkers``).
public enum JPEGCodec {
    /// A decoded image and the size it has in the file.
    public struct Decoded: Sendable {
        /// The pixels, reduced by ``scaleDenominator``.
        public var image: RGBImage
        /// Width of the image in the file.
        public var sourceWidth: Int
        /// Height of the image in the file.
        public var sourceHeight: Int
        /// The DCT scaling used: 1, 2, 4 or 8.
        public var scaleDenominator: Int
    }

    /// Decodes a JPEG file, reduced by the largest DCT scaling (1/2, 1/4, 1/8)
    /// that keeps its longer side at least `minSide` pixels.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - minSide: The smallest acceptable longer side; 0 decodes at full size.
    /// - Returns: The pixels and the original size.
    /// - Throws: ``JPEGError``: `.unreadable` when the file cannot be opened,
    ///   `.corrupt` with libjpeg's message when it is not a JPEG it can read.
    public static func decode(file path: String, minSide: Int = 0) throws(JPEGError) -> Decoded {
        var image = ferry_jpeg_image()
        var message = [CChar](repeating: 0, count: 256)
        let status = ferry_jpeg_decode(path, nil, 0, Int32(minSide), &image, &message, message.count)
        return try finish(status, image, message, path: path)
    }

    /// Decodes a JPEG held in memory; see ``decode(file:minSide:)``.
    ///
    /// - Parameters:
    ///   - data: The JPEG bytes.
    ///   - minSide: The smallest acceptable longer side; 0 decodes at full size.
    /// - Returns: The pixels and the original size.
    /// - Throws: ``JPEGError`` (`.corrupt`, `.invalidArgument` for empty data).
    public static func decode(data: some ContiguousBytes, minSide: Int = 0) throws(JPEGError) -> Decoded {
        var image = ferry_jpeg_image()
        var message = [CChar](repeating: 0, count: 256)
        let status = data.withUnsafeBytes { raw in
            ferry_jpeg_decode(
                nil, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count), Int32(minSide), &image, &message,
                message.count)
        }
        return try finish(status, image, message, path: nil)
    }

    /// Encodes an image as a baseline JPEG.
    ///
    /// - Parameters:
    ///   - image: The pixels.
    ///   - quality: libjpeg quality, 1...100.
    ///   - app1: The payload of an APP1 segment to write right after SOI (an
    ///     Exif block starting with `Exif\0\0`), at most 65,533 bytes.
    /// - Returns: The JPEG file's bytes.
    /// - Throws: ``JPEGError``.
    public static func encode(_ image: RGBImage, quality: Int = 85, app1: [UInt8]? = nil) throws(JPEGError) -> [UInt8] {
        guard (app1?.count ?? 0) <= 65_533 else { throw JPEGError(.invalidArgument, detail: "APP1 over 65,533 bytes") }
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            if let app1 {
                return app1.withUnsafeBufferPointer { marker in
                    ferry_jpeg_encode(
                        pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(quality), marker.baseAddress,
                        UInt32(marker.count), &out, &size, &message, message.count)
                }
            }
            return ferry_jpeg_encode(
                pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(quality), nil, 0, &out, &size,
                &message, message.count)
        }
        guard status == FERRY_JPEG_OK, let out else {
            throw error(status, message, path: nil)
        }
        defer { ferry_jpeg_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }

    /// Shrinks an image to fit `maxSide` x `maxSide` by area averaging; returns it unchanged when it fits.
    ///
    /// - Parameters:
    ///   - image: The pixels.
    ///   - maxSide: The longest side allowed.
    /// - Returns: The reduced image.
    public static func downscale(_ image: RGBImage, maxSide: Int) -> RGBImage {
        let (width, height) = image.fittedSize(maxSide: maxSide)
        guard width < image.width || height < image.height else { return image }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        image.pixels.withUnsafeBufferPointer { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                ferry_jpeg_downscale(
                    src.baseAddress, Int32(image.width), Int32(image.height), dst.baseAddress, Int32(width),
                    Int32(height))
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    /// Turns an image upright for its Exif orientation (``ExifOrientation``): a
    /// turn or mirror of the decoded pixels; 1, nil or an invalid value returns it unchanged.
    ///
    /// - Parameters:
    ///   - image: The pixels as stored.
    ///   - orientation: Exif orientation, 1...8.
    /// - Returns: The pixels as shown (width and height swapped for 5...8).
    public static func orient(_ image: RGBImage, orientation: Int?) -> RGBImage {
        guard let orientation, (2...8).contains(orientation) else { return image }
        var pixels = [UInt8](repeating: 0, count: image.pixels.count)
        image.pixels.withUnsafeBufferPointer { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                ferry_jpeg_orient(
                    src.baseAddress, Int32(image.width), Int32(image.height), Int32(orientation), dst.baseAddress)
            }
        }
        let (width, height) = ExifOrientation.displayedSize(
            width: image.width, height: image.height, orientation: orientation)
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    private static func finish(
        _ status: Int32, _ image: ferry_jpeg_image, _ message: [CChar], path: String?
    ) throws(JPEGError) -> Decoded {
        guard status == FERRY_JPEG_OK, let pixels = image.pixels else {
            throw error(status, message, path: path)
        }
        defer { ferry_jpeg_free(pixels) }
        let width = Int(image.width)
        let height = Int(image.height)
        let bytes = Array(UnsafeBufferPointer(start: pixels, count: width * height * 3))
        return Decoded(
            image: RGBImage(width: width, height: height, pixels: bytes), sourceWidth: Int(image.source_width),
            sourceHeight: Int(image.source_height), scaleDenominator: Int(image.scale_denom))
    }

    private static func error(_ status: Int32, _ message: [CChar], path: String?) -> JPEGError {
        let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        switch status {
        case FERRY_JPEG_OPEN: return JPEGError(.unreadable, path: path, detail: String(cString: strerror(errno)))
        case FERRY_JPEG_MEMORY: return JPEGError(.outOfMemory, path: path)
        case FERRY_JPEG_ARGUMENT: return JPEGError(.invalidArgument, path: path)
        default: return JPEGError(.corrupt, path: path, detail: text)
        }
    }
}
