import FerryKit
import Foundation

/// What the viewer's information panel shows, read from a JPEG's Exif block
/// and its frame header (or a TIFF-based raw file's IFDs, or a CR3 file's CMT1 and CMT2): the first 256 KB of
/// the file are enough. The pixel size is the photo's as shown, turned by its
/// Exif orientation (a portrait shot stored as 6000 x 4000 is 4000 x 6000).
struct PhotoInfo: Encodable, Sendable, Equatable {
    var name: String?
    var size: Int64?
    /// `YYYY-MM-DD HH:MM:SS`, the camera's local time (``CaptureDate``, else DateTime),
    /// followed by ` +02:00` when the photo records its offset from UTC.
    var taken: String?
    var camera: String?
    var lens: String?
    /// `1/250 s` or `2 s`.
    var shutter: String?
    /// `f/2.8`.
    var aperture: String?
    var iso: Int?
    /// `35 mm`.
    var focalLength: String?
    /// Width as shown (after the orientation).
    var width: Int?
    /// Height as shown (after the orientation).
    var height: Int?
    /// Exif orientation, 1...8, when recorded.
    var orientation: Int?

    /// Reads a file (a JPEG, a TIFF-based raw file, a CR3 file, a HEIF image); fields it cannot find stay nil.
    static func read(file path: String) -> PhotoInfo {
        guard let handle = FileHandle(forReadingAtPath: path) else { return PhotoInfo() }
        defer { try? handle.close() }
        let data = [UInt8]((try? handle.read(upToCount: 256 * 1024)) ?? Data())
        if data.count >= 12, data[4..<8].elementsEqual("ftyp".utf8), !CR3.isCR3(data) { return readHEIF(file: path) }
        return read(bytes: data)
    }

    /// A HEIF image: its Exif item through libheif, and the size as shown (after irot/imir).
    /// The Exif `Orientation` is not applied: in HEIF it only mirrors the file's own transforms.
    private static func readHEIF(file path: String) -> PhotoInfo {
        guard let (tiff, width, height) = try? HEIFCodec.exif(file: path) else { return PhotoInfo() }
        var info = tiff.map { read(bytes: $0, orientation: 1) } ?? PhotoInfo()
        info.orientation = nil
        info.width = width > 0 ? width : nil
        info.height = height > 0 ? height : nil
        return info
    }

    /// Reads JPEG bytes or a TIFF-based raw file's (a prefix is enough).
    ///
    /// - Parameter orientation: The orientation to turn the size by, when known
    ///   better than from these bytes (a raw file's own for its embedded JPEG).
    static func read(bytes b: [UInt8], orientation: Int? = nil) -> PhotoInfo {
        var info = readStored(bytes: b)
        info.orientation = orientation ?? ExifOrientation.read(from: b)
        if let date = CaptureDate.read(from: b) {
            let l = date.local
            info.taken = String(
                format: "%04d-%02d-%02d %02d:%02d:%02d", l.year, l.month, l.day, l.hour, l.minute, l.second)
            if let offset = date.utcOffsetSeconds {
                let minutes = abs(offset) / 60
                info.taken! += String(format: " %@%02d:%02d", offset < 0 ? "-" : "+", minutes / 60, minutes % 60)
            }
        }
        if ExifOrientation.swapsSides(info.orientation) { swap(&info.width, &info.height) }
        return info
    }

    /// The fields as stored: the size not turned.
    private static func readStored(bytes b: [UInt8]) -> PhotoInfo {
        var info = PhotoInfo()
        if CR3.isCR3(b) {
            // CR3: IFD0 in CMT1, the Exif IFD in CMT2 (with the sensor's size, as shown unturned).
            if let blocks = CR3.tiffBlocks(in: b), let ifd0 = blocks.ifd0 {
                readTIFF(Array(b[ifd0]), into: &info, exifBlock: blocks.exif.map { Array(b[$0]) })
            }
            return info
        }
        if b.count >= 8, b[0] == b[1], b[0] == 0x49 || b[0] == 0x4D {
            // A TIFF-based raw file: its IFDs are the Exif data (its pixel size is not read here).
            readTIFF(b, into: &info)
            info.width = nil
            info.height = nil
            return info
        }
        guard b.count > 4, b[0] == 0xFF, b[1] == 0xD8 else { return info }
        var i = 2
        while i + 4 <= b.count {
            guard b[i] == 0xFF else { break }
            let marker = b[i + 1]
            if marker == 0xFF {
                i += 1
                continue
            }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            let body = i + 4
            if marker == 0xE1, body + 6 <= b.count, Array(b[body..<body + 6]) == Array("Exif\0\0".utf8) {
                let end = min(b.count, i + 2 + length)
                if body + 6 < end { readTIFF(Array(b[(body + 6)..<end]), into: &info) }
            } else if (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
                if body + 5 <= b.count {
                    info.height = Int(b[body + 1]) << 8 | Int(b[body + 2])
                    info.width = Int(b[body + 3]) << 8 | Int(b[body + 4])
                }
                break
            } else if marker == 0xDA {
                break
            }
            i += 2 + length
        }
        return info
    }

    /// A little- or big-endian TIFF block's readers, every read bounds-checked
    /// (also a raw file's header: ``RawPreview``).
    struct TIFF {
        typealias Field = (type: Int, count: Int, at: Int)
        let t: [UInt8]
        var little: Bool { t.first == 0x49 }

        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= t.count else { return nil }
            return little ? Int(t[at]) | Int(t[at + 1]) << 8 : Int(t[at]) << 8 | Int(t[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let a = u16(at), let b = u16(at + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        func ifd(_ offset: Int) -> [Int: Field] {
            guard let n = u16(offset), n < 512 else { return [:] }
            var fields: [Int: Field] = [:]
            for k in 0..<n {
                let e = offset + 2 + 12 * k
                guard let tag = u16(e), let type = u16(e + 2), let count = u32(e + 4) else { break }
                let unit = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 9: 4, 10: 8][type] ?? 1
                let at = unit * count <= 4 ? e + 8 : (u32(e + 8) ?? -1)
                fields[tag] = (type, count, at)
            }
            return fields
        }
        func text(_ f: Field?) -> String? {
            guard let f, f.type == 2, f.at >= 0, f.count <= t.count, f.at <= t.count - f.count else { return nil }
            let s = String(decoding: t[f.at..<(f.at + f.count)].prefix { $0 != 0 }, as: UTF8.self)
                .trimmingCharacters(in: .whitespaces)
            return s.isEmpty ? nil : s
        }
        func number(_ f: Field?) -> Int? {
            guard let f else { return nil }
            switch f.type {
            case 3: return u16(f.at)
            case 4, 9: return u32(f.at)
            default: return nil
            }
        }
        func rational(_ f: Field?) -> (Int, Int)? {
            guard let f, f.type == 5 || f.type == 10, let n = u32(f.at), let d = u32(f.at + 4), d != 0 else {
                return nil
            }
            return (n, d)
        }
    }

    /// Reads IFD0 of `t` and its Exif IFD; for a CR3 file the Exif IFD is IFD0 of `exifBlock` (`CMT2`).
    private static func readTIFF(_ t: [UInt8], into info: inout PhotoInfo, exifBlock: [UInt8]? = nil) {
        guard t.count >= 8 else { return }
        let tiff = TIFF(t: t)
        guard let first = tiff.u32(4) else { return }
        let ifd0 = tiff.ifd(first)
        let make = tiff.text(ifd0[0x010F])
        let model = tiff.text(ifd0[0x0110])
        if let model {
            info.camera = make.map { model.hasPrefix($0) ? model : "\($0) \(model)" } ?? model
        }
        var taken = tiff.text(ifd0[0x0132])
        let exifTIFF = exifBlock.map { TIFF(t: $0) } ?? tiff
        let exifAt = exifBlock == nil ? tiff.number(ifd0[0x8769]) : exifTIFF.u32(4)
        if let exifAt {
            let exif = exifTIFF.ifd(exifAt)
            taken = exifTIFF.text(exif[0x9003]) ?? taken
            info.lens = exifTIFF.text(exif[0xA434])
            if let (n, d) = exifTIFF.rational(exif[0x829A]) {
                info.shutter =
                    n >= d
                    ? "\(Double(n) / Double(d) == Double(n / d) ? String(n / d) : String(format: "%.1f", Double(n) / Double(d))) s"
                    : "1/\(Int((Double(d) / Double(n)).rounded())) s"
            }
            if let (n, d) = exifTIFF.rational(exif[0x829D]) {
                info.aperture = String(format: "f/%.1f", Double(n) / Double(d))
            }
            info.iso = exifTIFF.number(exif[0x8827])
            if let (n, d) = exifTIFF.rational(exif[0x920A]) {
                let mm = Double(n) / Double(d)
                info.focalLength = mm == mm.rounded() ? "\(Int(mm)) mm" : String(format: "%.1f mm", mm)
            }
            if info.width == nil { info.width = exifTIFF.number(exif[0xA002]) }
            if info.height == nil { info.height = exifTIFF.number(exif[0xA003]) }
        }
        if let taken, taken.count >= 19 {
            // `2024:06:01 12:00:00` → `2024-06-01 12:00:00`
            var chars = Array(taken)
            chars[4] = "-"
            chars[7] = "-"
            info.taken = String(chars.prefix(19))
        }
    }
}
