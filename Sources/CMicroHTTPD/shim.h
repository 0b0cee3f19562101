// Typed wrappers for libmicrohttpd's variadic and macro APIs, so Swift never
// calls a C variadic function. Prefixed `ferry_mhd_` (the CNIOLinux /
// CFURLSessionInterface pattern, as in CCurl/shim.h).
#ifndef FERRY_CMICROHTTPD_SHIM_H
#define FERRY_CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

// --- logging ---------------------------------------------------------------
// libmicrohttpd logs through a printf-style callback taking a va_list, which
// Swift cannot format portably. This trampoline formats the message in C and
// hands Swift a plain string.
typedef void (*ferry_mhd_log_cb)(void *cls, const char *message);

typedef struct ferry_mhd_logger {
    ferry_mhd_log_cb callback;
    void *cls;
} ferry_mhd_logger;

static inline void ferry_mhd_log_trampoline(void *cls, const char *fmt, va_list ap) {
    const ferry_mhd_logger *logger = (const ferry_mhd_logger *)cls;
    char message[512];
    vsnprintf(message, sizeof message, fmt, ap);
    // libmicrohttpd messages end in a newline; the Swift side gets a line.
    size_t n = 0;
    while (message[n] != '\0') n++;
    while (n > 0 && (message[n - 1] == '\n' || message[n - 1] == '\r')) message[--n] = '\0';
    if (logger != NULL && logger->callback != NULL) logger->callback(logger->cls, message);
}

// --- MHD_start_daemon ------------------------------------------------------
typedef void *(*ferry_mhd_uri_log_cb)(void *cls, const char *uri, struct MHD_Connection *connection);

/// Everything `ferry_mhd_start_daemon` passes as daemon options. Every field
/// is always passed (0 keeps libmicrohttpd's meaning of "no limit" where it
/// has one), so the variadic call has one fixed shape.
typedef struct ferry_mhd_daemon_config {
    /// `MHD_FLAG` bits.
    unsigned int flags;
    /// Address to bind, port included (`MHD_OPTION_SOCK_ADDR`). Required.
    const struct sockaddr *bind_address;
    /// `MHD_OPTION_CONNECTION_LIMIT`: connections beyond it are accepted and
    /// closed at once. Ferry passes its slot count plus room for connections
    /// waiting for a slot (the slots themselves are counted in Swift).
    unsigned int connection_limit;
    /// `MHD_OPTION_PER_IP_CONNECTION_LIMIT`; 0 = unlimited.
    unsigned int per_ip_connection_limit;
    /// `MHD_OPTION_CONNECTION_TIMEOUT` in seconds of inactivity; 0 = never.
    unsigned int connection_timeout;
    /// `MHD_OPTION_CONNECTION_MEMORY_LIMIT`: per-connection pool that holds
    /// the request line, the headers and the read buffer.
    size_t connection_memory_limit;
    /// `MHD_OPTION_THREAD_STACK_SIZE`; 0 = the system default.
    size_t thread_stack_size;
    MHD_AccessHandlerCallback access_handler;
    void *access_handler_cls;
    MHD_RequestCompletedCallback request_completed;
    void *request_completed_cls;
    MHD_NotifyConnectionCallback notify_connection;
    void *notify_connection_cls;
    ferry_mhd_uri_log_cb uri_log;
    void *uri_log_cls;
    /// Must stay valid until `MHD_stop_daemon` returns.
    const ferry_mhd_logger *logger;
} ferry_mhd_daemon_config;

static inline struct MHD_Daemon *ferry_mhd_start_daemon(const ferry_mhd_daemon_config *c) {
    // The port argument is ignored when MHD_OPTION_SOCK_ADDR is given.
    return MHD_start_daemon(
        c->flags, 0, NULL, NULL, c->access_handler, c->access_handler_cls,
        // The logger goes first so that it also receives messages about later options.
        MHD_OPTION_EXTERNAL_LOGGER, ferry_mhd_log_trampoline, (void *)c->logger,
        MHD_OPTION_SOCK_ADDR, c->bind_address,
        MHD_OPTION_CONNECTION_LIMIT, c->connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, c->per_ip_connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, c->connection_timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, c->connection_memory_limit,
        MHD_OPTION_THREAD_STACK_SIZE, c->thread_stack_size,
        MHD_OPTION_NOTIFY_COMPLETED, c->request_completed, c->request_completed_cls,
        MHD_OPTION_NOTIFY_CONNECTION, c->notify_connection, c->notify_connection_cls,
        MHD_OPTION_URI_LOG_CALLBACK, c->uri_log, c->uri_log_cls,
        MHD_OPTION_END);
}

// --- MHD_get_daemon_info / MHD_get_connection_info (variadic) -------------
/// The port the daemon is bound to (useful after binding port 0), or 0.
static inline uint16_t ferry_mhd_daemon_bound_port(struct MHD_Daemon *d) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    return info != NULL ? info->port : 0;
}

/// The number of open connections.
static inline unsigned int ferry_mhd_daemon_current_connections(struct MHD_Daemon *d) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info != NULL ? info->num_connections : 0;
}

/// The peer's address, or NULL.
static inline const struct sockaddr *ferry_mhd_connection_client_address(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info != NULL ? info->client_addr : NULL;
}

/// The connection's socket, or -1.
static inline int ferry_mhd_connection_fd(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info != NULL ? (int)info->connect_fd : -1;
}

/// The pointer stored by the MHD_OPTION_NOTIFY_CONNECTION callback, or NULL.
static inline void *ferry_mhd_connection_socket_context(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info != NULL ? info->socket_context : NULL;
}

// --- TCP_INFO ------------------------------------------------------------------
/// Payload bytes the connection has received so far (`tcpi_bytes_received` of
/// Linux's `struct tcp_info`, at its fixed offset 128 since Linux 4.1), or -1
/// when the kernel does not say. Read into a plain buffer so the glibc and Linux
/// definitions of `struct tcp_info` never meet.
static inline int64_t ferry_tcp_bytes_received(int fd) {
#ifdef __linux__
    unsigned char info[256];
    socklen_t length = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, 11 /* TCP_INFO */, info, &length) != 0 || length < 136) return -1;
    uint64_t value;
    memcpy(&value, info + 128, sizeof value);
    return (int64_t)value;
#else
    (void)fd;
    return -1;
#endif
}

// --- macros Swift cannot import ---------------------------------------------
static const ssize_t FERRY_MHD_CONTENT_READER_END_OF_STREAM = MHD_CONTENT_READER_END_OF_STREAM;
static const ssize_t FERRY_MHD_CONTENT_READER_END_WITH_ERROR = MHD_CONTENT_READER_END_WITH_ERROR;

#endif
