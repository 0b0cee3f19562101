import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP proxy on 127.0.0.1 for fault tests: forwards to `upstreamPort`, and for
/// the first `faultyConnections` connections cuts the connection (RST) after a
/// random number of response bytes in `cutAfter`. It also records the highest
/// number of connections open at once.
public final class FaultProxy: Sendable {
    public let port: Int
    private let listener: Int32
    private struct State {
        var connections = 0
        var open = 0
        var maxOpen = 0
        var cuts = 0
        var rng: UInt64
        var stopped = false
        var bytesFromServer = 0
    }
    private let state: Mutex<State>
    private let upstreamPort: Int
    private let faultyConnections: Int
    private let cutAfter: ClosedRange<Int>

    public init(upstreamPort: Int, faultyConnections: Int = 0, cutAfter: ClosedRange<Int> = 1...1, seed: UInt64 = 7)
        throws
    {
        self.upstreamPort = upstreamPort
        self.faultyConnections = faultyConnections
        self.cutAfter = cutAfter
        state = Mutex(State(rng: seed | 1))
        let (fd, boundPort) = try Loopback.listen(backlog: 64, what: "proxy")
        port = boundPort
        listener = fd
        let t = Thread { [self] in self.acceptLoop() }
        t.start()
    }

    deinit { stop() }

    public func stop() {
        let first = state.withLock { s -> Bool in
            defer { s.stopped = true }
            return !s.stopped
        }
        if first {
            // Only wakes the accept loop, which closes the socket itself: closed here, its
            // number could go to the next test's listener while the loop still accepts on it.
            shutdown(listener, Int32(SHUT_RDWR))
        }
    }

    /// Most connections that were open at the same time.
    public var maxConcurrentConnections: Int { state.withLock { $0.maxOpen } }
    /// Connections accepted so far.
    public var connectionCount: Int { state.withLock { $0.connections } }
    /// Bytes the server sent to clients so far (what a test proves "nothing transferred" with).
    public var bytesFromServer: Int { state.withLock { $0.bytesFromServer } }
    /// Connections cut on purpose so far.
    public var cutCount: Int { state.withLock { $0.cuts } }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if state.withLock({ $0.stopped }) {
                    close(listener)
                    return
                }
                continue
            }
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
    }

    private func serve(_ client: Int32, cutAfter limit: Int?) {
        defer { state.withLock { $0.open -= 1 } }
        guard let upstream = Loopback.connect(port: upstreamPort) else {
            close(client)
            return
        }
        // Client to server on its own thread; server to client here, counting bytes.
        let up = Thread {
            var buf = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(client, &buf, buf.count)
                if n <= 0 { break }
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
