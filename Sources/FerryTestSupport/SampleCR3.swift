/// CR3 files built to the layout Canon's cameras write (Laurent Clévy's "Describing
/// the Canon Raw v3 (CR3) file format", ExifTool's Canon tables): `ftyp` `crx `;
/// `moov` whose first box is the Canon `uuid` (CNCV, CCTP with CCDTs, CTBO, CMT1
/// to CMT4 as little-endian TIFFs, THMB), then `mvhd`; the XMP `uuid`; the preview
/// `uuid` with `PRVW`; `mdat` with filler for the sensor data. The JPEGs are given.
public enum SampleCR3 {
    /// One TIFF entry.
    public enum Tag: Sendable {
        case short(Int, Int)
        case long(Int, Int)
        case ascii(Int, String)
        case rational(Int, Int, Int)
        case bytes(Int, [UInt8])

        var tag: Int {
            switch self {
            case .short(let t, _), .long(let t, _), .ascii(let t, _), .rational(let t, _, _), .bytes(let t, _): t
            }
        }
    }

    /// What the sample records.
    public struct Options: Sendable {
        public var orientation = 1
        public var taken = "2024:06:01 23:45:12"
        public var subSeconds: String? = "25"
        public var offset: String? = "+02:00"
        public var make = "Canon"
        public var model = "Canon EOS R6"
        public var width = 5472
        public var height = 3648
        public var previewWidth = 1620
        public var previewHeight = 1080
        /// Bytes of "sensor data" in `mdat`.
        public var sensorBytes = 2_000_000
        /// Padding in the Canon box's `free` box (real maker notes are tens of KB).
        public var makerNotePadding = 30_000
        public init() {}
    }

    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    static func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }
    static func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be32(_ v: Int) -> [UInt8] { be16(v >> 16 & 0xFFFF) + be16(v & 0xFFFF) }
    static func be64(_ v: Int) -> [UInt8] { be32(v >> 32) + be32(v & 0xFFFF_FFFF) }

    /// A box: big-endian 32-bit size, type, payload.
    public static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        be32(8 + payload.count) + Array(type.utf8) + payload
    }

    /// A uuid box; `uuid` as 32 hex digits.
    public static func uuidBox(_ uuid: String, _ payload: [UInt8]) -> [UInt8] {
        let hex = Array(uuid.utf8)
        let bytes = stride(from: 0, to: 32, by: 2).map { i -> UInt8 in
            UInt8(String(decoding: hex[i..<(i + 2)], as: UTF8.self), radix: 16)!
        }
        return box("uuid", bytes + payload)
    }

    /// A little-endian TIFF with one IFD (entries sorted by tag), values after it.
    public static func tiff(_ tags: [Tag]) -> [UInt8] {
        let sorted = tags.sorted { $0.tag < $1.tag }
        var data: [UInt8] = []
        let dataStart = 8 + 2 + 12 * sorted.count + 4
        var entries: [UInt8] = []
        for tag in sorted {
            func inline(_ type: Int, _ count: Int, _ value: [UInt8]) {
                if value.count <= 4 {
                    entries +=
                        le16(tag.tag) + le16(type) + le32(count) + value + [UInt8](repeating: 0, count: 4 - value.count)
                } else {
                    entries += le16(tag.tag) + le16(type) + le32(count) + le32(dataStart + data.count)
                    data += value
                    if data.count % 2 == 1 { data.append(0) }
                }
            }
            switch tag {
            case .short(_, let v): inline(3, 1, le16(v))
            case .long(_, let v): inline(4, 1, le32(v))
            case .ascii(_, let s): inline(2, s.utf8.count + 1, Array(s.utf8) + [0])
            case .rational(_, let n, let d): inline(5, 1, le32(n) + le32(d))
            case .bytes(_, let b): inline(7, b.count, b)
            }
        }
        return [0x49, 0x49, 0x2A, 0x00] + le32(8) + le16(sorted.count) + entries + le32(0) + data
    }

    /// The CR3 file.
    public static func make(thumbnail: [UInt8], preview: [UInt8], options o: Options = Options()) -> [UInt8] {
        let ftyp = box("ftyp", Array("crx ".utf8) + be32(1) + Array("crx isom".utf8))
        let cncv = box("CNCV", Array("CanonCR3_001/00.10.00/00.00.00".utf8))
        let ccdt = [(2, 1), (1, 2), (0, 3)].flatMap { type, index in
            box("CCDT", be64(type) + be32(0) + be32(index))
        }
        let cctp = box("CCTP", be32(0) + be32(1) + be32(3) + ccdt)
        let ifd0: [Tag] = [
            .ascii(0x010F, o.make), .ascii(0x0110, o.model), .short(0x0112, o.orientation),
            .rational(0x011A, 72, 1), .rational(0x011B, 72, 1), .short(0x0128, 2),
            .ascii(0x0132, o.taken),
        ]
        let cmt1 = box("CMT1", tiff(ifd0))
        var exif: [Tag] = [
            .rational(0x829A, 1, 250), .rational(0x829D, 28, 10), .short(0x8827, 400),
            .bytes(0x9000, Array("0231".utf8)), .ascii(0x9003, o.taken), .ascii(0x9004, o.taken),
            .rational(0x920A, 35, 1), .short(0xA002, o.width), .short(0xA003, o.height),
            .ascii(0xA434, "RF24-105mm F4 L IS USM"),
        ]
        if let s = o.subSeconds { exif += [.ascii(0x9291, s), .ascii(0x9292, s)] }
        if let z = o.offset { exif += [.ascii(0x9010, z), .ascii(0x9011, z), .ascii(0x9012, z)] }
        let cmt2 = box("CMT2", tiff(exif))
        let cmt3 = box("CMT3", tiff([.long(0x0010, 0x8000_0453)]))
        let cmt4 = box("CMT4", tiff([.bytes(0x0000, [2, 3, 0, 0])]))
        var thmbPayload = [0, 0, 0, 0] + be16(160) + be16(120) + be32(thumbnail.count) + be16(1) + be16(0) + thumbnail
        while thmbPayload.count % 4 != 0 { thmbPayload.append(0) }
        let thmb = box("THMB", thmbPayload)
        let free = box("free", [UInt8](repeating: 0, count: o.makerNotePadding))
        var mvhd = be32(0) + be32(0) + be32(0) + be32(1000) + be32(1)
        mvhd += be32(0x0001_0000) + be16(0x0100) + [UInt8](repeating: 0, count: 10)
        mvhd += [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000].flatMap { be32($0) }
        mvhd += [UInt8](repeating: 0, count: 24) + be32(2)
        let xmp = uuidBox(
            "be7acfcb97a942e89c71999491e3afac",
            Array(
                "<?xpacket begin='\u{FEFF}' id='W5M0MpCehiHzreSzNTczkc9d'?><x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><rdf:Description rdf:about='' xmlns:xmp='http://ns.adobe.com/xap/1.0/'><xmp:Rating>0</xmp:Rating></rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end='w'?>"
                    .utf8))
        var prvwPayload = be32(0) + be16(1) + be16(o.previewWidth) + be16(o.previewHeight) + be16(1)
        prvwPayload += be32(preview.count) + preview
        while prvwPayload.count % 4 != 0 { prvwPayload.append(0) }
        let prvw = uuidBox(CR3UUID.preview, be32(0) + be32(1) + box("PRVW", prvwPayload))
        let mdat = box("mdat", (0..<o.sensorBytes).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        // CTBO's records point at the XMP box, the preview box and mdat: sizes first, offsets after.
        func ctbo(_ records: [(Int, Int)]) -> [UInt8] {
            box(
                "CTBO",
                be32(4) + records.enumerated().flatMap { i, r in be32(i + 1) + be64(r.0) + be64(r.1) })
        }
        let canonSize =
            8 + 16 + cncv.count + cctp.count + ctbo([]).count + 80 + free.count + cmt1.count + cmt2.count
            + cmt3.count + cmt4.count + thmb.count
        let moovSize = 8 + canonSize + 8 + mvhd.count
        let xmpAt = ftyp.count + moovSize
        let prvwAt = xmpAt + xmp.count
        let mdatAt = prvwAt + prvw.count
        let table = ctbo([(xmpAt, xmp.count), (prvwAt, prvw.count), (mdatAt, mdat.count), (0, 0)])
        let canon = uuidBox(CR3UUID.canon, cncv + cctp + table + free + cmt1 + cmt2 + cmt3 + cmt4 + thmb)
        let moov = box("moov", canon + box("mvhd", mvhd))
        precondition(moov.count == moovSize, "CR3 sample layout")
        return ftyp + moov + xmp + prvw + mdat
    }
}

/// The uuids of CR3's boxes, as 32 hex digits.
public enum CR3UUID {
    public static let canon = "85c0b687820f11e08111f4ce462b6a48"
    public static let preview = "eaf42b5e1c984b88b9fbb7dc406e4d16"
}
