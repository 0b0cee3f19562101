#define _GNU_SOURCE
#include "CFerryOS.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int ferry_os_rename_noreplace(const char *from, const char *to) {
#ifdef RENAME_NOREPLACE
    int rc = renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
    if (rc == 0 || errno != EINVAL) return rc;
#endif
    // File systems without RENAME_NOREPLACE: link + unlink is also exclusive.
    if (link(from, to) != 0) return -1;
    return unlink(from);
}

int ferry_os_set_mtime(const char *path, int64_t seconds, int64_t nanoseconds) {
    struct timespec times[2] = {{0, UTIME_OMIT}, {seconds, nanoseconds}};
    return utimensat(AT_FDCWD, path, times, 0);
}

int ferry_os_set_fd_mtime(int fd, int64_t seconds, int64_t nanoseconds) {
    struct timespec times[2] = {{0, UTIME_OMIT}, {seconds, nanoseconds}};
    return futimens(fd, times);
}

int ferry_os_syncfs(int fd) {
    return syncfs(fd);
}

int ferry_os_open_tmpfile(const char *directory, int mode) {
#ifdef O_TMPFILE
    return open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
#else
    errno = EOPNOTSUPP;
    return -1;
#endif
}

// Whether linkat(AT_EMPTY_PATH) works for this process: 1 yes, 0 no, -1 not
// known yet. Kernels since 6.10 allow it for a file the caller opened; older
// ones only with CAP_DAC_READ_SEARCH (ENOENT otherwise). Relaxed atomics: the
// worst a race costs is one extra try.
static int ferry_empty_path_links = -1;

int ferry_os_link_fd(int fd, const char *path) {
#ifdef AT_EMPTY_PATH
    // By the descriptor: no walk of /proc/self/fd/N and its magic link (3-4 us
    // of an 18 us link on ext4, 1,000 small files; bench/RESULTS.md, issue 19, branch hops).
    int known = __atomic_load_n(&ferry_empty_path_links, __ATOMIC_RELAXED);
    if (known != 0) {
        if (linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH) == 0) {
            if (known < 0) __atomic_store_n(&ferry_empty_path_links, 1, __ATOMIC_RELAXED);
            return 0;
        }
        if (errno != ENOENT) return -1;
    }
#endif
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) != 0) return -1;
#ifdef AT_EMPTY_PATH
    // The same link by /proc worked where AT_EMPTY_PATH said ENOENT: not allowed here.
    __atomic_store_n(&ferry_empty_path_links, 0, __ATOMIC_RELAXED);
#endif
    return 0;
}

int ferry_os_background_thread(void) {
    struct sched_param param = {0};
    return sched_setscheduler(0, SCHED_BATCH, &param);
}

int ferry_os_start_writeback(int fd, int64_t offset, int64_t length) {
    return sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
}

void *ferry_os_rwlock_new(void) {
    pthread_rwlock_t *lock = malloc(sizeof *lock);
    if (!lock) return NULL;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    if (pthread_rwlock_init(lock, &attr) != 0) {
        free(lock);
        lock = NULL;
    }
    pthread_rwlockattr_destroy(&attr);
    return lock;
}
void ferry_os_rwlock_shared(void *lock) { pthread_rwlock_rdlock((pthread_rwlock_t *)lock); }
void ferry_os_rwlock_exclusive(void *lock) { pthread_rwlock_wrlock((pthread_rwlock_t *)lock); }
void ferry_os_rwlock_unlock(void *lock) { pthread_rwlock_unlock((pthread_rwlock_t *)lock); }
