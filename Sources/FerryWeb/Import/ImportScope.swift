import FerryKit

/// Which files "Import all new" takes: the folder it starts from (with its
/// subfolders) or the whole source, and which kinds of files: photos and videos
/// with their sidecars (the page's default), every file, or the extensions a person names
/// (as `ferry sync --only`). The decision alone, without the source
/// (``ImportScopeTests``).
struct ImportScope: Sendable, Codable, Equatable {
    /// What kinds of files are taken.
    enum Kinds: Sendable, Equatable {
        /// Photos (JPEG, HEIC, raw files, PNG ...) and videos, with the sidecars
        /// that travel with them (XMP, THM, WAV, AAE): what a camera or phone
        /// makes, never a text file or a card's own files.
        case media
        /// Every file.
        case all
        /// These extensions (lowercase, no dot), as `--only jpg,cr2` gives them.
        case extensions(Set<String>)
    }

    /// The backend path of the folder whose files (and its subfolders') are
    /// taken; nil: the whole source.
    var folder: String?
    var kinds: Kinds

    /// The whole source, every file: what an import asked for before scopes
    /// existed (a restart of such a request takes the same files).
    static let everything = ImportScope(folder: nil, kinds: .all)

    /// The extensions that count as photos and videos (``Kinds/media``).
    /// What the page shows or previews (``MediaType``), and what else cameras
    /// and phones write that it does not.
    static let mediaExtensions: Set<String> =
        MediaType.viewable.union(MediaType.video).union(MediaType.raw).union(MediaType.rawWithPreview).union([
            "tif", "tiff", "avif", "mpo",
            "crw", "nrw", "srf", "sr2", "srw", "x3f", "3fr", "iiq", "erf", "rwl",
            "avi", "mts", "m2ts", "mpg", "mpeg", "3gp", "mkv", "insv", "lrv",
        ])

    /// Whether the file at backend path `path` is taken.
    func includes(_ path: String) -> Bool {
        if let folder, folder != "/", !folder.isEmpty {
            let prefix = folder.hasSuffix("/") ? folder : folder + "/"
            guard path.hasPrefix(prefix) else { return false }
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let ext = MediaType.fileExtension(name)
        switch kinds {
        case .all: return true
        case .media: return Self.mediaExtensions.contains(ext) || PhotoGroups.sidecarExtensions.contains(ext)
        case .extensions(let set): return set.contains(ext)
        }
    }

    /// The kinds as the page and the API spell them: `media`, `all`, or
    /// extensions separated by commas or spaces (`jpg, CR2 .mov`). Absent means
    /// `all`, as the API answered before it had kinds; the page asks for `media`
    /// unless the person chooses otherwise.
    ///
    /// - Throws: ``APIRefusal`` 400 for a list with no extension in it.
    static func kinds(parsing text: String?) throws(APIRefusal) -> Kinds {
        guard let text else { return .all }
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        if t == "media" { return .media }
        if t == "all" { return .all }
        let exts = Set(
            t.split(whereSeparator: { $0 == "," || $0 == " " }).map { part -> String in
                var s = String(part)
                while s.hasPrefix(".") { s.removeFirst() }
                return s
            }.filter { !$0.isEmpty })
        guard !exts.isEmpty else {
            throw APIRefusal(400, "kinds must be media, all, or extensions such as jpg,cr2,mov")
        }
        return .extensions(exts)
    }

    /// The kinds as the API answers them (the same spelling ``kinds(parsing:)`` reads).
    var kindsText: String {
        switch kinds {
        case .media: "media"
        case .all: "all"
        case .extensions(let set): set.sorted().joined(separator: ",")
        }
    }

    private enum CodingKeys: String, CodingKey { case folder, kinds }

    init(folder: String?, kinds: Kinds) {
        self.folder = folder
        self.kinds = kinds
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        folder = try c.decodeIfPresent(String.self, forKey: .folder)
        let text = try c.decodeIfPresent(String.self, forKey: .kinds)
        do {
            kinds = try Self.kinds(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .kinds, in: c, debugDescription: "unknown kinds")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(folder, forKey: .folder)
        try c.encode(kindsText, forKey: .kinds)
    }
}
