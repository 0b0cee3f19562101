// libsmbclient (Samba) behind a few C functions for FerryKit's SMB backend
// (Sources/FerryKit/Backends/SMB). Only the context API: every call names the
// context it runs on, and one context is used by one thread at a time. Calls
// return what libsmbclient returns (-1 or NULL with errno set). Prefix `ferry_smb_`.
#ifndef FERRY_CSMBCLIENT_SHIM_H
#define FERRY_CSMBCLIENT_SHIM_H

#include <samba-4.0/libsmbclient.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <dlfcn.h>
#include <pthread.h>

// libsmbclient is opened on first use (dlopen), not linked: it brings about a hundred
// Samba libraries whose loading and symbol binding cost every `ferry` process about 85M
// instructions at start (callgrind of an empty program linked with it), SMB or not
// (bench/RESULTS.md, issue 32 item 4). The functions below are looked up once.
#define FERRY_SMB_FUNCTIONS(X) X(smbc_free_context) X(smbc_getFunctionClose) X(smbc_getFunctionClosedir) X(smbc_getFunctionFstat) X(smbc_getFunctionFtruncate) X(smbc_getFunctionLseek) X(smbc_getFunctionMkdir) X(smbc_getFunctionOpen) X(smbc_getFunctionOpendir) X(smbc_getFunctionRead) X(smbc_getFunctionReaddir) X(smbc_getFunctionReaddirPlus2) X(smbc_getFunctionRename) X(smbc_getFunctionRmdir) X(smbc_getFunctionStat) X(smbc_getFunctionUnlink) X(smbc_getFunctionUtimes) X(smbc_getFunctionWrite) X(smbc_getOptionUserData) X(smbc_init_context) X(smbc_new_context) X(smbc_setFunctionAuthDataWithContext) X(smbc_setOptionFallbackAfterKerberos) X(smbc_setOptionNoAutoAnonymousLogin) X(smbc_setOptionProtocols) X(smbc_setOptionSmbEncryptionLevel) X(smbc_setOptionUseCCache) X(smbc_setOptionUseKerberos) X(smbc_setOptionUserData) X(smbc_setPort) X(smbc_setTimeout)

typedef struct {
#define FERRY_SMB_FIELD(name) __typeof__(&name) name;
    FERRY_SMB_FUNCTIONS(FERRY_SMB_FIELD)
#undef FERRY_SMB_FIELD
    int loaded;
    int threaded;
} ferry_smb_library;

// Samba's own thread hooks (lib/util/smb_threads.h, exported by libsamba-util as
// smb_thread_set_functions; libsmbclient's smbc_thread_posix, which installs them,
// is not exported by Debian's build). With them, Samba keeps its talloc stack frames
// per thread and its global locks are real mutexes.
typedef struct {
    int (*create_mutex)(const char *lockname, void **pplock, const char *location);
    void (*destroy_mutex)(void *plock, const char *location);
    int (*lock_mutex)(void *plock, int lock_type, const char *location);
    int (*create_tls)(const char *keyname, void **ppkey, const char *location);
    void (*destroy_tls)(void **ppkey, const char *location);
    int (*set_tls)(void *pkey, const void *pval, const char *location);
    void *(*get_tls)(void *pkey, const char *location);
} ferry_smb_thread_functions;

static int ferry_smb_create_mutex(const char *name, void **out, const char *location) {
    (void)name;
    (void)location;
    pthread_mutex_t *m = (pthread_mutex_t *)malloc(sizeof *m);
    if (!m) return ENOMEM;
    pthread_mutex_init(m, NULL);
    *out = m;
    return 0;
}
static void ferry_smb_destroy_mutex(void *m, const char *location) {
    (void)location;
    pthread_mutex_destroy((pthread_mutex_t *)m);
    free(m);
}
static int ferry_smb_lock_mutex(void *m, int type, const char *location) {
    (void)location;
    return type == 2 ? pthread_mutex_unlock((pthread_mutex_t *)m) : pthread_mutex_lock((pthread_mutex_t *)m);
}
static int ferry_smb_create_tls(const char *name, void **out, const char *location) {
    (void)name;
    (void)location;
    pthread_key_t *k = (pthread_key_t *)malloc(sizeof *k);
    if (!k) return ENOMEM;
    int e = pthread_key_create(k, NULL);
    if (e) {
        free(k);
        return e;
    }
    *out = k;
    return 0;
}
static void ferry_smb_destroy_tls(void **key, const char *location) {
    (void)location;
    pthread_key_delete(*(pthread_key_t *)*key);
    free(*key);
    *key = NULL;
}
static int ferry_smb_set_tls(void *key, const void *value, const char *location) {
    (void)location;
    return key ? pthread_setspecific(*(pthread_key_t *)key, value) : EINVAL;
}
static void *ferry_smb_get_tls(void *key, const char *location) {
    (void)location;
    // Samba asks for its stack frame's key before it first makes it (talloc_stack.c).
    return key ? pthread_getspecific(*(pthread_key_t *)key) : NULL;
}
static const ferry_smb_thread_functions ferry_smb_threads = {
    ferry_smb_create_mutex, ferry_smb_destroy_mutex, ferry_smb_lock_mutex, ferry_smb_create_tls,
    ferry_smb_destroy_tls,  ferry_smb_set_tls,       ferry_smb_get_tls,
};

// The table lives in a function: Swift imports a header's static variables as
// references to be linked, and nothing would define them.
static inline ferry_smb_library *ferry_smb_table(void) {
    static ferry_smb_library table;
    return &table;
}

static void ferry_smb_load(void) {
    // Already in the process (another copy of this table, or a library of the program
    // that uses Samba itself): hooks installed after Samba's first call would break it.
    void *before = dlopen("libsmbclient.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (before) dlclose(before);
    void *handle = dlopen("libsmbclient.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!handle) return;
#define FERRY_SMB_LOOK_UP(name) \
    if (!(ferry_smb_table()->name = (__typeof__(&name))dlsym(handle, #name))) return;
    FERRY_SMB_FUNCTIONS(FERRY_SMB_LOOK_UP)
#undef FERRY_SMB_LOOK_UP
    // The hooks go in before Samba's first talloc stack frame, once per process:
    // another copy of this table may have installed them already; if Samba was
    // loaded without them, every call stays in turn.
    int (*set_functions)(const ferry_smb_thread_functions *) =
        (int (*)(const ferry_smb_thread_functions *))dlsym(handle, "smb_thread_set_functions");
    const void **installed = (const void **)dlsym(handle, "global_tfp");
    const char *choice = getenv("FERRY_SMB_THREADS");  // "0": every call in turn (SMBConnection.swift)
    if (set_functions && installed && !(choice && strcmp(choice, "0") == 0)) {
        if (*installed || (!before && set_functions(&ferry_smb_threads) == 0)) ferry_smb_table()->threaded = 1;
    }
    ferry_smb_table()->loaded = 1;
}

/// 1 once libsmbclient is loaded (the first call loads it), 0 when it cannot be.
static inline int ferry_smb_available(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, ferry_smb_load);
    return ferry_smb_table()->loaded;
}

/// 1 when Samba's thread hooks are in: contexts may then be used on several threads at once.
static inline int ferry_smb_threaded(void) { return ferry_smb_available() && ferry_smb_table()->threaded; }

/// A libsmbclient function. Every context was made after ferry_smb_available returned 1;
/// the check is repeated because each object file that uses these inline functions can
/// hold its own copy of the table (a pthread_once that has run is one load).
#define FERRY_SMB(name) (ferry_smb_available(), ferry_smb_table()->name)

/// The login a context answers libsmbclient's questions with (its user data).
typedef struct ferry_smb_login {
    char *workgroup;
    char *user;
    char *password;
} ferry_smb_login;

static inline void ferry_smb_copy(char *out, int size, const char *value) {
    if (!out || size <= 0) return;
    if (!value) value = "";
    size_t n = strlen(value);
    if (n >= (size_t)size) n = (size_t)size - 1;
    memcpy(out, value, n);
    out[n] = 0;
}

/// libsmbclient asks for the login of each server and share it connects to.
static void ferry_smb_auth(SMBCCTX *c, const char *server, const char *share, char *workgroup, int workgroup_len,
                           char *user, int user_len, char *password, int password_len) {
    (void)server;
    (void)share;
    ferry_smb_login *login = (ferry_smb_login *)FERRY_SMB(smbc_getOptionUserData)(c);
    if (!login) return;
    if (login->workgroup && *login->workgroup) ferry_smb_copy(workgroup, workgroup_len, login->workgroup);
    ferry_smb_copy(user, user_len, login->user);
    ferry_smb_copy(password, password_len, login->password);
}

/// A new, initialised context for one server: SMB2 or later, the port, a timeout
/// per request, and the login. `user` NULL or empty logs in as a guest
/// (anonymous); otherwise libsmbclient's fallback to an anonymous login after a
/// refused one is off, so a wrong password fails as such. Encryption and signing
/// follow what the server (and the client's smb.conf) asks for; `encrypt` 1
/// insists on encryption. NULL with errno on failure.
static inline SMBCCTX *ferry_smb_new(const char *workgroup, const char *user, const char *password, int port,
                                     int timeout_ms, int encrypt) {
    if (!ferry_smb_available()) {
        errno = ELIBACC;  // libsmbclient.so.0 is not installed (Debian's libsmbclient)
        return NULL;
    }
    SMBCCTX *c = FERRY_SMB(smbc_new_context)();
    if (!c) return NULL;
    ferry_smb_login *login = (ferry_smb_login *)calloc(1, sizeof *login);
    if (!login) {
        FERRY_SMB(smbc_free_context)(c, 1);
        errno = ENOMEM;
        return NULL;
    }
    login->workgroup = strdup(workgroup ? workgroup : "");
    login->user = strdup(user ? user : "");
    login->password = strdup(password ? password : "");
    FERRY_SMB(smbc_setOptionUserData)(c, login);
    FERRY_SMB(smbc_setFunctionAuthDataWithContext)(c, ferry_smb_auth);
    FERRY_SMB(smbc_setOptionUseKerberos)(c, 0);
    FERRY_SMB(smbc_setOptionFallbackAfterKerberos)(c, 1);
    FERRY_SMB(smbc_setOptionUseCCache)(c, 0);
    FERRY_SMB(smbc_setOptionNoAutoAnonymousLogin)(c, user && *user ? 1 : 0);
    FERRY_SMB(smbc_setOptionSmbEncryptionLevel)(c, encrypt ? SMBC_ENCRYPTLEVEL_REQUIRE : SMBC_ENCRYPTLEVEL_DEFAULT);
    if (port > 0) FERRY_SMB(smbc_setPort)(c, (uint16_t)port);
    if (timeout_ms > 0) FERRY_SMB(smbc_setTimeout)(c, timeout_ms);
    FERRY_SMB(smbc_setOptionProtocols)(c, "SMB2_02", "SMB3");
    if (!FERRY_SMB(smbc_init_context)(c)) {
        int e = errno;
        free(login->workgroup);
        free(login->user);
        free(login->password);
        free(login);
        FERRY_SMB(smbc_free_context)(c, 1);
        errno = e ? e : EINVAL;
        return NULL;
    }
    return c;
}

/// Frees a context, its connections and its login.
static inline void ferry_smb_free(SMBCCTX *c) {
    if (!c) return;
    ferry_smb_login *login = (ferry_smb_login *)FERRY_SMB(smbc_getOptionUserData)(c);
    FERRY_SMB(smbc_free_context)(c, 1);
    if (login) {
        if (login->password) {
            memset(login->password, 0, strlen(login->password));
            free(login->password);
        }
        free(login->workgroup);
        free(login->user);
        free(login);
    }
}

static inline SMBCFILE *ferry_smb_open(SMBCCTX *c, const char *url, int flags, mode_t mode) {
    return FERRY_SMB(smbc_getFunctionOpen)(c)(c, url, flags, mode);
}
static inline ssize_t ferry_smb_read(SMBCCTX *c, SMBCFILE *f, void *buf, size_t count) {
    return FERRY_SMB(smbc_getFunctionRead)(c)(c, f, buf, count);
}
static inline ssize_t ferry_smb_write(SMBCCTX *c, SMBCFILE *f, const void *buf, size_t count) {
    return FERRY_SMB(smbc_getFunctionWrite)(c)(c, f, buf, count);
}
static inline off_t ferry_smb_lseek(SMBCCTX *c, SMBCFILE *f, off_t offset, int whence) {
    return FERRY_SMB(smbc_getFunctionLseek)(c)(c, f, offset, whence);
}
static inline int ferry_smb_fstat(SMBCCTX *c, SMBCFILE *f, struct stat *st) {
    return FERRY_SMB(smbc_getFunctionFstat)(c)(c, f, st);
}
static inline int ferry_smb_ftruncate(SMBCCTX *c, SMBCFILE *f, off_t size) {
    return FERRY_SMB(smbc_getFunctionFtruncate)(c)(c, f, size);
}
static inline int ferry_smb_close(SMBCCTX *c, SMBCFILE *f) { return FERRY_SMB(smbc_getFunctionClose)(c)(c, f); }
static inline int ferry_smb_stat(SMBCCTX *c, const char *url, struct stat *st) {
    return FERRY_SMB(smbc_getFunctionStat)(c)(c, url, st);
}
static inline SMBCFILE *ferry_smb_opendir(SMBCCTX *c, const char *url) {
    return FERRY_SMB(smbc_getFunctionOpendir)(c)(c, url);
}
/// The next entry with its stat (files and folders), NULL at the end or on error
/// (errno says which: 0 at the end).
static inline const struct libsmb_file_info *ferry_smb_readdirplus2(SMBCCTX *c, SMBCFILE *d, struct stat *st) {
    errno = 0;
    return FERRY_SMB(smbc_getFunctionReaddirPlus2)(c)(c, d, st);
}
/// The next entry as `smbc_dirent` (shares and servers have no stat), NULL at the end.
static inline struct smbc_dirent *ferry_smb_readdir(SMBCCTX *c, SMBCFILE *d) {
    errno = 0;
    return FERRY_SMB(smbc_getFunctionReaddir)(c)(c, d);
}
static inline int ferry_smb_closedir(SMBCCTX *c, SMBCFILE *d) { return FERRY_SMB(smbc_getFunctionClosedir)(c)(c, d); }
static inline int ferry_smb_unlink(SMBCCTX *c, const char *url) { return FERRY_SMB(smbc_getFunctionUnlink)(c)(c, url); }
static inline int ferry_smb_mkdir(SMBCCTX *c, const char *url, mode_t mode) {
    return FERRY_SMB(smbc_getFunctionMkdir)(c)(c, url, mode);
}
static inline int ferry_smb_rmdir(SMBCCTX *c, const char *url) { return FERRY_SMB(smbc_getFunctionRmdir)(c)(c, url); }
/// Renames within one context. libsmbclient replaces an existing file at `to`.
static inline int ferry_smb_rename(SMBCCTX *c, const char *from, const char *to) {
    return FERRY_SMB(smbc_getFunctionRename)(c)(c, from, c, to);
}
/// Sets a file's access and modification times (seconds and microseconds).
static inline int ferry_smb_utimes(SMBCCTX *c, const char *url, long seconds, long microseconds) {
    struct timeval tv[2];
    tv[0].tv_sec = seconds;
    tv[0].tv_usec = microseconds;
    tv[1] = tv[0];
    return FERRY_SMB(smbc_getFunctionUtimes)(c)(c, url, tv);
}

#endif
