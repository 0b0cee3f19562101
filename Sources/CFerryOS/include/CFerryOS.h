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
#endif
