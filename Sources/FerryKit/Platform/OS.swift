import CFerryOS
import Foundation

#if os(Linux)
    import Glibc
#endif

/// Every call FerryKit makes that belongs to Linux rather than to POSIX, in one
/// place: `fdatasync`, `syncfs`, `sync_file_range`, `renameat2`, `O_TMPFILE`,
/// `st_mtim`, `/proc`, and the calls whose names collide with Swift's and need a
/// `Glibc.` prefix. A port to another system replaces this file (and the
/// `CFerryOS` shim behind it); no other FerryKit file names a Linux-only call or
/// field.
///
/// Only Linux is built and tested; elsewhere the build stops here, saying what
/// to port, instead of compiling untested code.
enum OS {
    #if os(Linux)
        /// What `stat`/`fstat`/`lstat` fill in.
        typealias FileStatus = Glibc.stat

        // Paths reach C through `withCString`, which hands over a native
        // string's own NUL-terminated bytes: the implicit String-to-pointer
        // conversion copied each path into a new array first (one malloc and
        // free per call, several per downloaded file; bench/RESULTS.md, "Issue 19:
        // memory churn per file, and the start-up").

        /// `open(2)`; -1 with `errno` on failure.
        static func open(_ path: String, _ flags: Int32) -> Int32 { path.withCString { Glibc.open($0, flags) } }

        /// `close(2)`.
        static func close(_ fd: Int32) { _ = Glibc.close(fd) }

        /// `rename(2)`, replacing `to`; -1 with `errno` on failure.
        static func rename(_ from: String, _ to: String) -> Int32 {
            from.withCString { f in to.withCString { Glibc.rename(f, $0) } }
        }

        /// `rename(2)` that fails with `EEXIST` instead of replacing (`renameat2`
        /// with `RENAME_NOREPLACE`).
        static func renameNoReplace(_ from: String, _ to: String) -> Int32 {
            from.withCString { f in to.withCString { ferry_os_rename_noreplace(f, $0) } }
        }

        /// Makes a file's data durable, without its metadata when the size did
        /// not change (`fdatasync`).
        static func syncData(_ fd: Int32) -> Int32 { fdatasync(fd) }

        /// Makes a file's data and metadata durable (`fsync`).
        static func sync(_ fd: Int32) -> Int32 { fsync(fd) }

        /// Flushes the whole file system holding `fd` (`syncfs`): one call for a
        /// group of small files.
        static func syncFileSystem(_ fd: Int32) -> Int32 { ferry_os_syncfs(fd) }

        /// Starts writing `length` bytes from `offset` back to the disk without
        /// waiting (`sync_file_range` with `SYNC_FILE_RANGE_WRITE`).
        static func startWriteback(_ fd: Int32, offset: Int64, length: Int64) -> Int32 {
            ferry_os_start_writeback(fd, offset, length)
        }

        /// An unnamed file in `directory` (`O_TMPFILE`); -1 with `errno`
        /// `EOPNOTSUPP`, `EISDIR` or `EINVAL` where the file system cannot.
        static func openUnnamed(inDirectory directory: String, mode: Int32) -> Int32 {
            directory.withCString { ferry_os_open_tmpfile($0, mode) }
        }

        /// Whether unnamed files can be named later (`link` goes through
        /// `/proc/self/fd`, which a sandbox may hide).
        static let unnamedFilesWork = access("/proc/self/fd", X_OK) == 0

        /// Gives an open (unnamed) file a name; never replaces (`EEXIST`).
        static func link(_ fd: Int32, to path: String) -> Int32 { path.withCString { ferry_os_link_fd(fd, $0) } }

        /// Sets only the modification time of a path.
        static func setModificationTime(_ path: String, seconds: Int64, nanoseconds: Int64) -> Int32 {
            path.withCString { ferry_os_set_mtime($0, seconds, nanoseconds) }
        }

        /// Marks the calling thread as background work (`SCHED_BATCH`): waking it
        /// never preempts the thread that woke it.
        static func makeBackgroundThread() { _ = ferry_os_background_thread() }

        /// Sets only the modification time of an open file (`futimens`).
        static func setModificationTime(_ fd: Int32, seconds: Int64, nanoseconds: Int64) -> Int32 {
            ferry_os_set_fd_mtime(fd, seconds, nanoseconds)
        }

        /// The modification time a `stat` call returned (`st_mtim`).
        static func modificationTime(_ st: FileStatus) -> (seconds: Int64, nanoseconds: Int64) {
            (Int64(st.st_mtim.tv_sec), Int64(st.st_mtim.tv_nsec))
        }

        /// This boot's identity (`/proc/sys/kernel/random/boot_id`): a different
        /// value means the machine restarted, and the page cache was lost.
        static let bootID: String = {
            let text = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? ""
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }()
    #else
        #error("FerryKit runs on Linux only: port Sources/FerryKit/Platform/OS.swift and Sources/CFerryOS")
    #endif
}

extension OS {
    /// The modification time a `stat` call returned, as a `Date`.
    static func modificationDate(_ st: FileStatus) -> Date {
        let t = modificationTime(st)
        return Date(timeIntervalSince1970: TimeInterval(t.seconds) + TimeInterval(t.nanoseconds) / 1e9)
    }
}
