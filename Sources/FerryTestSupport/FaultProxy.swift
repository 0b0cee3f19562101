import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP proxy on 127.0.0.1 for fault tests: forwards to `upstreamPort`, and for
/// the first `faultyConnections` connections cuts the connection (RST) after a
/// random number of response bytes in `cutAfter`. It also records the highest
/// number of connections open at once. With `requestDelay`, every piece of a
/// request waits that long before it goes on: a server far away.
public final class FaultProxy: LoopbackHTTPServer {
    public var port: Int { listener.port }
    private let listener: ProxyListener
    private struct State {
        var connections = 0
        var open = 0
        var maxOpen = 0
        var cuts = 0
        var rng: UInt64
        var bytesFromServer = 0
    }
    private let shared: Shared

    public init(
        upstreamPort: Int, faultyConnections: Int = 0, cutAfter: ClosedRange<Int> = 1...1, seed: UInt64 = 7,
        requestDelay: Duration = .zero
    ) throws {
        let shared = Shared(
            rng: seed | 1, upstreamPort: upstreamPort, faultyConnections: faultyConnections, cutAfter: cutAfter,
            requestDelay: requestDelay)
        self.shared = shared
        listener = try ProxyListener(what: "proxy", backlog: 64) { client in shared.accepted(client) }
    }

    deinit { stop() }

    public func stop() { listener.stop() }

    /// Most connections that were open at the same time.
    public var maxConcurrentConnections: Int { shared.state.withLock { $0.maxOpen } }
    /// Connections accepted so far.
    public var connectionCount: Int { shared.state.withLock { $0.connections } }
    /// Bytes the server sent to clients so far (what a test proves "nothing transferred" with).
    public var bytesFromServer: Int { shared.state.withLock { $0.bytesFromServer } }
    /// Connections cut on purpose so far.
    public var cutCount: Int { shared.state.withLock { $0.cuts } }

    /// What the connections' threads share.
    private final class Shared: Sendable {
        let state: Mutex<State>
        let upstreamPort: Int
        let faultyConnections: Int
        let cutAfter: ClosedRange<Int>
        let requestDelay: Duration

        init(
            rng: UInt64, upstreamPort: Int, faultyConnections: Int, cutAfter: ClosedRange<Int>,
            requestDelay: Duration
        ) {
            state = Mutex(State(rng: rng))
            self.upstreamPort = upstreamPort
            self.faultyConnections = faultyConnections
            self.cutAfter = cutAfter
            self.requestDelay = requestDelay
        }

        func accepted(_ client: Int32) {
            let limit: Int? = state.withLock { s in
                s.connections += 1
                s.open += 1
                s.maxOpen = max(s.maxOpen, s.open)
                guard s.connections <= faultyConnections else { return nil }
                s.rng = s.rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let span = UInt64(cutAfter.upperBound - cutAfter.lowerBound + 1)
                return cutAfter.lowerBound + Int((s.rng >> 33) % span)
            }
            let t = Thread { [self] in self.serve(client, cutAfter: limit) }
            t.start()
        }

        private func serve(_ client: Int32, cutAfter limit: Int?) {
            defer { state.withLock { $0.open -= 1 } }
            guard let upstream = Loopback.connect(port: upstreamPort) else {
                close(client)
                return
            }
            // Client to server on its own thread; server to client here, counting bytes.
            let delay = requestDelay
            let up = Thread {
                var buf = [UInt8](repeating: 0, count: 65536)
                while true {
                    let n = read(client, &buf, buf.count)
                    if n <= 0 { break }
                    if delay > .zero { Thread.sleep(forTimeInterval: delay / .seconds(1)) }
                    if send(upstream, buf, n, Int32(MSG_NOSIGNAL)) != n { break }
                }
                shutdown(upstream, Int32(SHUT_WR))
            }
            up.start()
            var buf = [UInt8](repeating: 0, count: 65536)
            var sent = 0
            while true {
                let n = read(upstream, &buf, buf.count)
                if n <= 0 { break }
                var count = n
                var cut = false
                if let limit, sent + n >= limit {
                    count = max(0, limit - sent)
                    cut = true
                }
                if count > 0 && send(client, buf, count, Int32(MSG_NOSIGNAL)) != count { break }
                sent += count
                state.withLock { $0.bytesFromServer += count }
                if cut {
                    state.withLock { $0.cuts += 1 }
                    // RST instead of FIN: SO_LINGER with zero timeout.
                    var lg = linger(l_onoff: 1, l_linger: 0)
                    setsockopt(client, SOL_SOCKET, SO_LINGER, &lg, socklen_t(MemoryLayout<linger>.size))
                    break
                }
            }
            shutdown(client, Int32(SHUT_RDWR))
            close(client)
            shutdown(upstream, Int32(SHUT_RDWR))
            close(upstream)
        }
    }
}
