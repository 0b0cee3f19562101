import CMicroHTTPD

/// Per-connection state, created when a connection opens and released when it closes.
///
/// Lifetime: the `NOTIFY_CONNECTION` callback stores a +1 reference in
/// libmicrohttpd's socket context and releases it on close. Confined to the
/// connection's thread (see ``ServerCore``).
final class ConnectionContext {
    /// The raw request target of the request being read.
    var rawTarget: String?
    /// The request being read or answered.
    var exchange: RequestExchange?

    /// The context of `connection` (unretained; valid until it closes).
    static func of(_ connection: OpaquePointer) -> ConnectionContext? {
        guard let pointer = ferry_mhd_connection_socket_context(connection) else { return nil }
        return Unmanaged<ConnectionContext>.fromOpaque(pointer).takeUnretainedValue()
    }
}
