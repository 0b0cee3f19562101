import Foundation
import Synchronization

/// What `ferry sync` imported into one folder: a SQLite database in the folder
/// (``fileName``), keyed by the source (a card's CID, otherwise scheme, host and
/// root path), the remote path, size and modification time.
///
/// A file recorded here is never fetched again from that source, even when its
/// local copy is deleted or moved; a remote file whose size or time changed is a
/// new file. The database is in WAL mode with `synchronous=NORMAL`: a commit
/// costs no fsync, and a power cut can lose at most the last few records, whose
/// files the next run then finds on disk and records again.
public final class SyncHistory: Sendable {
    /// The database's name inside the destination folder.
    public static let fileName = ".ferry-sync.sqlite"

    /// How a record came to be.
    public enum Origin: String, Sendable, Hashable, Codable {
        /// Ferry downloaded the file.
        case downloaded
        /// The file was already in the folder with the same size (first run over an
        /// existing folder): recorded, not fetched.
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

        /// Creates a record.
        public init(
            source: String, path: String, size: Int64?, modified: RemoteTimestamp?, localPath: String,
            origin: Origin, importedAt: Date = Date(), deletedFromSource: Bool = false
        ) {
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
        /// Imported before, but with another size or time: the remote file changed.
        case changed
    }

    /// The database file.
    public let path: String
    private let db: Mutex<SQLiteDatabase>

    /// Schema version in `PRAGMA user_version`.
    static let schemaVersion = 1

    private init(path: String, db: sending SQLiteDatabase) {
        self.path = path
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
                        PRIMARY KEY(source, path, size, mtime)
                    ) WITHOUT ROWID;
                    CREATE INDEX IF NOT EXISTS imports_by_local ON imports(local);
                    PRAGMA user_version=\(schemaVersion);
                    """)
            }
        } else if current > schemaVersion {
            throw FerryError(
                .localIO, operation: "history", target: file,
                detail: "written by a newer Ferry (history version \(current)); update Ferry")
        }
        return SyncHistory(path: file, db: database)
    }

    // MARK: Reading and writing in one transaction

    /// The operations available inside ``transaction(_:)``.
    struct Transaction {
        fileprivate let db: SQLiteDatabase

        /// What is known about `path` with this size and time from `source`.
        func known(source: String, path: String, size: Int64?, modified: RemoteTimestamp?) throws(FerryError)
            -> Known
        {
            let s = try db.statement("SELECT size, mtime, local FROM imports WHERE source=?1 AND path=?2")
            s.bind(.text(source), .text(path))
            let wantSize = size ?? -1
            let wantTime = modified?.iso8601 ?? ""
            var any = false
            while try s.step() {
                any = true
                if s.int64(0) == wantSize && s.text(1) == wantTime {
                    let local = s.text(2) ?? ""
                    s.reset()
                    return .imported(localPath: local)
                }
            }
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

        /// Adds (or replaces) a record.
        func insert(_ r: Record) throws(FerryError) {
            let s = try db.statement(
                """
                INSERT OR REPLACE INTO imports(source, path, size, mtime, local, origin, imported_at,
                    deleted_from_source) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                """)
            s.bind(
                .text(r.source), .text(r.path), .integer(r.size ?? -1), .text(r.modified?.iso8601 ?? ""),
                .text(r.localPath), .text(r.origin.rawValue), .real(r.importedAt.timeIntervalSince1970),
                .integer(r.deletedFromSource ? 1 : 0))
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
            let tx = Transaction(db: database)
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
                "SELECT source, path, size, mtime, local, origin, imported_at, deleted_from_source FROM imports"
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
                        deletedFromSource: s.int64(7) == 1))
            }
            return out
        }
    }
}
