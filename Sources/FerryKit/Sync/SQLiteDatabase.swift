import CSQLite
import Foundation

/// One SQLite connection: the only place FerryKit calls SQLite.
///
/// Not thread-safe by itself: its owner (``SyncHistory``) uses it under one lock,
/// so the connection and its prepared statements are never used by two threads
/// at once. The connection is closed in `deinit`, after its statements.
final class SQLiteDatabase {
    /// `sqlite3 *`.
    private var handle: OpaquePointer?
    /// The database file, for messages.
    let path: String
    /// Statements prepared once and reused (`reset` between uses).
    private var cache: [String: SQLiteStatement] = [:]

    /// Opens (and with `create`, creates) a database file.
    ///
    /// - Throws: `localIO` naming the file and SQLite's reason.
    init(path: String, create: Bool) throws(FerryError) {
        self.path = path
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        handle = db
        guard rc == SQLITE_OK else {
            let error = SQLiteDatabase.error(rc, db, operation: "open", path: path)
            sqlite3_close_v2(db)
            handle = nil
            throw error
        }
        // Another process (a second `ferry sync` into the same folder) may hold a
        // write lock for a moment: wait for it instead of failing.
        sqlite3_busy_timeout(db, 10_000)
    }

    deinit {
        cache.removeAll()
        // close_v2 defers the close until every statement is finalized.
        sqlite3_close_v2(handle)
    }

    /// Runs SQL without results (schema, pragmas, BEGIN/COMMIT).
    func execute(_ sql: String) throws(FerryError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard rc == SQLITE_OK else {
            var e = SQLiteDatabase.error(rc, handle, operation: "history", path: path)
            if let message { e.serverText = String(cString: message) }
            throw e
        }
    }

    /// A statement for `sql`, prepared on first use and cached; reset and unbound.
    func statement(_ sql: String) throws(FerryError) -> SQLiteStatement {
        if let s = cache[sql] {
            s.reset()
            return s
        }
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard rc == SQLITE_OK, let raw else {
            throw SQLiteDatabase.error(rc, handle, operation: "history", path: path)
        }
        let s = SQLiteStatement(raw, database: self)
        cache[sql] = s
        return s
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(immediate: Bool, _ body: () throws(FerryError) -> T) throws(FerryError) -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// SQLite's last error as a `FerryError`.
    func lastError(_ rc: Int32, operation: String = "history") -> FerryError {
        SQLiteDatabase.error(rc, handle, operation: operation, path: path)
    }

    static func error(_ rc: Int32, _ db: OpaquePointer?, operation: String, path: String) -> FerryError {
        let text = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        let base = rc & 0xFF
        if base == SQLITE_FULL {
            return FerryError(.diskFull, operation: operation, target: path, serverText: text)
        }
        if base == SQLITE_BUSY || base == SQLITE_LOCKED {
            return FerryError(
                .localIO, operation: operation, target: path, serverText: text,
                detail: "another ferry sync is using this history; try again when it ends", isTransient: true)
        }
        if base == SQLITE_NOTADB || base == SQLITE_CORRUPT {
            return FerryError(
                .localIO, operation: operation, target: path, serverText: text,
                detail: "not a Ferry sync history; move it away to start a new one")
        }
        return FerryError(.localIO, operation: operation, target: path, serverText: text)
    }
}

/// One prepared statement, owned by its ``SQLiteDatabase`` and used under the same lock.
final class SQLiteStatement {
    /// `sqlite3_stmt *`.
    private let handle: OpaquePointer
    private unowned let database: SQLiteDatabase

    init(_ handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// Clears the previous run and its bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds parameters `?1`, `?2` ... in order; nil binds NULL.
    func bind(_ values: SQLiteValue...) {
        for (i, v) in values.enumerated() {
            let index = Int32(i + 1)
            switch v {
            case .null: sqlite3_bind_null(handle, index)
            case .integer(let n): sqlite3_bind_int64(handle, index, n)
            case .real(let d): sqlite3_bind_double(handle, index, d)
            case .text(let s):
                var s = s
                s.withUTF8 { u in
                    u.withMemoryRebound(to: CChar.self) { c in
                        _ = ferry_sqlite3_bind_text(handle, index, c.baseAddress, Int32(c.count))
                    }
                }
            }
        }
    }

    /// Advances; true while a row is available.
    func step() throws(FerryError) -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw database.lastError(rc)
    }

    /// Runs a statement that returns no rows.
    func run() throws(FerryError) {
        while try step() {}
    }

    /// Column `i` of the current row as text; nil for NULL.
    func text(_ i: Int32) -> String? {
        guard let p = sqlite3_column_text(handle, i) else { return nil }
        let n = Int(sqlite3_column_bytes(handle, i))
        return String(decoding: UnsafeRawBufferPointer(start: p, count: n), as: UTF8.self)
    }

    /// Column `i` of the current row as an integer; nil for NULL.
    func int64(_ i: Int32) -> Int64? {
        sqlite3_column_type(handle, i) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, i)
    }

    /// Column `i` of the current row as a double; nil for NULL.
    func double(_ i: Int32) -> Double? {
        sqlite3_column_type(handle, i) == SQLITE_NULL ? nil : sqlite3_column_double(handle, i)
    }
}

/// A value bound to a statement parameter.
enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    static func optional(_ n: Int64?) -> SQLiteValue { n.map { .integer($0) } ?? .null }
}
