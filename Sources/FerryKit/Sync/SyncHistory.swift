import Foundation
import Synchronization

/// What `ferry sync` imported into one folder: a SQLite database in the folder
/// (``fileName``), keyed by the source (a card's CID, otherwise scheme, host and
/// root path), the remote path, size and modification time.
///
/// A file recorded here is never fetched again from that source, even when its
/// local copy is deleted or moved; a remote file whose size or time changed is a
/// new file. A file Ferry downloaded is recorded with the size and SHA-256 of the
/// copy it wrote: `--delete-after` deletes a source's file only when that copy
/// still has both. The database is in WAL mode with `synchronous=NORMAL`: a
/// commit costs no fsync, and a power cut can lose at most the last few records,
/// whose files the next run then finds on disk (under the name it gave them, a
/// numbered one included) and records again as found, never as a reason to delete.
public final class SyncHistory: Sendable {
    /// The database's name inside the destination folder.
    public static let fileName = ".ferry-sync.sqlite"

    /// How a record came to be.
    public enum Origin: String, Sendable, Hashable, Codable {
        /// Ferry downloaded the file.
        case downloaded
        /// The file was already in the folder with the same size and time (a first
        /// run over an existing folder, or a record a crash lost): recorded, not
        /// fetched, and never deleted from the source by `--delete-after`, since
        /// Ferry did not write that copy.
        case foundLocally = "found"
    }

    /// One imported file.
    public struct Record: Sendable, Hashable {
        /// The source's identity (``SyncSourceIdentity/key``).
        public var source: String
        /// The absolute remote path.
        public var path: String
        /// The remote size when imported, if the source reported one.
        public var size: Int64?
        /// The remote modification time when imported, if the source reported one.
        public var modified: RemoteTimestamp?
        /// Where the file went, relative to the destination folder.
        public var localPath: String
        /// Downloaded, or found in the folder.
        public var origin: Origin
        /// When it was recorded.
        public var importedAt: Date
        /// Whether `--delete-after` deleted it from the source.
        public var deletedFromSource: Bool
        /// The size of the copy Ferry wrote (``Origin/downloaded``); nil for a found file.
        public var localSize: Int64?
        /// The SHA-256 (lowercase hex) of the copy Ferry wrote, computed while its
        /// bytes streamed; nil for a found file or a record of an older Ferry.
        public var sha256: String?

        /// Creates a record.
        public init(
            source: String, path: String, size: Int64?, modified: RemoteTimestamp?, localPath: String,
            origin: Origin, importedAt: Date = Date(), deletedFromSource: Bool = false, localSize: Int64? = nil,
            sha256: String? = nil
        ) {
            self.localSize = localSize
            self.sha256 = sha256
            self.source = source
            self.path = path
            self.size = size
            self.modified = modified
            self.localPath = localPath
            self.origin = origin
            self.importedAt = importedAt
            self.deletedFromSource = deletedFromSource
        }
    }

    /// What the history knows about one remote file.
    enum Known: Sendable, Hashable {
        /// Never imported from this source at this path.
        case new
        /// Imported before with exactly this size and time; `localPath` is where it went.
        case imported(localPath: String)
        /// Imported before with this size and a card time off by whole 15-minute
        /// steps (a time-zone or daylight-saving change of the camera or the card):
        /// not fetched again, but never deleted from the source on that match.
        case importedShifted(localPath: String)
        /// Imported before, but with another size or time: the remote file changed.
        case changed
    }

    /// The database file.
    public let path: String
    private let db: Mutex<SQLiteDatabase>

    /// Schema version in `PRAGMA user_version`: 2 added the copy's size and SHA-256.
    static let schemaVersion = 2

    /// Whether the database has the copy's size and checksum columns (version 2;
    /// a dry run reads a version 1 history without upgrading it).
    private let hasChecksums: Bool

    private init(path: String, db: sending SQLiteDatabase, hasChecksums: Bool) {
        self.path = path
        self.hasChecksums = hasChecksums
        self.db = Mutex(db)
    }

    /// Opens the history of a destination folder.
    ///
    /// - Parameters:
    ///   - directory: The destination folder.
    ///   - create: Create the database when missing; when false and it is missing,
    ///     returns nil (a dry run writes nothing).
    /// - Throws: `localIO` for a file that is not a history or cannot be opened.
    public static func open(directory: String, create: Bool = true) throws(FerryError) -> SyncHistory? {
        let file = directory.hasSuffix("/") ? directory + fileName : directory + "/" + fileName
        if !create && !LocalFile.exists(file) { return nil }
        let database = try SQLiteDatabase(path: file, create: create)
        try database.execute("PRAGMA synchronous=NORMAL")
        // The schema is written once; a re-sync that finds nothing new writes nothing.
        let version = try database.statement("PRAGMA user_version")
        let current = try version.step() ? version.int64(0) ?? 0 : 0
        version.reset()
        if create && current == 0 {
            try database.execute("PRAGMA journal_mode=WAL")
            try database.transaction(immediate: true) { () throws(FerryError) in
                try database.execute(
                    """
                    CREATE TABLE IF NOT EXISTS imports(
                        source TEXT NOT NULL,
                        path TEXT NOT NULL,
                        size INTEGER NOT NULL,
                        mtime TEXT NOT NULL,
                        local TEXT NOT NULL,
                        origin TEXT NOT NULL,
                        imported_at REAL NOT NULL,
                        deleted_from_source INTEGER NOT NULL DEFAULT 0,
                        local_size INTEGER,
                        sha256 TEXT,
                        PRIMARY KEY(source, path, size, mtime)
                    ) WITHOUT ROWID;
                    CREATE INDEX IF NOT EXISTS imports_by_local ON imports(local);
                    PRAGMA user_version=\(schemaVersion);
                    """)
            }
            return SyncHistory(path: file, db: database, hasChecksums: true)
        } else if create && current == 1 {
            // Version 1's rows keep no checksum: their files are never deleted from
            // the source by delete-after (nothing can tell that the copy is Ferry's).
            try database.transaction(immediate: true) { () throws(FerryError) in
                try database.execute(
                    """
                    ALTER TABLE imports ADD COLUMN local_size INTEGER;
                    ALTER TABLE imports ADD COLUMN sha256 TEXT;
                    PRAGMA user_version=\(schemaVersion);
                    """)
            }
            return SyncHistory(path: file, db: database, hasChecksums: true)
        } else if current > schemaVersion {
            throw FerryError(
                .localIO, operation: "history", target: file,
                detail: "written by a newer Ferry (history version \(current)); update Ferry")
        }
        return SyncHistory(path: file, db: database, hasChecksums: current >= 2)
    }

    // MARK: Reading and writing in one transaction

    /// The operations available inside ``transaction(_:)``.
    struct Transaction {
        fileprivate let db: SQLiteDatabase
        fileprivate let hasChecksums: Bool
        /// Whether this is a write transaction (a dry run's is not).
        fileprivate let write: Bool

        /// What is known about `path` with this size and time from `source`.
        func known(source: String, path: String, size: Int64?, modified: RemoteTimestamp?) throws(FerryError)
            -> Known
        {
            let s = try db.statement("SELECT size, mtime, local FROM imports WHERE source=?1 AND path=?2")
            s.bind(.text(source), .text(path))
            var any = false
            var shifted: String?
            while try s.step() {
                any = true
                let recordedSize = s.int64(0)
                let mtime = s.text(1)
                if SyncHistory.matches(size: recordedSize, mtime: mtime, entrySize: size, entryModified: modified) {
                    let local = s.text(2) ?? ""
                    s.reset()
                    // A record that did not know what the listing knows now takes it, so
                    // that a later change of this file shows (a write transaction only).
                    let learnsSize = (recordedSize ?? -1) < 0 && size != nil
                    let learnsTime = (mtime ?? "").isEmpty && modified != nil
                    if write && (learnsSize || learnsTime) {
                        let u = try db.statement(
                            "UPDATE OR IGNORE imports SET size=?5, mtime=?6 WHERE source=?1 AND path=?2 AND size=?3 AND mtime=?4"
                        )
                        u.bind(
                            .text(source), .text(path), .integer(recordedSize ?? -1), .text(mtime ?? ""),
                            .integer(learnsSize ? size! : recordedSize ?? -1),
                            .text(learnsTime ? modified!.iso8601 : mtime ?? ""))
                        try u.run()
                    }
                    return .imported(localPath: local)
                }
                if shifted == nil,
                    SyncHistory.matchesShifted(
                        size: recordedSize, mtime: mtime, entrySize: size, entryModified: modified)
                {
                    shifted = s.text(2) ?? ""
                }
            }
            if let shifted { return .importedShifted(localPath: shifted) }
            return any ? .changed : .new
        }

        /// Whether some record already names `localPath` (relative to the folder) as its copy.
        func isClaimed(localPath: String) throws(FerryError) -> Bool {
            let s = try db.statement("SELECT 1 FROM imports WHERE local=?1 LIMIT 1")
            s.bind(.text(localPath))
            let found = try s.step()
            s.reset()
            return found
        }

        /// The record of this listed version of `path` (by ``SyncHistory/matches``), if any.
        func record(source: String, path: String, size: Int64?, modified: RemoteTimestamp?) throws(FerryError)
            -> Record?
        {
            let s = try db.statement(
                "SELECT size, mtime, origin, local, imported_at, deleted_from_source"
                    + (hasChecksums ? ", local_size, sha256" : "")
                    + " FROM imports WHERE source=?1 AND path=?2 ORDER BY imported_at DESC")
            s.bind(.text(source), .text(path))
            defer { s.reset() }
            while try s.step() {
                let recordedSize = s.int64(0)
                let mtime = s.text(1)
                guard SyncHistory.matches(size: recordedSize, mtime: mtime, entrySize: size, entryModified: modified)
                else { continue }
                return Record(
                    source: source, path: path, size: recordedSize.flatMap { $0 < 0 ? nil : $0 },
                    modified: mtime.flatMap { $0.isEmpty ? nil : RemoteTimestamp(iso8601: $0) },
                    localPath: s.text(3) ?? "", origin: Origin(rawValue: s.text(2) ?? "") ?? .downloaded,
                    importedAt: Date(timeIntervalSince1970: s.double(4) ?? 0), deletedFromSource: s.int64(5) == 1,
                    localSize: hasChecksums ? s.int64(6) : nil, sha256: hasChecksums ? s.text(7) : nil)
            }
            return nil
        }

        /// Adds (or replaces) a record.
        func insert(_ r: Record) throws(FerryError) {
            let s = try db.statement(
                """
                INSERT OR REPLACE INTO imports(source, path, size, mtime, local, origin, imported_at,
                    deleted_from_source, local_size, sha256) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                """)
            s.bind(
                .text(r.source), .text(r.path), .integer(r.size ?? -1), .text(r.modified?.iso8601 ?? ""),
                .text(r.localPath), .text(r.origin.rawValue), .real(r.importedAt.timeIntervalSince1970),
                .integer(r.deletedFromSource ? 1 : 0), r.localSize.map { .integer($0) } ?? .null,
                r.sha256.map { .text($0) } ?? .null)
            try s.run()
        }

        /// Marks a record as deleted from its source.
        func markDeletedFromSource(source: String, path: String, size: Int64?, modified: RemoteTimestamp?)
            throws(FerryError)
        {
            let s = try db.statement(
                "UPDATE imports SET deleted_from_source=1 WHERE source=?1 AND path=?2 AND size=?3 AND mtime=?4")
            s.bind(.text(source), .text(path), .integer(size ?? -1), .text(modified?.iso8601 ?? ""))
            try s.run()
        }
    }

    /// Runs `body` inside one transaction (a write transaction when `write`), under
    /// the history's lock. One transaction for a whole listing's lookups is what
    /// keeps a re-sync of thousands of files fast.
    func transaction<T: Sendable>(write: Bool, _ body: (Transaction) throws(FerryError) -> T) throws(FerryError)
        -> T
    {
        try db.withLock { (database: inout SQLiteDatabase) throws(FerryError) -> T in
            let tx = Transaction(db: database, hasChecksums: hasChecksums, write: write)
            return try database.transaction(immediate: write) { () throws(FerryError) -> T in try body(tx) }
        }
    }

    /// Records imported files in one transaction (no fsync: WAL, synchronous=NORMAL).
    public func record(_ records: [Record]) throws(FerryError) {
        guard !records.isEmpty else { return }
        try transaction(write: true) { (tx: Transaction) throws(FerryError) in
            for r in records { try tx.insert(r) }
        }
    }

    /// Every record, or those of one source, ordered by source and path.
    public func records(source: String? = nil) throws(FerryError) -> [Record] {
        try db.withLock { (database: inout SQLiteDatabase) throws(FerryError) -> [Record] in
            let sql =
                "SELECT source, path, size, mtime, local, origin, imported_at, deleted_from_source"
                + (hasChecksums ? ", local_size, sha256" : "") + " FROM imports"
                + (source == nil ? "" : " WHERE source=?1") + " ORDER BY source, path, imported_at"
            let s = try database.statement(sql)
            if let source { s.bind(.text(source)) }
            var out: [Record] = []
            while try s.step() {
                let size = s.int64(2) ?? -1
                let mtime = s.text(3) ?? ""
                out.append(
                    Record(
                        source: s.text(0) ?? "", path: s.text(1) ?? "", size: size < 0 ? nil : size,
                        modified: mtime.isEmpty ? nil : RemoteTimestamp(iso8601: mtime), localPath: s.text(4) ?? "",
                        origin: Origin(rawValue: s.text(5) ?? "") ?? .downloaded,
                        importedAt: Date(timeIntervalSince1970: s.double(6) ?? 0),
                        deletedFromSource: s.int64(7) == 1, localSize: hasChecksums ? s.int64(8) : nil,
                        sha256: hasChecksums ? s.text(9) : nil))
            }
            return out
        }
    }

    // MARK: The one rule for "imported already"

    /// Whether a record (its size and time as stored) is this listed version of a
    /// file: the same size and the same time, each where the listing gives one.
    /// The history stores what the listing said (-1 and "" for what it did not),
    /// so the same file is the same on every run.
    static func matches(size: Int64?, mtime: String?, entrySize: Int64?, entryModified: RemoteTimestamp?) -> Bool {
        // What the listing does not say cannot show a change: python's http.server
        // lists neither size nor time, a history of an older Ferry kept the size
        // the download found, and one of before listing times to the minute kept
        // no time for nginx's and Apache's pages (-1 and "" recorded: unknown).
        (entrySize == nil || size == nil || size! < 0 || size == entrySize)
            && (entryModified == nil || (mtime ?? "").isEmpty || mtime == entryModified!.iso8601)
    }

    /// Whether a record is this listed file seen through a clock shift: the same
    /// size, both times floating (a card's FAT local time, a camera's clock) and
    /// apart by whole 15-minute steps, at most 24 hours. After travel or a
    /// daylight-saving change the same file shows up an hour (or 30 or 15 minutes)
    /// off; Rapid Photo Downloader accepts it the same way. A file really changed
    /// within a whole number of quarter hours and with the same size is rare; it
    /// is missed, never overwritten, and such a match never deletes from the source.
    static func matchesShifted(size: Int64?, mtime: String?, entrySize: Int64?, entryModified: RemoteTimestamp?)
        -> Bool
    {
        guard let entrySize, let size, size == entrySize, let entryModified, entryModified.zone == .floating,
            let mtime, let recorded = RemoteTimestamp(iso8601: mtime), recorded.zone == .floating
        else { return false }
        let utc = TimeZone(identifier: "UTC")!
        let apart = Int(entryModified.date(floatingIn: utc).timeIntervalSince(recorded.date(floatingIn: utc)))
        return apart != 0 && apart % 900 == 0 && abs(apart) <= 86_400
    }

    /// What the history holds for one source, in memory, answering "imported
    /// already?" by the rule `ferry sync` plans by (the browser UI's badges and
    /// counts).
    public struct ImportedFiles: Sendable {
        fileprivate var versions: [String: [(size: Int64, mtime: String)]] = [:]
        /// How many records the source has.
        public fileprivate(set) var count = 0

        /// Nothing imported.
        public init() {}

        /// Whether this listed version of the file (its path, size and time) was
        /// imported, by sync's rule (a clock shift of whole quarter hours included).
        public func contains(_ entry: RemoteEntry) -> Bool {
            versions[entry.path]?.contains {
                SyncHistory.matches(
                    size: $0.size, mtime: $0.mtime, entrySize: entry.size, entryModified: entry.modified)
                    || SyncHistory.matchesShifted(
                        size: $0.size, mtime: $0.mtime, entrySize: entry.size, entryModified: entry.modified)
            } ?? false
        }
    }

    /// Every version of every file imported from `source`, for ``ImportedFiles/contains(_:)``.
    public func imported(source: String) throws(FerryError) -> ImportedFiles {
        try db.withLock { (database: inout SQLiteDatabase) throws(FerryError) -> ImportedFiles in
            let s = try database.statement("SELECT path, size, mtime FROM imports WHERE source=?1")
            s.bind(.text(source))
            var out = ImportedFiles()
            while try s.step() {
                out.versions[s.text(0) ?? "", default: []].append((s.int64(1) ?? -1, s.text(2) ?? ""))
                out.count += 1
            }
            return out
        }
    }
}
