import FerryKit
import Foundation

/// The JPEG a camera embeds in its raw file, for thumbnails and the viewer:
/// for TIFF-based raw files (CR2, NEF, ARW, DNG, ORF, RW2, PEF) the largest
/// baseline JPEG that any IFD (IFD chain, SubIFDs, Exif IFD) points at; for
/// Fujifilm's RAF the JPEG its header points at.
///
/// The embedded JPEG is stored as the sensor sees the scene; the raw file's
/// own IFD0 `Orientation` says how to turn it (the JPEG usually has no Exif
/// of its own). RAF has no IFD0 of its own: its JPEG's Exif carries the orientation.
enum RawPreview {
    /// A raw file's embedded JPEG and how to turn it upright.
    struct Embedded: Sendable {
        var jpeg: [UInt8]
        /// Exif orientation, 1...8: the raw file's IFD0, else the JPEG's own Exif; nil when neither says.
        var orientation: Int?

        init(jpeg: [UInt8], header: [UInt8]) {
            self.jpeg = jpeg
            orientation =
                (header.starts(with: Array("FUJIFILM".utf8)) ? nil : ExifOrientation.read(from: header))
                ?? ExifOrientation.read(from: jpeg.prefix(EXIFThumbnail.firstReadLength))
        }
    }

    /// Where the embedded JPEG lies in the file, or nil when there is none.
    ///
    /// - Parameter header: The file's first bytes (IFDs sit near the start; 1 MB is plenty).
    static func locate(in header: [UInt8], fileSize: Int) -> (offset: Int, length: Int)? {
        if header.count >= 92, Array(header[0..<15]) == Array("FUJIFILMCCD-RAW".utf8) {
            let offset = be32(header, 84)
            let length = be32(header, 88)
            return offset > 0 && length > 0 && offset + length <= fileSize ? (offset, length) : nil
        }
        guard header.count >= 8 else { return nil }
        let little: Bool
        switch (header[0], header[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= header.count else { return nil }
            return little ? Int(header[at]) | Int(header[at + 1]) << 8 : Int(header[at]) << 8 | Int(header[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let a = u16(at), let b = u16(at + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        var best: (offset: Int, length: Int)?
        var pending = [u32(4) ?? 0]
        var seen: Set<Int> = []
        while let ifd = pending.popLast() {
            guard ifd > 0, !seen.contains(ifd), seen.count < 64, let n = u16(ifd), n < 1000 else { continue }
            seen.insert(ifd)
            var values: [Int: (type: Int, count: Int, value: Int, at: Int)] = [:]
            for k in 0..<n {
                let e = ifd + 2 + 12 * k
                guard let tag = u16(e), let type = u16(e + 2), let count = u32(e + 4) else { break }
                let value = type == 3 && count == 1 ? (u16(e + 8) ?? 0) : (u32(e + 8) ?? 0)
                values[tag] = (type, count, value, e + 8)
            }
            func consider(_ offset: Int?, _ length: Int?) {
                guard let offset, let length, length > 1000, offset + length <= fileSize else { return }
                if offset + 2 <= header.count, header[offset] != 0xFF || header[offset + 1] != 0xD8 { return }
                if best == nil || length > best!.length { best = (offset, length) }
            }
            consider(values[0x0201]?.value, values[0x0202]?.value)
            if values[0x0103]?.value == 6 || values[0x0103]?.value == 7, values[0x0111]?.count == 1 {
                consider(values[0x0111]?.value, values[0x0117]?.value)
            }
            if let sub = values[0x014A] {
                if sub.count == 1 {
                    pending.append(sub.value)
                } else {
                    for i in 0..<min(sub.count, 8) { if let o = u32(sub.value + 4 * i) { pending.append(o) } }
                }
            }
            if let exif = values[0x8769] { pending.append(exif.value) }
            if let next = u32(ifd + 2 + 12 * n) { pending.append(next) }
        }
        return best
    }

    /// The embedded JPEG of a raw file on disk, or nil.
    static func jpeg(ofFile path: String) -> Embedded? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let size = Int((try? handle.seekToEnd()) ?? 0)
        try? handle.seek(toOffset: 0)
        let header = [UInt8]((try? handle.read(upToCount: 1 << 20)) ?? Data())
        guard let place = locate(in: header, fileSize: size) else { return nil }
        try? handle.seek(toOffset: UInt64(place.offset))
        let bytes = [UInt8]((try? handle.read(upToCount: place.length)) ?? Data())
        guard bytes.count == place.length, bytes.starts(with: [0xFF, 0xD8]) else { return nil }
        return Embedded(jpeg: bytes, header: header)
    }

    /// The embedded JPEG of a raw file read through `read` (byte ranges): its first
    /// megabyte for the IFDs, then the JPEG's own bytes. Nothing else of the file is
    /// fetched, so a 30 MB raw file on a card costs about one megabyte and a preview.
    static func jpeg(
        fileSize: Int, read: (Range<Int64>) async throws -> Data
    ) async throws -> Embedded? {
        let header = [UInt8](try await read(0..<Int64(min(fileSize, 1 << 20))))
        guard let place = locate(in: header, fileSize: fileSize) else { return nil }
        let bytes: [UInt8]
        if place.offset + place.length <= header.count {
            bytes = Array(header[place.offset..<(place.offset + place.length)])
        } else {
            bytes = [UInt8](try await read(Int64(place.offset)..<Int64(place.offset + place.length)))
        }
        guard bytes.count == place.length, bytes.starts(with: [0xFF, 0xD8]) else { return nil }
        return Embedded(jpeg: bytes, header: header)
    }

    private static func be32(_ b: [UInt8], _ at: Int) -> Int {
        Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
    }
}
