/// Boxes of the ISO base media file format (ISO/IEC 14496-12: MP4, HEIF, Canon's
/// CR3), read from bytes that may be only a prefix of the file.
///
/// Nothing in the bytes is trusted: a box's size is checked against its parent's
/// end and the file's size; a 32-bit size of 1 means a 64-bit size follows, 0
/// means "to the end of the parent"; a box smaller than its own header, or one
/// reaching past its parent, ends the walk; nesting deeper than ``maxDepth`` is
/// refused. A walk takes at most ``maxBoxes`` boxes per level, so garbage cannot
/// make it slow.
package enum ISOBMFF {
    /// One box's header: where it starts and ends in the file.
    package struct Box: Sendable, Equatable {
        /// The four-character type (`moov`, `uuid`, `CMT1`), as bytes.
        package var type: [UInt8]
        /// The 16 bytes that follow a `uuid` box's header, else nil.
        package var uuid: [UInt8]?
        /// File offset of the box's first byte.
        package var offset: Int
        /// File offset of the first byte after the header (and after the uuid).
        package var payload: Int
        /// File offset one past the box's last byte.
        package var end: Int

        /// The type as text (`"moov"`).
        package var name: String { String(decoding: type, as: UTF8.self) }
        /// Whether this box is of type `name` (four ASCII characters).
        package func `is`(_ name: String) -> Bool { type.elementsEqual(name.utf8) }
    }

    /// Containers nest a few levels deep in real files (moov/trak/mdia/minf/stbl/stsd); more is garbage.
    package static let maxDepth = 12
    /// More boxes than this at one level is garbage (real files have a few dozen).
    package static let maxBoxes = 4096

    /// The header of the box at file offset `offset`.
    ///
    /// - Parameters:
    ///   - bytes: File bytes starting at file offset `base`.
    ///   - base: The file offset of `bytes`' first byte.
    ///   - offset: The file offset where the box starts.
    ///   - limit: The parent's end (the file's size at the top level): the box may not reach past it.
    /// - Returns: The box, or nil when its header is not in `bytes`, is invalid, or reaches past `limit`.
    package static func box(in bytes: [UInt8], base: Int = 0, at offset: Int, limit: Int) -> Box? {
        let at = offset - base
        guard at >= 0, offset + 8 <= limit, at <= bytes.count - 8 else { return nil }
        let size32 = u32(bytes, at)
        let type = Array(bytes[(at + 4)..<(at + 8)])
        var header = 8
        var size: Int
        switch size32 {
        case 0: size = limit - offset
        case 1:
            guard at <= bytes.count - 16 else { return nil }
            let high = u32(bytes, at + 8)
            guard high < 1 << 30 else { return nil }
            size = high << 32 | u32(bytes, at + 12)
            header = 16
        default: size = size32
        }
        var uuid: [UInt8]?
        if type.elementsEqual("uuid".utf8) {
            guard at + header <= bytes.count - 16 else { return nil }
            uuid = Array(bytes[(at + header)..<(at + header + 16)])
            header += 16
        }
        guard size >= header, size <= limit - offset else { return nil }
        return Box(type: type, uuid: uuid, offset: offset, payload: offset + header, end: offset + size)
    }

    /// The boxes one after another from `start` up to `end` whose headers lie in `bytes`.
    /// The walk stops at the first header that is missing, invalid or reaches past `end`.
    package static func boxes(in bytes: [UInt8], base: Int = 0, from start: Int, to end: Int) -> [Box] {
        var out: [Box] = []
        var at = start
        // Every box is at least 8 bytes long: `at` moves forward each pass.
        while out.count < maxBoxes, let box = box(in: bytes, base: base, at: at, limit: end) {
            out.append(box)
            at = box.end
        }
        return out
    }

    /// The first box along `path` (types from the outside in, `"uuid:<32 hex digits>"` for a
    /// uuid box), looking from `start` to `end`; nil when the bytes do not hold it.
    package static func find(_ path: [String], in bytes: [UInt8], base: Int = 0, from start: Int = 0, to end: Int)
        -> Box?
    {
        guard let first = path.first, path.count <= maxDepth else { return nil }
        for box in boxes(in: bytes, base: base, from: start, to: end) where matches(box, first) {
            if path.count == 1 { return box }
            if let inner = find(Array(path.dropFirst()), in: bytes, base: base, from: box.payload, to: box.end) {
                return inner
            }
        }
        return nil
    }

    /// Whether `box` is of type `name` or, for `"uuid:<hex>"`, a uuid box with that uuid.
    static func matches(_ box: Box, _ name: String) -> Bool {
        guard name.hasPrefix("uuid:") else { return box.is(name) }
        guard let uuid = box.uuid else { return false }
        return hex(uuid) == name.dropFirst(5).lowercased()
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    /// A big-endian 32-bit number at `at`; the caller checks the bounds.
    static func u32(_ b: [UInt8], _ at: Int) -> Int {
        Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
    }

    /// A big-endian 16-bit number at `at`; the caller checks the bounds.
    static func u16(_ b: [UInt8], _ at: Int) -> Int { Int(b[at]) << 8 | Int(b[at + 1]) }
}
