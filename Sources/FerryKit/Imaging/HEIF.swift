/// Where a HEIF file's thumbnail item lies (ISO/IEC 23008-12, HEIC from phones,
/// Canon's HIF), read from the file's first bytes with ``ISOBMFF``'s box walk, so
/// that a remote photo's tile costs its `meta` box and one small item instead of
/// the whole file.
///
/// The layout phones and libheif write: `ftyp`, then `meta` (a full box) holding
/// `hdlr`, `pitm` (the primary item), `iinf`, `iloc` (each item's extents),
/// `iref` (a `thmb` reference from each thumbnail item to the primary image,
/// `dimg` from a grid to its tiles), `iprp` (`ipco`, the properties, among them
/// each image's `ispe` size and `hvcC` decoder configuration; `ipma`, which item
/// has which), sometimes `idat` (small item data such as a grid's description);
/// then `mdat` with the coded images (megabytes).
///
/// Nothing in the bytes is trusted: every count and size is checked against its
/// box, a `meta` over ``maxMetaLength`` is not read, a thumbnail whose extents
/// reach past the file, number more than ``maxExtents`` or add up to more than
/// ``maxThumbnailLength`` is not used, and what is kept per item is bounded
/// (``maxThumbnails``, ``maxItems``), so garbage costs neither time nor memory.
package enum HEIF {
    /// The first read: every `meta` box seen from phones and libheif fits (a few KB to 40 KB).
    package static let firstRead = 64 * 1024
    /// The most a `meta` box may claim; real ones are under 100 KB.
    package static let maxMetaLength = 4 << 20
    /// The most a thumbnail item's data may add up to (a 320 x 240 HEVC is 10-30 KB).
    package static let maxThumbnailLength = 4 << 20
    /// Extents of one thumbnail (with a grid's tiles) at most; real ones have one each.
    package static let maxExtents = 64
    /// Thumbnail items looked at, at most.
    package static let maxThumbnails = 8
    /// Items one thumbnail may need (itself, a grid's tiles), at most.
    package static let maxItems = 64
    /// Top-level boxes walked looking for `meta` (real files: `ftyp`, `meta`).
    static let maxTopLevel = 8

    /// A thumbnail item of the primary image.
    package struct Thumbnail: Sendable, Equatable {
        /// Its item ID.
        package var item: UInt32
        /// Its coded width and height (`ispe`, before `irot`).
        package var width: Int
        package var height: Int
        /// The file ranges its data lies in (with a grid's tiles), sorted and merged;
        /// empty when all of it is in the `meta` box (`idat`).
        package var extents: [Range<Int>]

        /// The longer side, which a rotation keeps.
        package var longerSide: Int { max(width, height) }
    }

    /// What a file's `meta` box says.
    package struct Layout: Sendable, Equatable {
        /// File offset one past the `meta` box: the file's first `metaEnd` bytes are what
        /// a decoder needs besides an item's own data.
        package var metaEnd: Int
        /// The primary item.
        package var primary: UInt32
        /// The primary image's thumbnail items whose data can be read by range.
        package var thumbnails: [Thumbnail]

        /// The smallest thumbnail whose longer side is at least `minSide`, or nil.
        package func thumbnail(minSide: Int) -> Thumbnail? {
            thumbnails.filter { $0.longerSide >= minSide }.min { $0.longerSide < $1.longerSide }
        }
    }

    /// What a prefix of a file shows.
    package enum Scan: Sendable, Equatable {
        /// The `meta` box, all inside the prefix.
        case found(Layout)
        /// The prefix is too short: read the file's first `n` bytes and scan again.
        case needs(Int)
        /// A file whose `meta` does not come first (after `mdat`, or too far), or whose
        /// `ftyp` names no brand known here: only the whole file will do.
        case elsewhere
        /// No `ftyp` box first (no ISO-BMFF file), or a `meta` box that makes no sense:
        /// no decoder can show it.
        case invalid
    }

    /// Brands of HEIF image files (23008-12 Annex B-D; MIAF), major or compatible.
    static let brands: Set<String> = [
        "heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs", "mif1", "mif2", "msf1", "miaf",
    ]

    /// Whether `bytes` start with an `ftyp` box naming a HEIF brand (not CR3's `crx `).
    package static func isHEIF(_ bytes: [UInt8]) -> Bool {
        guard let ftyp = ISOBMFF.box(in: bytes, at: 0, limit: bytes.count), ftyp.is("ftyp"),
            ftyp.end - ftyp.payload >= 8
        else { return false }
        var at = ftyp.payload
        while at + 4 <= ftyp.end {
            // The major brand, the minor version (skipped), the compatible brands.
            if at != ftyp.payload + 4, brands.contains(String(decoding: bytes[at..<(at + 4)], as: UTF8.self)) {
                return true
            }
            at += 4
        }
        return false
    }

    /// Reads where the thumbnail items lie from the file's first bytes.
    ///
    /// - Parameters:
    ///   - prefix: The file's first bytes.
    ///   - fileSize: The file's size.
    package static func scan(_ prefix: [UInt8], fileSize: Int) -> Scan {
        guard prefix.count <= fileSize, let ftyp = ISOBMFF.box(in: prefix, at: 0, limit: fileSize), ftyp.is("ftyp")
        else { return .invalid }
        // Brands not known here may still be libheif's: it decides on the whole file.
        guard isHEIF(prefix) else { return .elsewhere }
        var at = ftyp.end
        for _ in 0..<maxTopLevel {
            guard let box = ISOBMFF.box(in: prefix, at: at, limit: fileSize) else {
                // A header past the prefix (one with a 64-bit size and a uuid is 32 bytes) needs more.
                guard at + 32 > prefix.count, prefix.count < fileSize, at + 8 <= fileSize else { return .invalid }
                let want = min(fileSize, at + firstRead)
                return want <= maxMetaLength ? .needs(want) : .elsewhere
            }
            if box.is("meta") {
                guard box.end <= maxMetaLength else { return .invalid }
                guard box.end <= prefix.count else { return .needs(box.end) }
                return meta(box, in: prefix, fileSize: fileSize).map { .found($0) } ?? .invalid
            }
            // The coded images come first: `meta` is after them (or the file is garbage).
            if box.is("mdat") || box.end > maxMetaLength { return .elsewhere }
            at = box.end
        }
        return .invalid
    }

    // MARK: The boxes in meta

    /// One item's place in the file (`iloc`).
    struct Location {
        var method: Int
        var extents: [Range<Int>]
    }

    /// Reads the `meta` box (all in `bytes`); nil when a box a decoder needs is missing or garbage.
    static func meta(_ meta: ISOBMFF.Box, in bytes: [UInt8], fileSize: Int) -> Layout? {
        // A full box: version and flags, then the boxes.
        guard meta.end - meta.payload >= 4 else { return nil }
        var children: [String: ISOBMFF.Box] = [:]
        for box in ISOBMFF.boxes(in: bytes, from: meta.payload + 4, to: meta.end) where children[box.name] == nil {
            children[box.name] = box
        }
        guard let pitm = children["pitm"], children["iinf"] != nil, let iloc = children["iloc"],
            var p = Reader(bytes, pitm), let version = p.u8(), p.skip(3),
            let primary = version == 0 ? p.u16() : p.u32()
        else { return nil }
        var layout = Layout(metaEnd: meta.end, primary: UInt32(primary), thumbnails: [])
        guard let iref = children["iref"] else { return layout }
        guard let references = self.references(iref, in: bytes) else { return nil }
        let candidates = references.filter {
            $0.type == "thmb" && $0.from != layout.primary && $0.to.contains(layout.primary)
        }
        .prefix(maxThumbnails).map(\.from)
        guard !candidates.isEmpty else { return layout }
        // Each thumbnail's own items: itself, a grid's tiles.
        var needs: [UInt32: [UInt32]] = [:]
        for item in candidates {
            let tiles = references.first { $0.type == "dimg" && $0.from == item }?.to ?? []
            needs[item] = Array(([item] + tiles).prefix(maxItems + 1))
        }
        let wanted = Set(needs.values.joined())
        guard let locations = locations(iloc, in: bytes, wanted: wanted) else { return nil }
        let sizes = children["iprp"].flatMap { self.sizes($0, in: bytes, of: Set(candidates)) } ?? [:]
        let idat = children["idat"]
        for item in candidates {
            guard let size = sizes[item], let items = needs[item], items.count <= maxItems else { continue }
            var ranges: [Range<Int>] = []
            var usable = true
            for id in items {
                guard let location = locations[id] else {
                    usable = false
                    break
                }
                switch location.method {
                case 0:
                    // In the file: each extent inside it (a truncated file's are not read).
                    usable = usable && location.extents.allSatisfy { $0.upperBound <= fileSize }
                    ranges += location.extents
                case 1:
                    // In idat (inside meta, already read): offsets from idat's payload.
                    guard let idat else {
                        usable = false
                        break
                    }
                    usable = usable && location.extents.allSatisfy { idat.payload + $0.upperBound <= idat.end }
                default:
                    usable = false
                }
            }
            let merged = merge(ranges.filter { $0.lowerBound < $0.upperBound })
            guard usable, merged.count <= maxExtents, merged.reduce(0, { $0 + $1.count }) <= maxThumbnailLength
            else { continue }
            layout.thumbnails.append(Thumbnail(item: item, width: size.0, height: size.1, extents: merged))
        }
        return layout
    }

    /// `iref`: the references, each from one item to others; nil when garbage.
    static func references(_ iref: ISOBMFF.Box, in bytes: [UInt8]) -> [(type: String, from: UInt32, to: [UInt32])]? {
        guard var r = Reader(bytes, iref), let version = r.u8(), r.skip(3) else { return nil }
        var out: [(type: String, from: UInt32, to: [UInt32])] = []
        for box in ISOBMFF.boxes(in: bytes, from: r.at, to: iref.end) {
            guard var e = Reader(bytes, box), let from = version == 0 ? e.u16() : e.u32(), let count = e.u16()
            else { return nil }
            var to: [UInt32] = []
            for _ in 0..<count {
                guard let id = version == 0 ? e.u16() : e.u32() else { return nil }
                if to.count <= maxItems { to.append(UInt32(id)) }
            }
            out.append((box.name, UInt32(from), to))
        }
        return out
    }

    /// `iloc`: the places of the `wanted` items (file offsets for construction method 0,
    /// offsets into `idat` for method 1); nil when garbage.
    static func locations(_ iloc: ISOBMFF.Box, in bytes: [UInt8], wanted: Set<UInt32>) -> [UInt32: Location]? {
        guard var r = Reader(bytes, iloc), let version = r.u8(), version <= 2, r.skip(3), let sizes = r.u16()
        else { return nil }
        let offsetSize = sizes >> 12
        let lengthSize = sizes >> 8 & 15
        let baseSize = sizes >> 4 & 15
        let indexSize = version == 0 ? 0 : sizes & 15
        guard [offsetSize, lengthSize, baseSize, indexSize].allSatisfy({ [0, 4, 8].contains($0) }),
            let count = version < 2 ? r.u16() : r.u32()
        else { return nil }
        var out: [UInt32: Location] = [:]
        // Each entry takes at least 6 bytes: a count beyond the box is garbage, found when it runs out.
        for _ in 0..<count {
            guard let id = version < 2 ? r.u16() : r.u32() else { return nil }
            var method = 0
            if version > 0 {
                guard let m = r.u16() else { return nil }
                method = m & 15
            }
            guard let reference = r.u16(), let base = r.sized(baseSize), let extents = r.u16() else { return nil }
            var ranges: [Range<Int>] = []
            // Extents of no bytes at all (every size 0) say nothing; they are not counted through.
            if indexSize + offsetSize + lengthSize == 0, extents > 0 { method = -1 }
            for _ in 0..<(method < 0 ? 0 : extents) {
                guard r.sized(indexSize) != nil, let offset = r.sized(offsetSize), let length = r.sized(lengthSize)
                else { return nil }
                // Length 0: "the whole referenced data": not a place to read by range.
                guard wanted.contains(UInt32(id)) else { continue }
                let start = base.addingReportingOverflow(offset)
                let end = start.partialValue.addingReportingOverflow(length)
                guard !start.overflow, !end.overflow, length > 0, end.partialValue <= 1 << 48 else {
                    method = -1
                    continue
                }
                if ranges.count <= maxExtents { ranges.append(start.partialValue..<end.partialValue) }
            }
            // Data in another file, or too many extents: not read by range.
            if reference != 0 || ranges.count > maxExtents { method = -1 }
            if wanted.contains(UInt32(id)), out[UInt32(id)] == nil {
                out[UInt32(id)] = Location(method: method, extents: ranges)
            }
        }
        return out
    }

    /// `iprp`: the `ispe` size of each of `items`; nil when garbage.
    static func sizes(_ iprp: ISOBMFF.Box, in bytes: [UInt8], of items: Set<UInt32>) -> [UInt32: (Int, Int)]? {
        let boxes = ISOBMFF.boxes(in: bytes, from: iprp.payload, to: iprp.end)
        guard let ipco = boxes.first(where: { $0.is("ipco") }) else { return nil }
        let properties = ISOBMFF.boxes(in: bytes, from: ipco.payload, to: ipco.end)
        var out: [UInt32: (Int, Int)] = [:]
        for ipma in boxes where ipma.is("ipma") {
            guard var r = Reader(bytes, ipma), let version = r.u8(), r.skip(2), let flags = r.u8(),
                let count = r.u32()
            else { return nil }
            for _ in 0..<count {
                guard let id = version < 1 ? r.u16() : r.u32(), let n = r.u8() else { return nil }
                for _ in 0..<n {
                    guard let association = flags & 1 == 1 ? r.u16() : r.u8() else { return nil }
                    // The top bit says "essential"; the rest is a 1-based index into ipco.
                    let index = association & (flags & 1 == 1 ? 0x7FFF : 0x7F)
                    guard items.contains(UInt32(id)), index >= 1, index <= properties.count else { continue }
                    let ispe = properties[index - 1]
                    guard ispe.is("ispe"), var s = Reader(bytes, ispe), s.skip(4), let w = s.u32(), let h = s.u32(),
                        w > 0, h > 0
                    else { continue }
                    out[UInt32(id)] = (w, h)
                }
            }
        }
        return out
    }

    /// Sorted ranges, overlapping or touching ones joined.
    static func merge(_ ranges: [Range<Int>]) -> [Range<Int>] {
        var out: [Range<Int>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = out.last, range.lowerBound <= last.upperBound {
                out[out.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                out.append(range)
            }
        }
        return out
    }

    /// Big-endian numbers from a box's payload, never past its end.
    struct Reader {
        let bytes: [UInt8]
        var at: Int
        let end: Int

        init?(_ bytes: [UInt8], _ box: ISOBMFF.Box) {
            guard box.end <= bytes.count else { return nil }
            self.bytes = bytes
            at = box.payload
            end = box.end
        }

        mutating func skip(_ n: Int) -> Bool {
            guard n <= end - at else { return false }
            at += n
            return true
        }

        /// An unsigned number of `size` bytes (0, 4 or 8; 0 reads as 0, 1 and 2 as u8 and u16).
        mutating func sized(_ size: Int) -> Int? {
            guard size <= end - at else { return nil }
            var value = 0
            for i in 0..<size {
                // A 64-bit value past 2^56 is no offset in a real file.
                guard value < 1 << 55 else { return nil }
                value = value << 8 | Int(bytes[at + i])
            }
            at += size
            return value
        }

        mutating func u8() -> Int? { sized(1) }
        mutating func u16() -> Int? { sized(2) }
        mutating func u32() -> Int? { sized(4) }
    }
}
