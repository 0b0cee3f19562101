import Foundation

/// The small record kept beside `NAME.part` that says what the partial bytes are.
///
/// Written atomically (temporary file, rename) and only after the data it
/// describes has reached the kernel (`write` returned) or, for `durableLength`,
/// the disk (`fdatasync`). A journal lost or torn by a power cut reads as absent,
/// and the download then starts over: never wrong, at worst slower. On resume in the same boot, every byte in the `.part`
/// was written by a `write` that returned, so the file's length is trusted; after
/// a reboot (power loss) only `durableLength` is, and the rest is cut off.
struct DownloadJournal: Codable, Sendable, Hashable {
    /// Format version, for future changes.
    var version = 1
    /// The source, redacted (no password). A `.part` for another source is not resumed.
    var source: String
    /// What the bytes are, however the source's address is spelt
    /// (``DownloadOptions/sourceIdentity``: sync's history key and the path): a
    /// `.part` with the same identity is resumed through another address too.
    var identity: String?
    /// Strong ETag of the file the bytes came from.
    var etag: String?
    /// The modification time of the file the bytes came from (HTTP's
    /// `Last-Modified`, FTP's `MDTM`, a file's stamp); in the JSON the
    /// `lastModified` text and its `modifiedKind`.
    var modified: SourceTime?
    /// Full size of the file, when known.
    var totalSize: Int64?
    /// Where redirects led, redacted, when that was not `source` itself: with no
    /// validator, a resume that lands elsewhere cannot continue these bytes.
    var finalSource: String?
    /// Set when nothing can tell later whether the file is still the one the bytes
    /// came from (an FTP file fetched by its `LIST` entry, whose time is not exact,
    /// without `MDTM`, or from a server that answers neither `SIZE` nor `MDTM`):
    /// such a part is never resumed, only started over.
    var unverifiable: Bool?
    /// Bytes known to be on stable storage (fdatasync'd).
    var durableLength: Int64 = 0
    /// The boot's identity (`OS.bootID`) when the journal was written.
    var bootID: String

    /// The validator for `If-Range`: a strong ETag, else Last-Modified.
    var ifRangeValidator: String? {
        if let etag, !etag.isEmpty, !etag.hasPrefix("W/") { return etag }
        guard let text = modified?.text, !text.isEmpty else { return nil }
        return text
    }

    static func path(forPart part: String) -> String { part + ".journal" }

    /// Whether these bytes are of the download from `source` with `identity`: the
    /// same source as spelt, or the same identity when both have one.
    func describes(source: String, identity: String?) -> Bool {
        source == self.source || (identity != nil && identity == self.identity)
    }

    init(source: String, identity: String? = nil, bootID: String) {
        self.source = source
        self.identity = identity
        self.bootID = bootID
    }

    static func load(from path: String) -> DownloadJournal? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(DownloadJournal.self, from: data)
    }

    /// Writes the journal atomically and durably.
    func save(to path: String) throws(FerryError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do { data = try encoder.encode(self) } catch {
            throw FerryError(.localIO, operation: "write journal", target: path, detail: "\(error)")
        }
        try LocalFile.writeAtomically(data, to: path)
    }

    /// The current boot's identity; a different value means the machine restarted.
    static var currentBootID: String { OS.bootID }
}

extension DownloadJournal {
    /// The JSON's names: those of version 1, plus `modifiedKind`, which says how
    /// to read `lastModified` (`SourceTime.kind`). A journal without it (written
    /// before it existed: `.part` files on users' disks) reads its text as it
    /// was meant (`SourceTime(journalText:source:)`); an older Ferry reading a
    /// new journal ignores the key and reads the same text as before.
    private enum CodingKeys: String, CodingKey {
        case version, source, identity, etag, lastModified, modifiedKind, totalSize, finalSource, unverifiable
        case durableLength, bootID
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decodeIfPresent(Int.self, forKey: .version) ?? 1
        source = try c.decode(String.self, forKey: .source)
        identity = try c.decodeIfPresent(String.self, forKey: .identity)
        etag = try c.decodeIfPresent(String.self, forKey: .etag)
        if let text = try c.decodeIfPresent(String.self, forKey: .lastModified) {
            if let kind = try c.decodeIfPresent(String.self, forKey: .modifiedKind) {
                // A kind this version does not know: the bytes cannot be checked.
                guard let time = SourceTime(kind: kind, text: text) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .modifiedKind, in: c, debugDescription: "unknown kind \(kind)")
                }
                modified = time
            } else {
                modified = SourceTime(journalText: text, source: source)
            }
        }
        totalSize = try c.decodeIfPresent(Int64.self, forKey: .totalSize)
        finalSource = try c.decodeIfPresent(String.self, forKey: .finalSource)
        unverifiable = try c.decodeIfPresent(Bool.self, forKey: .unverifiable)
        durableLength = try c.decodeIfPresent(Int64.self, forKey: .durableLength) ?? 0
        bootID = try c.decode(String.self, forKey: .bootID)
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(source, forKey: .source)
        try c.encodeIfPresent(identity, forKey: .identity)
        try c.encodeIfPresent(etag, forKey: .etag)
        try c.encodeIfPresent(modified?.text, forKey: .lastModified)
        try c.encodeIfPresent(modified?.kind, forKey: .modifiedKind)
        try c.encodeIfPresent(totalSize, forKey: .totalSize)
        try c.encodeIfPresent(finalSource, forKey: .finalSource)
        try c.encodeIfPresent(unverifiable, forKey: .unverifiable)
        try c.encode(durableLength, forKey: .durableLength)
        try c.encode(bootID, forKey: .bootID)
    }
}
