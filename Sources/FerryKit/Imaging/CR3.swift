/// Canon's raw format since 2018 (CR3, also CRM films): an ISO base media file
/// (``ISOBMFF``, `ftyp` brand `crx `) laid out as Laurent Clévy's "Describing the
/// Canon Raw v3 (CR3) file format" and ExifTool's Canon tables describe it:
///
/// - `ftyp` (`crx `)
/// - `moov`, whose first box is `uuid` 85c0b687-820f-11e0-8111-f4ce462b6a48 holding
///   `CNCV`, `CCTP`, `CTBO` (offsets of the top-level boxes), `CMT1` (a TIFF whose
///   IFD0 has `Orientation`), `CMT2` (a TIFF whose IFD0 is the Exif IFD, with
///   `DateTimeOriginal`), `CMT3` (maker notes), `CMT4` (GPS) and `THMB` (a 160 x 120
///   JPEG at byte 24 of the box, its length at byte 16); then `mvhd` and the `trak`s
/// - `uuid` be7acfcb-… (XMP), then `uuid` eaf42b5e-1c98-4b88-b9fb-b7dc406e4d16 whose
///   payload is 8 bytes and a `PRVW` box: the 1620 x 1080 JPEG at byte 24 of `PRVW`,
///   its length at byte 20
/// - `mdat`: the sensor data (tens of MB)
///
/// Everything a thumbnail, the capture date and the orientation need lies in the
/// first tens of KB (the Canon `uuid` box); the preview is one box further on.
/// These functions read prefixes and say how many bytes they need when a prefix
/// is too short, so a caller reading by range fetches only what is needed.
package enum CR3 {
    /// The uuid of the box in `moov` that holds the metadata and the thumbnail.
    package static let canonUUID = "85c0b687820f11e08111f4ce462b6a48"
    /// The uuid of the top-level box that holds `PRVW`.
    package static let previewUUID = "eaf42b5e1c984b88b9fbb7dc406e4d16"
    /// The most of the file's start worth reading for the metadata: real Canon
    /// `uuid` boxes are under 200 KB; one claiming more is not read.
    package static let maxMetadataLength = 4 << 20
    /// The most a `PRVW` box may claim (real ones are a few hundred KB).
    package static let maxPreviewLength = 32 << 20

    /// Where the Canon box's parts lie, as file offsets (indexes into the prefix read).
    package struct Metadata: Sendable, Equatable {
        /// The TIFF data of `CMT1` (IFD0: make, model, orientation).
        package var ifd0: Range<Int>?
        /// The TIFF data of `CMT2` (its IFD0 is the Exif IFD: dates, exposure).
        package var exif: Range<Int>?
        /// The `THMB` JPEG.
        package var thumbnail: Range<Int>?
        /// Where the box after `moov` starts: the walk to the preview begins here.
        package var moovEnd: Int
        /// Where `CTBO` says the preview's `uuid` box starts (checked before use).
        package var previewHint: Int?
    }

    /// What a prefix of a file shows.
    package enum Scan: Sendable, Equatable {
        /// The metadata, all inside the prefix.
        case found(Metadata)
        /// The prefix is too short: read the file's first `n` bytes and scan again.
        case needs(Int)
        /// Not a CR3 file, or one whose boxes make no sense.
        case invalid
    }

    /// Whether `bytes` start as a CR3 file does (`ftyp` with the major brand `crx `).
    package static func isCR3(_ bytes: some Collection<UInt8>) -> Bool {
        guard bytes.count >= 12 else { return false }
        let head = Array(bytes.prefix(12))
        return head[4..<8].elementsEqual("ftyp".utf8) && head[8..<12].elementsEqual("crx ".utf8)
    }

    /// Reads the metadata's place from the file's first bytes.
    ///
    /// - Parameters:
    ///   - prefix: The file's first bytes.
    ///   - fileSize: The file's size; nil when unknown (the prefix may be all there is).
    package static func scan(_ prefix: [UInt8], fileSize: Int? = nil) -> Scan {
        guard isCR3(prefix) else { return .invalid }
        let size = fileSize ?? (1 << 48)
        // The top level: ftyp, then moov (real files: at byte 24).
        let (moov, moovStop) = first("moov", in: prefix, from: 0, to: size)
        guard let moov else { return more(moovStop, size: size, prefix: prefix) }
        let (canon, canonStop) = first("uuid:" + canonUUID, in: prefix, from: moov.payload, to: moov.end)
        guard let canon else { return more(canonStop, size: size, prefix: prefix) }
        guard canon.end <= prefix.count else {
            return canon.end <= maxMetadataLength ? .needs(canon.end) : .invalid
        }
        var metadata = Metadata(moovEnd: moov.end)
        for box in ISOBMFF.boxes(in: prefix, from: canon.payload, to: canon.end) {
            if box.is("CMT1") {
                metadata.ifd0 = box.payload..<box.end
            } else if box.is("CMT2") {
                metadata.exif = box.payload..<box.end
            } else if box.is("THMB"), box.end - box.offset >= 24 {
                let length = ISOBMFF.u32(prefix, box.offset + 16)
                let start = box.offset + 24
                if length >= 4, length <= box.end - start, prefix[start] == 0xFF, prefix[start + 1] == 0xD8 {
                    metadata.thumbnail = start..<(start + length)
                }
            } else if box.is("CTBO"), box.end - box.payload >= 4 {
                // Records of (index u32, offset u64, size u64); index 2 is the preview's uuid box.
                let count = min(ISOBMFF.u32(prefix, box.payload), (box.end - box.payload - 4) / 20)
                for i in 0..<count {
                    let r = box.payload + 4 + 20 * i
                    guard ISOBMFF.u32(prefix, r) == 2, ISOBMFF.u32(prefix, r + 4) == 0 else { continue }
                    let offset = ISOBMFF.u32(prefix, r + 8)
                    if offset >= moov.end, offset < size { metadata.previewHint = offset }
                }
            }
        }
        return .found(metadata)
    }

    /// The TIFF blocks (`CMT1`, `CMT2`) of a CR3 file's first bytes, or nil when they
    /// are not a CR3 file's or do not reach the end of its Canon box.
    package static func tiffBlocks(in bytes: [UInt8]) -> (ifd0: Range<Int>?, exif: Range<Int>?)? {
        guard case .found(let metadata) = scan(bytes) else { return nil }
        return (metadata.ifd0, metadata.exif)
    }

    /// Whether `box` (a top-level box header) is the preview's uuid box.
    package static func isPreviewBox(_ box: ISOBMFF.Box) -> Bool { ISOBMFF.matches(box, "uuid:" + previewUUID) }

    /// The preview JPEG's place (file offsets) in the preview's uuid box.
    ///
    /// - Parameters:
    ///   - bytes: File bytes from `box.offset` on (the whole box, or its first bytes).
    ///   - box: The preview's uuid box, as ``ISOBMFF/box(in:base:at:limit:)`` read it.
    /// - Returns: The JPEG's range, or nil when there is no valid `PRVW` in the box.
    package static func previewJPEG(in bytes: [UInt8], box: ISOBMFF.Box) -> Range<Int>? {
        guard isPreviewBox(box),
            let prvw = ISOBMFF.box(in: bytes, base: box.offset, at: box.payload + 8, limit: box.end),
            prvw.is("PRVW"), prvw.end - prvw.offset >= 24, prvw.offset + 24 - box.offset <= bytes.count
        else { return nil }
        let length = ISOBMFF.u32(bytes, prvw.offset - box.offset + 20)
        let start = prvw.offset + 24
        guard length >= 4, length <= prvw.end - start else { return nil }
        return start..<(start + length)
    }

    /// The first box named `name` from `start` to `end`, or nil with where the walk stopped.
    private static func first(_ name: String, in bytes: [UInt8], from start: Int, to end: Int)
        -> (ISOBMFF.Box?, Int)
    {
        var at = start
        var count = 0
        while count < ISOBMFF.maxBoxes, let box = ISOBMFF.box(in: bytes, at: at, limit: end) {
            if ISOBMFF.matches(box, name) { return (box, at) }
            at = box.end
            count += 1
        }
        return (nil, at)
    }

    /// A walk that stopped at `at`: more bytes help when the header there lies past the prefix.
    private static func more(_ at: Int, size: Int, prefix: [UInt8]) -> Scan {
        guard at + 32 > prefix.count, at < size else { return .invalid }
        let want = min(size, at + 64 * 1024)
        return want <= maxMetadataLength && want > prefix.count ? .needs(want) : .invalid
    }
}
