import FerryKit

/// One folder item as the page receives it.
struct APIEntry: Encodable, Sendable {
    /// The name.
    var name: String
    /// The path relative to the source's root.
    var path: String
    /// `file`, `directory`, `symlink` or `other`.
    var type: String
    /// Bytes, for files.
    var size: Int64?
    /// ISO 8601, with `Z` when the source is UTC.
    var modified: String?
    /// Whether the viewer can open it.
    var image: Bool
    /// Whether a thumbnail can be asked for.
    var thumbnail: Bool
    /// Whether the entry is hidden (a dot-file, a card's system file), as `ferry ls` hides it without `--all`.
    var hidden: Bool
    /// `video` for a film the viewer plays, `raw` for a camera's raw file, else nil.
    var media: String?
    /// A card's system folder: the page offers no delete.
    var system: Bool?
    /// Whether the import history holds this file (same path and size); nil when not asked.
    var imported: Bool?

    init(_ entry: RemoteEntry, path: String) {
        name = entry.name
        self.path = path
        type = entry.kind.rawValue
        size = entry.size
        modified = entry.modified?.iso8601
        let isFile = entry.kind == .file || entry.kind == .symlink
        let raw =
            MediaType.rawWithPreview.contains(MediaType.fileExtension(entry.name))
            || MediaType.heif.contains(MediaType.fileExtension(entry.name))
        image = isFile && (MediaType.isViewable(entry.name) || raw)
        thumbnail = isFile && (MediaType.thumbnailable.contains(MediaType.fileExtension(entry.name)) || raw)
        hidden = entry.isHidden
        let ext = MediaType.fileExtension(entry.name)
        media = !isFile ? nil : MediaType.video.contains(ext) ? "video" : MediaType.raw.contains(ext) ? "raw" : nil
        imported = nil
    }
}
