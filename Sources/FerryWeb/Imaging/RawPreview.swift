import FerryKit
import Foundation

/// The JPEG a camera embeds in its raw file, for thumbnails and the viewer:
/// for TIFF-based raw files (CR2, NEF, ARW, DNG, ORF, RW2, PEF) the largest
/// baseline JPEG that any IFD (IFD chain, SubIFDs, Exif IFD) points at; for
/// Fujifilm's RAF the JPEG its header points at; for Canon's CR3 its `PRVW`
/// (1620 x 1080) or `THMB` (160 x 120) JPEG (``CR3Reader``).
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
        switch (header[0], header[1]) {
        case (0x49, 0x49), (0x4D, 0x4D): break
        default: return nil
        }
        let tiff = PhotoInfo.TIFF(t: header)
        var best: (offset: Int, length: Int)?
        var pending = [tiff.u32(4) ?? 0]
        var seen: Set<Int> = []
        while let ifd = pending.popLast() {
            guard ifd > 0, !seen.contains(ifd), seen.count < 64, let n = tiff.u16(ifd), n < 1000 else { continue }
            seen.insert(ifd)
            var values: [Int: (type: Int, count: Int, value: Int, at: Int)] = [:]
            for k in 0..<n {
                let e = ifd + 2 + 12 * k
                guard let tag = tiff.u16(e), let type = tiff.u16(e + 2), let count = tiff.u32(e + 4) else { break }
                let value = type == 3 && count == 1 ? (tiff.u16(e + 8) ?? 0) : (tiff.u32(e + 8) ?? 0)
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
                    for i in 0..<min(sub.count, 8) { if let o = tiff.u32(sub.value + 4 * i) { pending.append(o) } }
                }
            }
            if let exif = values[0x8769] { pending.append(exif.value) }
            if let next = tiff.u32(ifd + 2 + 12 * n) { pending.append(next) }
        }
        return best
    }

    /// The embedded JPEG of a raw file on disk, or nil (for a CR3 file, its preview unless `want` says otherwise).
    static func jpeg(ofFile path: String, want: CR3Reader.Want = .preview) -> Embedded? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let size = Int((try? handle.seekToEnd()) ?? 0)
        try? handle.seek(toOffset: 0)
        if CR3.isCR3([UInt8]((try? handle.read(upToCount: 12)) ?? Data())) {
            var reader = CR3Reader(fileSize: size, want: want)
            var step = reader.first
            while case .read(let range) = step {
                try? handle.seek(toOffset: UInt64(range.lowerBound))
                step = reader.feed([UInt8]((try? handle.read(upToCount: range.count)) ?? Data()))
            }
            guard case .done(let embedded) = step else { return nil }
            return embedded
        }
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
    /// A CR3 file (`cr3`, or a file whose first bytes turn out to be one) is read
    /// by ``CR3Reader``: 64 KiB (rarely grown) for its thumbnail, a few reads more for its preview.
    static func jpeg(
        fileSize: Int, cr3: Bool = false, want: CR3Reader.Want = .preview, read: (Range<Int64>) async throws -> Data
    ) async throws -> Embedded? {
        if cr3 { return try await cr3JPEG(fileSize: fileSize, want: want, prefix: nil, read: read) }
        let header = [UInt8](try await read(0..<Int64(min(fileSize, 1 << 20))))
        if CR3.isCR3(header) { return try await cr3JPEG(fileSize: fileSize, want: want, prefix: header, read: read) }
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

    /// A CR3 file's JPEG by range; `prefix`, when given, is the file's first bytes already read.
    private static func cr3JPEG(
        fileSize: Int, want: CR3Reader.Want, prefix: [UInt8]?, read: (Range<Int64>) async throws -> Data
    ) async throws -> Embedded? {
        var reader = CR3Reader(fileSize: fileSize, want: want)
        var step = prefix.map { reader.feed($0) } ?? reader.first
        while case .read(let range) = step {
            let bytes = [UInt8](try await read(Int64(range.lowerBound)..<Int64(range.upperBound)))
            // A server that ignores Range sends more than asked: only what was asked counts.
            step = reader.feed(Array(bytes.prefix(range.count)))
        }
        guard case .done(let embedded) = step else { return nil }
        return embedded
    }

    private static func be32(_ b: [UInt8], _ at: Int) -> Int {
        Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
    }
}
