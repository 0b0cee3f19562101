import CMicroHTTPD

/// Per-connection state, created when a connection opens and released when it closes.
///
/// Lifetime: the `NOTIFY_CONNECTION` callback stores a +1 reference in
/// libmicrohttpd's socket context and releases it on close. Used by one
/// thread at a time: the accepting thread when the connection opens and
/// closes, the connection's own thread in between (see ``ServerCore``).
final class ConnectionContext {
    /// Whether this connection holds one of the server's connection slots
    /// (taken at its first request, given back when it closes).
    var holdsSlot = false
    /// The raw request target of the request being read.
    var rawTarget: String?
    /// The request being read or answered.
    var exchange: RequestExchange?
    /// The connection's socket and peer ("host:port"), for ``ConnectionRegistry``.
    let socket: Int32
    let peer: String?

    init(socket: Int32, peer: String?) {
        self.socket = socket
        self.peer = peer
    }

    /// The context of `connection` (unretained; valid until it closes).
    static func of(_ connection: OpaquePointer) -> ConnectionContext? {
        guard let pointer = ferry_mhd_connection_socket_context(connection) else { return nil }
        return Unmanaged<ConnectionContext>.fromOpaque(pointer).takeUnretainedValue()
    }
}
