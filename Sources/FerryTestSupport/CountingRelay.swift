import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP relay on 127.0.0.1 that passes every byte through untouched and
/// counts them: the evidence that a connection went this way (an SSH jump
/// host's leg, say) when the server's own log does not say how much it carried.
/// With `downBytesPerSecond` (`upBytesPerSecond`), the server-to-client
/// (client-to-server) direction is paced to that rate, so that a test can stop
/// a client mid-file.
public final class CountingRelay: Sendable {
    public var port: Int { listener.port }
    private let listener: ProxyListener
    private let core: Core

    public init(upstreamPort: Int, downBytesPerSecond: Int? = nil, upBytesPerSecond: Int? = nil) throws {
        let core = Core(upstreamPort: upstreamPort, downRate: downBytesPerSecond, upRate: upBytesPerSecond)
        self.core = core
        listener = try ProxyListener(what: "counting relay") { client in
            Thread { core.relay(client) }.start()
        }
    }

    deinit { stop() }

    public func stop() { listener.stop() }

    /// Bytes passed from the upstream server to clients so far.
    public var bytesDown: Int { core.down.load(ordering: .acquiring) }
    /// Bytes passed from clients to the upstream server so far.
    public var bytesUp: Int { core.up.load(ordering: .acquiring) }
    /// Connections accepted so far.
    public var connections: Int { core.connections.load(ordering: .acquiring) }

    private final class Core: Sendable {
        let upstreamPort: Int
        let down = Atomic<Int>(0)
        let up = Atomic<Int>(0)
        let connections = Atomic<Int>(0)
        let downRate: Int?
        let upRate: Int?

        init(upstreamPort: Int, downRate: Int?, upRate: Int?) {
            self.upstreamPort = upstreamPort
            self.downRate = downRate
            self.upRate = upRate
        }

        func relay(_ client: Int32) {
            connections.add(1, ordering: .acquiringAndReleasing)
            guard let upstream = Loopback.connect(port: upstreamPort) else {
                close(client)
                return
            }
            let upDone = DispatchSemaphore(value: 0)
            let toServer = Thread { [self] in
                pump(from: client, to: upstream, count: up, rate: upRate)
                shutdown(upstream, Int32(SHUT_WR))
                upDone.signal()
            }
            toServer.start()
            pump(from: upstream, to: client, count: down, rate: downRate)
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(upstream, Int32(SHUT_RDWR))
            // Closed only when the other direction has ended: a number closed while
            // it still reads could go to another socket.
            upDone.wait()
            close(client)
            close(upstream)
        }

        /// Copies until either side ends; with a `rate`, reads at most 16 KiB at a
        /// time and sleeps whenever the bytes passed run ahead of it.
        private func pump(from: Int32, to: Int32, count: borrowing Atomic<Int>, rate: Int? = nil) {
            var buf = [UInt8](repeating: 0, count: rate == nil ? 65536 : 16384)
            let start = ContinuousClock.now
            var passed = 0
            while true {
                let n = read(from, &buf, buf.count)
                if n <= 0 { return }
                if send(to, buf, n, Int32(MSG_NOSIGNAL)) != n { return }
                count.add(n, ordering: .acquiringAndReleasing)
                passed += n
                if let rate, rate > 0 {
                    let due = Double(passed) / Double(rate)
                    let elapsed = (ContinuousClock.now - start).components
                    let ahead = due - (Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
                    if ahead > 0 { usleep(UInt32(ahead * 1_000_000)) }
                }
            }
        }
    }
}
