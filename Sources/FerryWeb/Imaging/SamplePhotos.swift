import FerryKit
import Foundation

/// Generated photos for `ferry demo` and the tests: real JPEGs with an Exif
/// thumbnail, drawn procedurally (sky gradient, sun, hills, the photo's number
/// in big digits) with grain so they weigh what camera photos weigh.
public enum SamplePhotos {
    /// What ``populate(folder:)`` makes.
    public struct Layout: Sendable {
        /// Camera folders under `DCIM` and how many photos each gets.
        public var folders: [(name: String, count: Int)] = [("100FERRY", 8), ("101FERRY", 4)]
        /// Size of each photo.
        public var width = 1600
        /// Size of each photo.
        public var height = 1200
        /// Grain amplitude (0...64); more grain means larger files.
        public var grain = 12

        /// The default layout: 12 photos of 1600x1200, a few hundred KB each.
        public init() {}
    }

    /// Draws photo number `index`.
    ///
    /// - Parameters:
    ///   - index: The photo's number; it picks the colours and is drawn in the picture.
    ///   - width: Width in pixels.
    ///   - height: Height in pixels.
    ///   - grain: Noise amplitude per channel.
    /// - Returns: The pixels.
    public static func render(index: Int, width: Int, height: Int, grain: Int = 12) -> RGBImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        var rng = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15 &+ 0x1234_5678
        func next() -> UInt64 {
            rng ^= rng << 13
            rng ^= rng >> 7
            rng ^= rng << 17
            return rng
        }
        let hue = Double(index % 12) / 12
        let sky = color(hue: hue, saturation: 0.55, value: 0.95)
        let horizon = color(hue: hue + 0.08, saturation: 0.25, value: 1.0)
        let ground = color(hue: hue + 0.33, saturation: 0.6, value: 0.55)
        let sunX = Double(width) * (0.2 + Double(next() % 60) / 100)
        let sunY = Double(height) * (0.15 + Double(next() % 20) / 100)
        let sunR = Double(min(width, height)) * 0.09
        let hills = (0..<3).map { _ in
            (
                phase: Double(next() % 628) / 100, freq: 1.5 + Double(next() % 30) / 10,
                amp: 0.04 + Double(next() % 6) / 100
            )
        }
        let digits = Array(String(index).utf8)
        let cell = max(4, min(width, height) / 40)
        let textWidth = digits.count * 6 * cell
        let textX = (width - textWidth) / 2
        let textY = height * 2 / 3
        // The skyline depends on the column only.
        let ridges = (0..<width).map { x in
            let fx = Double(x) / Double(width)
            return hills.reduce(0.62) { $0 + $1.amp * sin($1.phase + fx * $1.freq * 6.283) }
        }
        pixels.withUnsafeMutableBufferPointer { out in
            for y in 0..<height {
                let fy = Double(y) / Double(height)
                for x in 0..<width {
                    let ridge = ridges[x]
                    var c: (Double, Double, Double)
                    if fy > ridge {
                        let t = (fy - ridge) / max(0.01, 1 - ridge)
                        c = mix(ground, (ground.0 * 0.5, ground.1 * 0.5, ground.2 * 0.5), t)
                    } else {
                        c = mix(sky, horizon, fy / ridge)
                        let dx = Double(x) - sunX
                        let dy = Double(y) - sunY
                        let d = (dx * dx + dy * dy).squareRoot()
                        if d < sunR {
                            c = (1, 0.93, 0.6)
                        } else if d < sunR * 1.6 {
                            c = mix((1, 0.9, 0.6), c, (d - sunR) / (sunR * 0.6))
                        }
                    }
                    if y >= textY, y < textY + 7 * cell, x >= textX, x < textX + textWidth,
                        glyphPixel(digits, (x - textX) / cell, (y - textY) / cell)
                    {
                        c = (0.98, 0.98, 0.98)
                    }
                    let i = (y * width + x) * 3
                    let noise = grain > 0 ? next() : 0
                    out[i] = channel(c.0, noise, grain)
                    out[i + 1] = channel(c.1, noise >> 16, grain)
                    out[i + 2] = channel(c.2, noise >> 32, grain)
                }
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    /// Makes photo number `index` as a JPEG file's bytes with an Exif APP1
    /// segment holding a 160x120 thumbnail.
    ///
    /// - Parameters:
    ///   - index: The photo's number.
    ///   - width: Width in pixels.
    ///   - height: Height in pixels.
    ///   - grain: Noise amplitude per channel.
    ///   - taken: The Exif date.
    /// - Returns: The JPEG.
    /// - Throws: ``JPEGError`` when libjpeg fails.
    public static func jpeg(index: Int, width: Int = 1600, height: Int = 1200, grain: Int = 12, taken: Date = Date())
        throws(JPEGError) -> [UInt8]
    {
        let image = render(index: index, width: width, height: height, grain: grain)
        let small = JPEGCodec.downscale(image, maxSide: 160)
        let thumbnail = try JPEGCodec.encode(small, quality: 75)
        let exif = ExifBlock.make(width: width, height: height, taken: taken, thumbnail: thumbnail)
        return try JPEGCodec.encode(image, quality: 88, app1: exif)
    }

    /// Fills `folder` like a camera card: `DCIM/100FERRY/FER_0001.JPG` ..., plus
    /// a non-image file (`DCIM/100FERRY/NOTES.TXT`) and an empty `MISC` folder.
    ///
    /// - Parameters:
    ///   - folder: An existing local folder.
    ///   - layout: How many photos where, and their size.
    /// - Returns: The paths of the photos written.
    /// - Throws: ``JPEGError``, or `FerryError` when a file cannot be written.
    @discardableResult
    public static func populate(folder: String, layout: Layout = Layout()) throws -> [String] {
        var written: [String] = []
        var number = 1
        let start = Date().addingTimeInterval(-86_400)
        for (name, count) in layout.folders {
            let dir = folder + "/DCIM/" + name
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for _ in 0..<count {
                let taken = start.addingTimeInterval(Double(number) * 137)
                let bytes = try jpeg(
                    index: number, width: layout.width, height: layout.height, grain: layout.grain, taken: taken)
                let path = dir + String(format: "/FER_%04d.JPG", number)
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                try? FileManager.default.setAttributes([.modificationDate: taken], ofItemAtPath: path)
                written.append(path)
                number += 1
            }
        }
        let notes = """
            Ferry demo card. The photos in DCIM were drawn by `ferry demo`;
            each carries an Exif thumbnail, as a camera would write it.

            """
        if let first = layout.folders.first {
            try Data(notes.utf8).write(to: URL(fileURLWithPath: folder + "/DCIM/\(first.name)/NOTES.TXT"))
        }
        try FileManager.default.createDirectory(atPath: folder + "/MISC", withIntermediateDirectories: true)
        return written
    }

    // MARK: - Drawing

    private static func channel(_ value: Double, _ noise: UInt64, _ grain: Int) -> UInt8 {
        var v = Int(value * 255)
        if grain > 0 { v += Int(noise & 0xFF) % (2 * grain + 1) - grain }
        return UInt8(clamping: v)
    }

    private static func mix(_ a: (Double, Double, Double), _ b: (Double, Double, Double), _ t: Double) -> (
        Double, Double, Double
    ) {
        let t = min(1, max(0, t))
        return (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t, a.2 + (b.2 - a.2) * t)
    }

    private static func color(hue: Double, saturation s: Double, value v: Double) -> (Double, Double, Double) {
        let h = (hue - hue.rounded(.down)) * 6
        let i = Int(h) % 6
        let f = h - Double(Int(h))
        let p = v * (1 - s)
        let q = v * (1 - s * f)
        let t = v * (1 - s * (1 - f))
        switch i {
        case 0: return (v, t, p)
        case 1: return (q, v, p)
        case 2: return (p, v, t)
        case 3: return (p, q, v)
        case 4: return (t, p, v)
        default: return (v, p, q)
        }
    }

    /// 5x7 digits, one row per byte (bit 4 is the left column).
    private static let font: [[UInt8]] = [
        [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E], [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F], [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02], [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E], [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E], [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
    ]

    private static func glyphPixel(_ digits: [UInt8], _ column: Int, _ row: Int) -> Bool {
        let which = column / 6
        let x = column % 6
        guard x < 5, row < 7, which < digits.count else { return false }
        let d = Int(digits[which]) - 48
        guard (0...9).contains(d) else { return false }
        return font[d][row] & UInt8(0x10 >> x) != 0
    }
}
