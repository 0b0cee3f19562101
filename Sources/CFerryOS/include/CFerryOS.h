// Linux calls that Glibc's Swift overlay does not expose (they need _GNU_SOURCE).
#ifndef FERRY_CFERRYOS_H
#define FERRY_CFERRYOS_H
#include <stdint.h>

/// rename(2) that fails with EEXIST instead of replacing (renameat2 RENAME_NOREPLACE).
int ferry_os_rename_noreplace(const char *from, const char *to);
/// Flushes the whole file system holding `fd` (syncfs).
int ferry_os_syncfs(int fd);
/// Sets only the modification time of a path (atime left alone).
int ferry_os_set_mtime(const char *path, int64_t seconds, int64_t nanoseconds);
/// Sets only the modification time of an open file (futimens; atime left alone).
int ferry_os_set_fd_mtime(int fd, int64_t seconds, int64_t nanoseconds);
/// Opens an unnamed regular file in `directory` for writing (O_TMPFILE): it has no
/// name until `ferry_os_link_fd` gives it one, and vanishes if the process dies
/// first. Returns -1 with errno EOPNOTSUPP/EISDIR/EINVAL where the file system or
/// kernel cannot do it; the caller then falls back to a named file.
int ferry_os_open_tmpfile(const char *directory, int mode);
/// Gives the open file `fd` the name `path` (linkat AT_EMPTY_PATH where the
/// kernel allows it, else through /proc/self/fd). Never replaces: EEXIST when
/// `path` exists.
int ferry_os_link_fd(int fd, const char *path);
/// Marks the calling thread as background work (SCHED_BATCH): waking it never
/// preempts the thread that woke it. 0, or -1 with errno.
int ferry_os_background_thread(void);
/// Starts writing back `length` bytes of `fd` from `offset` without waiting for
/// them (sync_file_range SYNC_FILE_RANGE_WRITE).
int ferry_os_start_writeback(int fd, int64_t offset, int64_t length);
/// A readers-writer lock that prefers writers (a waiting writer goes before new
/// readers, so a stream of readers never starves it); NULL when out of memory.
/// Never freed. Not recursive: a thread takes it once at a time.
void *ferry_os_rwlock_new(void);
/// Takes `lock` shared with other readers.
void ferry_os_rwlock_shared(void *lock);
/// Takes `lock` alone.
void ferry_os_rwlock_exclusive(void *lock);
/// Lets go of `lock`, however it was taken.
void ferry_os_rwlock_unlock(void *lock);
#endif
