// Typed wrappers for the SQLite macros Swift cannot import, prefixed
// `ferry_sqlite3_` (the CNIOLinux pattern). SQLITE_TRANSIENT is a function
// pointer cast from -1: Swift sees neither the macro nor the cast.
#ifndef FERRY_CSQLITE_SHIM_H
#define FERRY_CSQLITE_SHIM_H

#include <sqlite3.h>
#include <stdint.h>

/// Binds text that SQLite copies before returning (SQLITE_TRANSIENT).
static inline int ferry_sqlite3_bind_text(sqlite3_stmt *s, int i, const char *text, int bytes) {
    return sqlite3_bind_text(s, i, text, bytes, SQLITE_TRANSIENT);
}

#endif
