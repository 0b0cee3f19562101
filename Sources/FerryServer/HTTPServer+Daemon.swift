import CMicroHTTPD
import Foundation

extension HTTPServer {
    /// What a running daemon needs kept alive, and who releases it.
    struct StartedDaemon {
        var daemon: OpaquePointer
        /// The logger struct libmicrohttpd points to; deallocated after `MHD_stop_daemon`.
        var logger: UnsafeMutablePointer<ferry_mhd_logger>
        /// One retain on the core held for the daemon's callbacks; released
        /// after `MHD_stop_daemon` has joined every thread.
        var core: Unmanaged<ServerCore>
    }

    /// Starts libmicrohttpd with every callback pointing at `core`.
    ///
    /// The C callbacks below capture nothing: each recovers the core from
    /// its context pointer, which is the +1 reference in `StartedDaemon.core`.
    static func startDaemon(
        core: ServerCore, address: SocketAddress, display: String
    ) throws(HTTPServerError) -> StartedDaemon {
        let options = core.options
        let retained = Unmanaged.passRetained(core)
        let context = retained.toOpaque()
        let logger = UnsafeMutablePointer<ferry_mhd_logger>.allocate(capacity: 1)
        logger.initialize(
            to: ferry_mhd_logger(
                callback: { context, message in
                    guard let context, let message else { return }
                    Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue().log(String(cString: message))
                },
                cls: context))

        // A thread per connection (see ServerCore for why), poll() instead of
        // select() so descriptors above FD_SETSIZE work, an inter-thread
        // channel so stop() wakes idle connections at once.
        var flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_THREAD_PER_CONNECTION.rawValue
            | MHD_USE_POLL.rawValue | MHD_USE_ITC.rawValue | MHD_USE_ERROR_LOG.rawValue
        if address.isIPv6 {
            // `::` listens on IPv4 too; a specific IPv6 address only on IPv6.
            let any = address.hostAndPort?.host == "::"
            flags |= any ? MHD_USE_DUAL_STACK.rawValue : MHD_USE_IPv6.rawValue
        }

        let daemon = address.withSockAddr { sockaddr in
            var config = ferry_mhd_daemon_config(
                flags: flags,
                bind_address: sockaddr,
                connection_limit: options.acceptLimit,
                per_ip_connection_limit: UInt32(clamping: options.maxConnectionsPerIP),
                connection_timeout: options.connectionTimeoutSeconds,
                connection_memory_limit: options.connectionMemoryLimit,
                thread_stack_size: 0,
                access_handler: { context, connection, url, method, version, uploadData, uploadDataSize, _ in
                    guard let context, let connection, let uploadDataSize else { return .NO }
                    let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
                    return core.access(
                        connection: connection, url: url.map { String(cString: $0) } ?? "/",
                        method: method.map { String(cString: $0) } ?? "GET",
                        version: version.map { String(cString: $0) } ?? "HTTP/1.1",
                        uploadData: uploadData, uploadDataSize: uploadDataSize
                    ).result
                },
                access_handler_cls: context,
                request_completed: { context, connection, _, _ in
                    guard let context, let connection else { return }
                    Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue().requestCompleted(
                        connection: connection)
                },
                request_completed_cls: context,
                notify_connection: { context, connection, socketContext, code in
                    guard let context, let socketContext else { return }
                    Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue().connectionNotified(
                        connection, socketContext: socketContext, started: code == .CONNECTION_NOTIFY_STARTED)
                },
                notify_connection_cls: context,
                uri_log: { context, uri, connection in
                    guard let context, let uri, let connection else { return nil }
                    Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue().uriReceived(
                        String(cString: uri), connection: connection)
                    return nil
                },
                uri_log_cls: context,
                logger: logger)
            return ferry_mhd_start_daemon(&config)
        }
        guard let daemon else {
            let reason = core.lastLog ?? String(cString: strerror(errno))
            logger.deallocate()
            retained.release()
            throw .startFailed(display, reason)
        }
        return StartedDaemon(daemon: daemon, logger: logger, core: retained)
    }
}
