import Foundation

/// The source's modification time as a download's validator: what the journal
/// records of the file the bytes came from, besides its ETag and size, and the
/// time `PartFile.finish` gives the downloaded file.
///
/// Each source says it in its own way, and each way compares differently: an
/// HTTP date goes back to the server verbatim in `If-Range` and is compared as
/// text; an FTP `MDTM` answer is compared to the second (servers differ in
/// writing a fraction); a file's own time (a local copy, an SMB share, SFTP's
/// `stat`) is exact to what the source keeps.
///
/// In the journal it is the text of today's `lastModified` (`text`), plus its
/// `kind` since this type exists; a journal written before that has only the
/// text, which `init(journalText:source:)` reads as it was meant.
enum SourceTime: Sendable, Hashable {
    /// An HTTP `Last-Modified`, as the server wrote it.
    case httpDate(String)
    /// An RFC 3659 `time-val` (`20240501120000`, maybe `.250`), as `MDTM` or an
    /// exact listing wrote it.
    case mdtm(String)
    /// A file's own modification time (`stat`), to the nanosecond when the
    /// source keeps it.
    case stamp(seconds: Int64, nanoseconds: Int64)

    /// How the journal spells it: the server's text, or `@SECONDS.NANOSECONDS`.
    var text: String {
        switch self {
        case .httpDate(let t), .mdtm(let t): return t
        case .stamp(let s, let ns): return "@\(s).\(ns)"
        }
    }

    /// The journal's name for the case.
    var kind: String {
        switch self {
        case .httpDate: return "httpDate"
        case .mdtm: return "mdtm"
        case .stamp: return "stamp"
        }
    }

    /// The time as a date; nil when the text is not one (a server's odd
    /// `Last-Modified` still serves as `If-Range` text).
    var date: Date? {
        switch self {
        case .httpDate(let t): return InternetDate.parse(t)
        case .mdtm(let t): return RemoteTimestamp(timeVal: t)?.date()
        case .stamp(let s, let ns): return Date(timeIntervalSince1970: TimeInterval(s) + TimeInterval(ns) / 1e9)
        }
    }

    /// Whether `other` names the same version of the file: the same text for
    /// an HTTP date, the same second for `MDTM` (`20240501120000` and
    /// `20240501120000.250`), the same instant for a stamp; times of different
    /// kinds never match.
    func sameVersion(as other: SourceTime) -> Bool {
        switch (self, other) {
        case (.mdtm(let a), .mdtm(let b)): return a.prefix(14) == b.prefix(14)
        default: return self == other
        }
    }

    /// The time a journal records as `kind` and `text`; nil for a kind this
    /// version does not know, or a stamp that is not one.
    init?(kind: String, text: String) {
        switch kind {
        case "httpDate": self = .httpDate(text)
        case "mdtm": self = .mdtm(text)
        case "stamp":
            guard let s = SourceTime.stamp(text) else { return nil }
            self = s
        default: return nil
        }
    }

    /// The time a journal written before `kind` existed records as `text`, for
    /// a download from `source`: the formats then were an HTTP date, an `MDTM`
    /// time-val, a local copy's or SMB file's `@SECONDS.NANOSECONDS`, and an
    /// SFTP file's Unix seconds as plain digits. They do not overlap, except
    /// that an HTTP server's `Last-Modified` could be anything, so an HTTP
    /// source's text is always its date.
    init(journalText text: String, source: String) {
        let scheme = source.prefix(while: { $0 != ":" }).lowercased()
        if scheme == "http" || scheme == "https" {
            self = .httpDate(text)
        } else if let stamp = SourceTime.stamp(text) {
            self = stamp
        } else if RemoteTimestamp(timeVal: text) != nil {
            self = .mdtm(text)
        } else if scheme == "sftp", !text.isEmpty, text.utf8.allSatisfy({ $0 &- 48 < 10 }), let s = Int64(text) {
            self = .stamp(seconds: s, nanoseconds: 0)
        } else {
            self = .httpDate(text)
        }
    }

    /// `@SECONDS.NANOSECONDS` as a stamp.
    private static func stamp(_ text: String) -> SourceTime? {
        guard text.hasPrefix("@") else { return nil }
        let parts = text.dropFirst().split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let s = Int64(parts[0]), let ns = Int64(parts[1]), (0..<1_000_000_000).contains(ns)
        else { return nil }
        return .stamp(seconds: s, nanoseconds: ns)
    }
}
