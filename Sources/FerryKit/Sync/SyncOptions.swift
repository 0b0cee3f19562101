import Foundation

/// How `SyncEngine` imports: which files, where they go, what happens after.
public struct SyncOptions: Sendable, Hashable {
    /// Where imported files go inside the destination folder.
    public enum Layout: String, Sendable, Hashable, CaseIterable {
        /// The remote folders below the source URL, kept as they are.
        case tree
        /// `YYYY-MM-DD/NAME`: a photo (JPEG, TIFF-based raw) by the day it was
        /// taken, read from its Exif `DateTimeOriginal` once it is downloaded (no
        /// extra request); anything else, or a photo without that tag, by its
        /// modification time on the source (or, when the source reports none, the
        /// downloaded file's time).
        case date
    }

    /// Where imported files go (default: ``Layout/tree``).
    public var layout: Layout = .tree
    /// Folders from a template instead of the layout (`{taken:%Y}/{taken:%Y-%m-%d}`,
    /// ``NameTemplate``), relative to the destination.
    public var folderTemplate: NameTemplate?
    /// File names from a template (`{taken:%Y%m%d-%H%M%S}_{name}`); nil keeps the
    /// source's names. A name that is taken gets ` (2)` as always; the history
    /// keeps the final name, so a template changed between runs imports nothing again.
    public var nameTemplate: NameTemplate?
    /// The job code for `{tag}` (`--tag wedding`).
    public var tag: String?
    /// A second destination (`--backup DIR2`): every imported file is copied there
    /// too, from the one download, verified by its SHA-256 and recorded in that
    /// folder's own history; delete-after then deletes only files whose both
    /// copies are verified. A backup folder that is missing (its disk not
    /// connected) or full is reported, and its files stay on the source.
    public var backupDirectory: String?
    /// Only files with these extensions (lowercase, without the dot); empty means all.
    public var extensions: Set<String> = []
    /// Only files modified at or after this instant; files without a date are left out.
    public var since: Date?
    /// Plan and report, but download, record and delete nothing.
    public var dryRun = false
    /// Delete each file from the source once its local copy is complete and verified
    /// (never read-only files; on a card only when its uploads are enabled).
    public var deleteAfter = false
    /// Downloads at once from a server; a FlashAir card always gets one.
    public var jobs = 4
    /// Include hidden entries (dot-files, a card's system files).
    public var includeHidden = false
    /// Only these files (full source paths, as listed); nil means every file. The
    /// browser UI's "Import N selected" uses it.
    public var paths: Set<String>?
    /// In watch mode, how often to look again: on a card how often op=121 is asked
    /// (default 1 s), elsewhere how often the source is listed (default 10 s).
    public var interval: Duration?
    /// The zone of the source's zone-less (camera) times, for `since` and date folders.
    public var timeZone: TimeZone = .current
    /// How each download behaves. The overwrite policy is always `.fail`: sync
    /// picks a name that clobbers nothing.
    public var download = DownloadOptions()

    /// The defaults: everything, tree layout, four downloads at once from a server.
    public init() {}

    /// Whether a file name passes the `extensions` filter (case-insensitive).
    public func accepts(name: String) -> Bool {
        guard !extensions.isEmpty else { return true }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return extensions.contains(name[name.index(after: dot)...].lowercased())
    }

    /// Parses `jpg,.CR2, raw` into `["jpg", "cr2", "raw"]`.
    public static func extensions(from list: String) -> Set<String> {
        Set(
            list.split(whereSeparator: { $0 == "," || $0 == " " }).map { part in
                var e = part.lowercased()
                while e.hasPrefix(".") { e.removeFirst() }
                return e
            }.filter { !$0.isEmpty })
    }
}
