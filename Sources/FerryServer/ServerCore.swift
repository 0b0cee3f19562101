import CMicroHTTPD
import Dispatch
import Foundation
import Synchronization

/// The part of an ``HTTPServer`` that libmicrohttpd calls back into.
///
/// Threading model: the daemon runs with `MHD_USE_INTERNAL_POLLING_THREAD |
/// MHD_USE_THREAD_PER_CONNECTION`. One internal thread accepts; every
/// connection then has its own thread, and every callback for a request
/// (URI log, access handler, content reader, request completed) runs on
/// that thread. So per-connection state (``ConnectionContext``,
/// ``RequestExchange``, ``PacedBody``) is confined to one thread at a time
/// and has no locks, and a connection thread may block:
/// - waiting for one of the ``HTTPServer/Options/maxConnections`` slots
///   (``ConnectionSlots``) when its first request arrives;
/// - on the async handler: it starts a `Task` and waits on a semaphore
///   (the Task runs on Swift's cooperative pool, never on this thread, so
///   this cannot deadlock);
/// - in ``HTTPServer/Options/latency`` and rate pacing: it sleeps, slowing
///   only its own client;
/// - writing uploads to disk and sending to a slow client.
/// The price is one thread per open connection, bounded by
/// ``HTTPServer/Options/maxConnections`` plus
/// ``HTTPServer/Options/maxWaitingConnections``. (An epoll thread pool would need
/// suspend/resume plus timers for every pause, and a sleeping pool thread
/// would stall every connection it serves.)
///
/// `NOTIFY_CONNECTION` runs on the accepting thread, never on the
/// connection's: "started" before the connection's thread exists (thread
/// creation orders it before everything else on that connection), "closed"
/// in libmicrohttpd's cleanup pass after it has joined the connection's
/// thread (the join orders it after everything else), and also when
/// `MHD_stop_daemon` closes the connections still open. (Checked on 0.9.75
/// with a probe logging each callback's thread.) The accepting thread must
/// therefore never block: while it does, no connection is cleaned up and
/// no slot frees.
///
/// Stopping: ``beginStop()`` wakes every sleeper and abandons every waiting
/// handler call, so `MHD_stop_daemon` can join the connection threads promptly.
final class ServerCore: Sendable {
    let options: HTTPServer.Options
    let handler: @Sendable (HTTPRequest) async -> HTTPResponse
    let stop = StopSignal()
    let slots: ConnectionSlots
    let registry: ConnectionRegistry
    private let calls = Mutex<CallRegistry>(CallRegistry())
    private let lastLogLine = Mutex<String?>(nil)

    private struct CallRegistry {
        var stopping = false
        var calls: [ObjectIdentifier: HandlerCall] = [:]
    }

    /// What a callback tells libmicrohttpd to do with the connection.
    enum Action {
        /// Go on (`MHD_YES`).
        case proceed
        /// Close the connection without (further) answer (`MHD_NO`).
        case close

        var result: MHD_Result { self == .proceed ? .YES : .NO }
    }

    init(options: HTTPServer.Options, handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse) {
        self.options = options
        self.handler = handler
        self.slots = ConnectionSlots(
            limit: options.maxConnections, reserved: options.isTrusted == nil ? 0 : options.reservedSlots)
        self.registry = ConnectionRegistry(options: options)
    }

    /// Watches the connections that wait for a request head, on a thread of
    /// its own until the server stops: closes those past
    /// ``HTTPServer/Options/headerDeadline`` or
    /// ``HTTPServer/Options/requestLineDeadline``, and while the server is
    /// crowded those past the crowded bounds (see
    /// ``HTTPServer/Options/shedsIdleConnections``).
    func startDeadlineWatch() {
        let thread = Thread { [self] in
            var crowded = false
            // A pass every 250 ms, every 100 ms while crowded (room is made sooner).
            while stop.sleep(until: .now + .milliseconds(crowded ? 100 : 250)) {
                crowded = isCrowded
                for closure in registry.sweep(crowded: crowded) {
                    log(Self.closing(closure))
                }
            }
        }
        thread.name = "ferry.server.deadlines"
        thread.start()
    }

    /// Whether most connections or most slots are taken, or someone waits for a slot.
    var isCrowded: Bool {
        let (taken, waiting) = slots.usage
        let limit = Int(options.connectionLimit)
        return waiting > 0 || registry.count * 4 >= limit * 3
            || (options.maxConnections >= 4 && taken * 4 >= options.maxConnections * 3)
    }

    private static func closing(_ closure: ConnectionRegistry.Closure) -> String {
        "Connection\(closure.peer.map { " from \($0)" } ?? "") \(closure.reason); closing it"
    }

    // MARK: - Callbacks (each reached from a non-capturing C closure in HTTPServer+Daemon.swift)

    /// `MHD_OPTION_NOTIFY_CONNECTION`: a connection opens or closes (on the
    /// accepting thread, see above).
    func connectionNotified(
        _ connection: OpaquePointer?, socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>, started: Bool
    ) {
        if started {
            // +1 for the connection; released below when it closes.
            let context = ConnectionContext(
                socket: connection.map { ferry_mhd_connection_fd($0) } ?? -1,
                peer: connection.flatMap { Self.peer(of: $0) }.map { "\($0.host):\($0.port)" })
            socketContext.pointee = Unmanaged.passRetained(context).toOpaque()
            registry.opened(context)
            // On the accepting thread: shutdown(2) of another socket never blocks.
            if let closure = registry.makeRoomForNewcomer(context) { log(Self.closing(closure)) }
        } else if let pointer = socketContext.pointee {
            let context = Unmanaged<ConnectionContext>.fromOpaque(pointer).takeRetainedValue()
            registry.closed(context)
            context.exchange?.discardFiles()
            context.exchange = nil
            socketContext.pointee = nil
            if context.holdsSlot { slots.release() }
        }
    }

    /// `MHD_OPTION_URI_LOG_CALLBACK`: the raw request target, before
    /// libmicrohttpd splits and unescapes it.
    func uriReceived(_ uri: String, connection: OpaquePointer) {
        guard let context = ConnectionContext.of(connection) else { return }
        context.rawTarget = uri
        registry.requestLine(context)
    }

    /// The access handler: called once when the headers are in, once per
    /// piece of body, and once when the body is complete.
    func access(
        connection: OpaquePointer, url: String, method: String, version: String,
        uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>
    ) -> Action {
        guard let context = ConnectionContext.of(connection) else { return .close }
        guard let exchange = context.exchange else {
            // Closed for room or a deadline while the head was completing.
            guard registry.headArrived(context) else { return .close }
            let exchange = RequestExchange(
                method: method, target: context.rawTarget ?? url, version: version,
                headers: Self.headers(of: connection),
                remote: Self.peer(of: connection), options: options)
            let trusted = options.isTrusted?(exchange.request) ?? true
            if trusted { registry.trusted(context) }
            if !context.holdsSlot {
                guard takeSlot(for: connection, trusted: trusted) else {
                    exchange.discardFiles()
                    return .close
                }
                context.holdsSlot = true
                registry.tookSlot(context, trusted: trusted)
            }
            context.exchange = exchange
            // Answering now, before the body, skips "100 Continue" and makes
            // libmicrohttpd close the connection instead of reading the body.
            if let failure = exchange.failure { return respond(failure, to: exchange, on: connection) }
            return .proceed
        }
        if uploadDataSize.pointee > 0 {
            let count = uploadDataSize.pointee
            uploadDataSize.pointee = 0
            guard !exchange.responded else { return .proceed }
            exchange.consume(UnsafeRawBufferPointer(start: uploadData, count: count))
            guard let failure = exchange.failure else { return .proceed }
            // libmicrohttpd refuses a response while the body is still
            // arriving, and the rest may be gigabytes: the answer (413, 507,
            // bad multipart) goes straight to the socket now, the rest of the
            // body is read and dropped until the client stops, then the
            // connection closes.
            exchange.responded = true
            exchange.discardFiles()
            if context.socket >= 0, EarlyAnswer.send(failure, on: context.socket, wait: .seconds(5)) {
                EarlyAnswer.linger(on: context.socket, stop: stop)
            }
            return .close
        }
        guard !exchange.responded else { return .proceed }
        exchange.finishBody()
        if let failure = exchange.failure { return respond(failure, to: exchange, on: connection) }
        let received = ContinuousClock.now
        guard let response = runHandler(exchange.request) else { return .close }
        return respond(response, to: exchange, on: connection, receivedAt: received)
    }

    /// A connection's first request: waits for a free slot (on the
    /// connection's thread) up to ``HTTPServer/Options/slotWait``.
    ///
    /// - Returns: `false` when none freed in time; the connection is then
    ///   closed without an answer.
    private func takeSlot(for connection: OpaquePointer, trusted: Bool) -> Bool {
        // Every slot taken: while it waits, the connection idle the longest
        // (once it has idled a moment) makes room, one per waiting connection.
        let reclaim: (() -> Bool)? =
            options.shedsIdleConnections
            ? { [self] in
                guard let closure = registry.reclaimSlot(forTrusted: trusted) else { return false }
                log(Self.closing(closure))
                return true
            } : nil
        if slots.acquire(trusted: trusted, waitingUpTo: options.slotWait, whileWaiting: reclaim) { return true }
        if !stop.isStopped {
            let peer = Self.peer(of: connection).map { " from \($0.host):\($0.port)" } ?? ""
            log(
                "Connection\(peer) found all \(options.maxConnections) connection slots taken for "
                    + "\(options.slotWait); closing it")
        }
        return false
    }

    /// `MHD_OPTION_NOTIFY_COMPLETED`: the response went out (or the
    /// connection broke); the request's temporary files go.
    func requestCompleted(connection: OpaquePointer) {
        guard let context = ConnectionContext.of(connection) else { return }
        context.exchange?.discardFiles()
        context.exchange = nil
        context.rawTarget = nil
        registry.waiting(context)
    }

    /// `MHD_OPTION_EXTERNAL_LOGGER`.
    func log(_ line: String) {
        lastLogLine.withLock { $0 = line }
        options.logger?(line)
    }

    /// The last diagnostic from libmicrohttpd, for start errors.
    var lastLog: String? { lastLogLine.withLock { $0 } }

    // MARK: - Handler bridge

    /// Runs the async handler and blocks this connection thread until it returns.
    ///
    /// - Returns: The response, or `nil` when the server is stopping.
    private func runHandler(_ request: HTTPRequest) -> HTTPResponse? {
        let call = HandlerCall()
        let registered = calls.withLock { registry in
            guard !registry.stopping else { return false }
            registry.calls[ObjectIdentifier(call)] = call
            return true
        }
        guard registered else { return nil }
        defer { _ = calls.withLock { $0.calls.removeValue(forKey: ObjectIdentifier(call)) } }
        let handler = self.handler
        call.start(Task { call.complete(await handler(request)) })
        return call.wait()
    }

    /// Wakes every sleeping connection thread and abandons every running
    /// handler (its Task is cancelled; its result will be dropped).
    func beginStop() {
        stop.trigger()
        slots.stop()
        let pending = calls.withLock { registry in
            registry.stopping = true
            return Array(registry.calls.values)
        }
        for call in pending { call.abandon() }
    }

    /// Queues `response`, no sooner than ``HTTPServer/Options/latency`` after
    /// the request was complete (`receivedAt`): the handler's own time counts
    /// towards the latency, as a card's does, instead of adding to it.
    private func respond(
        _ response: HTTPResponse, to exchange: RequestExchange, on connection: OpaquePointer,
        receivedAt received: ContinuousClock.Instant = .now
    ) -> Action {
        exchange.responded = true
        if options.latency > .zero {
            guard stop.sleep(until: received + options.latency) else { return .close }
        }
        let writer = ResponseWriter(
            method: exchange.method, requestHeaders: exchange.headers, bytesPerSecond: options.bytesPerSecond,
            stop: stop)
        return writer.queue(response, on: connection) ? .proceed : .close
    }

    // MARK: - Reading the connection

    private static func headers(of connection: OpaquePointer) -> HTTPHeaders {
        var fields: [HTTPHeaders.Field] = []
        withUnsafeMutablePointer(to: &fields) { pointer in
            _ = MHD_get_connection_values_n(
                connection, .HEADER_KIND,
                { context, _, key, keySize, value, valueSize in
                    let fields = context!.assumingMemoryBound(to: [HTTPHeaders.Field].self)
                    let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
                    let value = String(decoding: UnsafeRawBufferPointer(start: value, count: valueSize), as: UTF8.self)
                    fields.pointee.append(HTTPHeaders.Field(name: name, value: value))
                    return .YES
                }, pointer)
        }
        return HTTPHeaders(fields)
    }

    private static func peer(of connection: OpaquePointer) -> (host: String, port: Int)? {
        guard let address = ferry_mhd_connection_client_address(connection) else { return nil }
        return SocketAddress(address)?.hostAndPort
    }
}
