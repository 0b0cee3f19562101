import Foundation

/// Writes the Exif APP1 payload a camera puts in a photo: IFD0 (make, model,
/// orientation, date), the Exif IFD (pixel size, date taken) and IFD1 with an
/// embedded JPEG thumbnail, which is what FlashAir's thumbnail.cgi serves.
///
/// Big-endian ("MM") TIFF; ``EXIFThumbnail`` in FerryKit reads it back.
public enum ExifBlock {
    /// One IFD entry with its value already encoded big-endian.
    private struct Entry {
        var tag: UInt16
        var type: UInt16
        var count: UInt32
        var value: [UInt8]
    }

    private static let ascii: UInt16 = 2
    private static let short: UInt16 = 3
    private static let long: UInt16 = 4

    /// The APP1 payload, starting with `Exif\0\0`.
    ///
    /// - Parameters:
    ///   - width: Width of the main image.
    ///   - height: Height of the main image.
    ///   - taken: When the photo was "taken" (written as local time, as cameras do).
    ///   - thumbnail: A small JPEG (160x120 is the Exif convention).
    ///   - model: The camera model to record.
    /// - Returns: The segment payload; `nil` when the thumbnail makes it exceed one segment.
    public static func make(width: Int, height: Int, taken: Date, thumbnail: [UInt8], model: String = "Ferry demo")
        -> [UInt8]?
    {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy:MM:dd HH:mm:ss"
        let date = formatter.string(from: taken)
        let ifd0 = [
            text(0x010F, "Ferry"), text(0x0110, model), number(0x0112, short, 1), text(0x0132, date),
            number(0x8769, long, 0),  // Exif IFD offset, patched below
        ]
        let exif = [text(0x9003, date), number(0xA002, long, width), number(0xA003, long, height)]
        let ifd1 = [
            number(0x0103, short, 6),  // JPEG compression
            number(0x0201, long, 0),  // thumbnail offset, patched below
            number(0x0202, long, thumbnail.count),
        ]
        // Layout: header, IFD0, Exif IFD, IFD1, then the out-of-line values, then the thumbnail.
        let ifd0At = 8
        let exifAt = ifd0At + size(of: ifd0)
        let ifd1At = exifAt + size(of: exif)
        var dataAt = ifd1At + size(of: ifd1)
        var data: [UInt8] = []
        var tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A] + be32(ifd0At)
        func write(_ entries: [Entry], next: Int) {
            tiff += be16(entries.count)
            for e in entries {
                tiff += be16(Int(e.tag)) + be16(Int(e.type)) + be32(Int(e.count))
                if e.value.count <= 4 {
                    tiff += e.value + [UInt8](repeating: 0, count: 4 - e.value.count)
                } else {
                    tiff += be32(dataAt + data.count)
                    data += e.value
                    if data.count % 2 == 1 { data.append(0) }
                }
            }
            tiff += be32(next)
        }
        var first = ifd0
        first[4].value = be32(exifAt)
        var thumb = ifd1
        let valuesSize = [ifd0, exif, ifd1].joined().filter { $0.value.count > 4 }.reduce(0) {
            $0 + $1.value.count + $1.value.count % 2
        }
        let thumbnailAt = dataAt + valuesSize
        thumb[1].value = be32(thumbnailAt)
        write(first, next: ifd1At)
        write(exif, next: 0)
        write(thumb, next: 0)
        tiff += data
        dataAt = tiff.count
        precondition(dataAt == thumbnailAt, "Exif layout mismatch")
        tiff += thumbnail
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        return payload.count <= 65_533 ? payload : nil
    }

    private static func size(of entries: [Entry]) -> Int { 2 + 12 * entries.count + 4 }

    private static func text(_ tag: UInt16, _ value: String) -> Entry {
        let bytes = Array(value.utf8) + [0]
        return Entry(tag: tag, type: ascii, count: UInt32(bytes.count), value: bytes)
    }

    private static func number(_ tag: UInt16, _ type: UInt16, _ value: Int) -> Entry {
        Entry(tag: tag, type: type, count: 1, value: type == short ? be16(value) : be32(value))
    }

    private static func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    private static func be32(_ v: Int) -> [UInt8] {
        [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }
}
