import CMicroHTTPD
import Foundation
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd that hands each complete request to
/// an async handler.
///
/// It serves both `ferry card` (the FlashAir emulator) and `ferry serve`
/// (the browser UI). libmicrohttpd parses requests, keeps connections alive
/// and sends files with `sendfile`; this type adds bodies spooled to disk,
/// multipart uploads, `Range` on files, connection limits and a slow-card
/// mode (latency, bytes per second).
///
/// ```swift
/// let server = HTTPServer(port: 0, options: .init()) { request in
///     .text("hello \(request.path)")
/// }
/// try server.start()
/// print(server.port)  // the port the system picked
/// server.stop()
/// ```
///
/// Each connection has its own thread (see `ServerCore` for the threading
/// model); the handler runs as a `Task` on the cooperative pool while that
/// thread waits. ``stop()`` cancels running handlers and closes every
/// connection.
public final class HTTPServer: Sendable {
    /// The host to bind: an IPv4 or IPv6 address, or a name.
    public let host: String
    /// The options.
    public let options: Options
    private let requestedPort: Int
    private let core: ServerCore
    private let state = Mutex(RunState())

    /// The daemon handle and what must live as long as it.
    ///
    /// `daemon` and `logger` are only touched with `state` locked; the daemon
    /// itself is thread-safe for the calls made on it.
    private struct RunState {
        enum Phase { case idle, running, stopped }
        var phase = Phase.idle
        var daemon: OpaquePointer?
        var logger: UnsafeMutablePointer<ferry_mhd_logger>?
        var core: Unmanaged<ServerCore>?
        var port = 0
    }

    /// Creates a server; nothing listens until ``start()``.
    ///
    /// - Parameters:
    ///   - host: The address to bind: `127.0.0.1` (the default), `::1`,
    ///     `0.0.0.0`, `::` (IPv6 and IPv4), or a name such as `localhost`.
    ///   - port: The port; 0 lets the system pick a free one (read ``port``).
    ///   - options: Limits and slow-card emulation.
    ///   - handler: Answers each request. It runs once per request, after
    ///     the whole body has arrived; it is cancelled when the server stops.
    public init(
        host: String = "127.0.0.1", port: Int = 0, options: Options = Options(),
        handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse
    ) {
        self.host = host
        self.requestedPort = port
        self.options = options
        self.core = ServerCore(options: options, handler: handler)
    }

    deinit {
        stop()
    }

    /// The port the server listens on (the system's pick when created with
    /// port 0), or the requested port before ``start()``.
    public var port: Int {
        state.withLock { $0.phase == .running ? $0.port : requestedPort }
    }

    /// `http://HOST:PORT` for this server, with IPv6 hosts in brackets.
    public var baseURL: String {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        return bare.contains(":") ? "http://[\(bare)]:\(port)" : "http://\(bare):\(port)"
    }

    /// Binds and starts serving.
    ///
    /// - Throws: ``HTTPServerError``: an invalid address or option, the port
    ///   in use (`startFailed` with libmicrohttpd's reason), or a second start.
    public func start() throws(HTTPServerError) {
        try options.validate()
        let address = try SocketAddress.resolve(host: host, port: requestedPort)
        let core = self.core
        let display = "\(host):\(requestedPort)"
        try state.withLock { (state: inout RunState) throws(HTTPServerError) in
            guard state.phase == .idle else { throw .alreadyStarted(display) }
            let started = try Self.startDaemon(core: core, address: address, display: display)
            state.daemon = started.daemon
            state.logger = started.logger
            state.core = started.core
            state.port = Int(ferry_mhd_daemon_bound_port(started.daemon))
            state.phase = .running
        }
        core.startDeadlineWatch()
    }

    /// Stops listening, cancels running handlers, closes every connection
    /// and waits for their threads to end. Safe to call more than once.
    public func stop() {
        let stopped = state.withLock { state -> RunState? in
            guard state.phase == .running else {
                state.phase = .stopped
                return nil
            }
            let running = state
            state.phase = .stopped
            state.daemon = nil
            state.logger = nil
            state.core = nil
            return running
        }
        guard let stopped, let daemon = stopped.daemon else { return }
        core.beginStop()
        // Joins the accepting thread and every connection thread: no callback runs after this.
        MHD_stop_daemon(daemon)
        stopped.logger?.deallocate()
        stopped.core?.release()
    }

    /// Slots taken and connections waiting for one (see
    /// ``Options/maxConnections``).
    var slotUsage: (taken: Int, waiting: Int) { core.slots.usage }

    /// The number of open connections, including those waiting for a slot
    /// (0 when not running).
    public var connectionCount: Int {
        state.withLock { state in
            guard state.phase == .running, let daemon = state.daemon else { return 0 }
            return Int(ferry_mhd_daemon_current_connections(daemon))
        }
    }
}
