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
    /// Last-Modified of the file the bytes came from.
    var lastModified: String?
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
        return lastModified?.isEmpty == false ? lastModified : nil
    }

    static func path(forPart part: String) -> String { part + ".journal" }

    /// Whether these bytes are of the download from `source` with `identity`: the
    /// same source as spelt, or the same identity when both have one.
    func describes(source: String, identity: String?) -> Bool {
        source == self.source || (identity != nil && identity == self.identity)
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
