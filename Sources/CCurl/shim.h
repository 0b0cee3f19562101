// Typed wrappers for libcurl's variadic and macro APIs, so Swift never
// calls a C variadic function. One wrapper per argument kind, prefixed
// `ferry_curl_` (the CNIOLinux / CFURLSessionInterface pattern).
#ifndef FERRY_CCURL_SHIM_H
#define FERRY_CCURL_SHIM_H

#include <curl/curl.h>
#include <stdint.h>

// --- curl_easy_setopt -----------------------------------------------------
static inline CURLcode ferry_curl_setopt_long(CURL *h, CURLoption o, long v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode ferry_curl_setopt_off(CURL *h, CURLoption o, int64_t v) {
    return curl_easy_setopt(h, o, (curl_off_t)v);
}
static inline CURLcode ferry_curl_setopt_string(CURL *h, CURLoption o, const char *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode ferry_curl_setopt_pointer(CURL *h, CURLoption o, void *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode ferry_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) {
    return curl_easy_setopt(h, o, v);
}

typedef size_t (*ferry_curl_data_cb)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*ferry_curl_xferinfo_cb)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                      curl_off_t ultotal, curl_off_t ulnow);
typedef int (*ferry_curl_debug_cb)(CURL *h, curl_infotype type, char *data, size_t size, void *userdata);

static inline CURLcode ferry_curl_setopt_data_cb(CURL *h, CURLoption o, ferry_curl_data_cb cb) {
    return curl_easy_setopt(h, o, cb);
}
static inline CURLcode ferry_curl_setopt_xferinfo_cb(CURL *h, ferry_curl_xferinfo_cb cb) {
    return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cb);
}
static inline CURLcode ferry_curl_setopt_debug_cb(CURL *h, ferry_curl_debug_cb cb) {
    return curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, cb);
}

// Sockets of a connection to be let go when idle (IdleSockets.swift): told each
// socket libcurl opens, and closing them ourselves, so the engine knows which are live.
typedef int (*ferry_curl_sockopt_cb)(void *clientp, curl_socket_t fd, curlsocktype purpose);
typedef int (*ferry_curl_closesocket_cb)(void *clientp, curl_socket_t fd);
static inline CURLcode ferry_curl_setopt_sockopt_cb(CURL *h, ferry_curl_sockopt_cb cb) {
    return curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, cb);
}
static inline CURLcode ferry_curl_setopt_closesocket_cb(CURL *h, ferry_curl_closesocket_cb cb) {
    return curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, cb);
}

// SFTP host keys: libcurl calls this after matching the server's key against
// CURLOPT_SSH_KNOWNHOSTS; the return value is a curl_khstat.
typedef int (*ferry_curl_sshkey_cb)(CURL *h, const struct curl_khkey *known, const struct curl_khkey *found,
                                    enum curl_khmatch match, void *userdata);
static inline CURLcode ferry_curl_setopt_sshkey_cb(CURL *h, ferry_curl_sshkey_cb cb) {
    return curl_easy_setopt(h, CURLOPT_SSH_KEYFUNCTION, cb);
}

// SFTP through a proxy process (ProxyJump): libcurl asks for each connection's
// socket and hands it back to be closed.
typedef curl_socket_t (*ferry_curl_opensocket_cb)(void *clientp, curlsocktype purpose,
                                                  struct curl_sockaddr *address);
static inline CURLcode ferry_curl_setopt_opensocket_cb(CURL *h, ferry_curl_opensocket_cb cb) {
    return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, cb);
}
// ferry_curl_setopt_closesocket_cb (above) serves both the idle sockets of a
// one-connection card and the SFTP jump hosts' relays: a handle has one of them.

// --- curl_easy_getinfo ----------------------------------------------------
static inline CURLcode ferry_curl_getinfo_long(CURL *h, CURLINFO i, long *v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode ferry_curl_getinfo_off(CURL *h, CURLINFO i, int64_t *v) {
    curl_off_t x = 0;
    CURLcode rc = curl_easy_getinfo(h, i, &x);
    *v = (int64_t)x;
    return rc;
}
static inline CURLcode ferry_curl_getinfo_string(CURL *h, CURLINFO i, const char **v) {
    char *s = NULL;
    CURLcode rc = curl_easy_getinfo(h, i, &s);
    *v = s;
    return rc;
}
static inline CURLcode ferry_curl_getinfo_pointer(CURL *h, CURLINFO i, void **v) {
    return curl_easy_getinfo(h, i, v);
}

// --- curl_multi_setopt ----------------------------------------------------
static inline CURLMcode ferry_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) {
    return curl_multi_setopt(m, o, v);
}

// --- curl_share_setopt (FTPS shares TLS sessions between easy handles) -----
typedef void (*ferry_curl_lock_cb)(CURL *h, curl_lock_data data, curl_lock_access access, void *userptr);
typedef void (*ferry_curl_unlock_cb)(CURL *h, curl_lock_data data, void *userptr);

static inline CURLSHcode ferry_curl_share_setopt_long(CURLSH *s, CURLSHoption o, long v) {
    return curl_share_setopt(s, o, v);
}
static inline CURLSHcode ferry_curl_share_setopt_pointer(CURLSH *s, CURLSHoption o, void *v) {
    return curl_share_setopt(s, o, v);
}
static inline CURLSHcode ferry_curl_share_setopt_lock_cb(CURLSH *s, ferry_curl_lock_cb cb) {
    return curl_share_setopt(s, CURLSHOPT_LOCKFUNC, cb);
}
static inline CURLSHcode ferry_curl_share_setopt_unlock_cb(CURLSH *s, ferry_curl_unlock_cb cb) {
    return curl_share_setopt(s, CURLSHOPT_UNLOCKFUNC, cb);
}

// --- curl_version_info (CURLVERSION_NOW is a macro) --------------------------
static inline const curl_version_info_data *ferry_curl_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

// --- macros Swift cannot import --------------------------------------------
static const unsigned long FERRY_CURLAUTH_BASIC_OR_DIGEST = CURLAUTH_BASIC | CURLAUTH_DIGEST;
static const size_t FERRY_CURL_WRITEFUNC_PAUSE = CURL_WRITEFUNC_PAUSE;
static const size_t FERRY_CURL_READFUNC_ABORT = CURL_READFUNC_ABORT;
static const size_t FERRY_CURL_READFUNC_PAUSE = CURL_READFUNC_PAUSE;
static const int FERRY_CURL_XFERINFO_CONTINUE = 0;
#ifdef CURL_WRITEFUNC_ERROR
static const size_t FERRY_CURL_WRITEFUNC_ERROR = CURL_WRITEFUNC_ERROR;
#else
static const size_t FERRY_CURL_WRITEFUNC_ERROR = 0xFFFFFFFF;
#endif

#endif
