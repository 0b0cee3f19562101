import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP proxy on 127.0.0.1 that gives every connection one fault, chosen at
/// random (seeded, so a failure can be replayed): pass it through untouched,
/// reset it (RST) after a random number of response bytes, end it early (FIN,
/// a truncated response), stall it (stop forwarding for `stall`, then reset),
/// or cut the request side after a random number of request bytes (an upload
/// that dies on the way).
///
/// Clients keep connections alive, so a fault per connection would spare most
/// requests: the proxy adds `Connection: close` to the first request of every
/// connection, and the server ends the connection after answering it. Every
/// request then gets a connection, and a fault, of its own.
public final class ChaosProxy: Sendable {
    public enum Fault: String, CaseIterable, Sendable {
        case none, reset, truncate, stall, cutRequest
    }

    public var port: Int { listener.port }
    private let listener: ProxyListener
    private let core: Core

    /// - Parameters:
    ///   - upstreamPort: Where to forward.
    ///   - seed: The random seed.
    ///   - maxOffset: Faults strike within the first `maxOffset` bytes.
    ///   - stall: How long a stalled connection stays silent before it is reset.
    public init(upstreamPort: Int, seed: UInt64, maxOffset: Int, stall: Duration = .seconds(3)) throws {
        let core = Core(upstreamPort: upstreamPort, seed: seed, maxOffset: maxOffset, stall: stall)
        self.core = core
        listener = try ProxyListener(what: "chaos proxy") { client in core.accepted(client) }
    }

    deinit { stop() }

    public func stop() { listener.stop() }

    /// How many connections got each fault.
    public var counts: [Fault: Int] { core.state.withLock { $0.counts } }

    /// `none 23, reset 9, ...` in a fixed order.
    public static func describe(_ counts: [Fault: Int]) -> String {
        Fault.allCases.map { "\($0.rawValue) \(counts[$0, default: 0])" }.joined(separator: ", ")
    }

    /// What the connections' threads share; they hold this, not the proxy.
    private final class Core: Sendable {
        struct State {
            var rng: UInt64
            var counts: [Fault: Int] = [:]
        }
        let state: Mutex<State>
        let upstreamPort: Int
        let stall: Duration
        let maxOffset: Int

        init(upstreamPort: Int, seed: UInt64, maxOffset: Int, stall: Duration) {
            self.upstreamPort = upstreamPort
            self.stall = stall
            self.maxOffset = maxOffset
            state = Mutex(State(rng: seed &* 2 &+ 1))
        }

        private func next(_ s: inout State) -> UInt64 {
            s.rng = s.rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return s.rng >> 33
        }

        func accepted(_ client: Int32) {
            let (fault, offset) = state.withLock { s -> (Fault, Int) in
                // Half the connections pass; the other half share the four faults.
                let roll = next(&s) % 8
                let fault: Fault = roll < 4 ? .none : Fault.allCases[Int(roll) - 3]
                s.counts[fault, default: 0] += 1
                return (fault, Int(next(&s) % UInt64(maxOffset)))
            }
            let t = Thread { [self] in self.serve(client, fault: fault, offset: offset) }
            t.start()
        }

        private func reset(_ fd: Int32) {
            var lg = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, socklen_t(MemoryLayout<linger>.size))
        }

        private func serve(_ client: Int32, fault: Fault, offset: Int) {
            guard let upstream = Loopback.connect(port: upstreamPort) else {
                close(client)
                return
            }
            let requestDone = Atomic<Bool>(false)
            let up = Thread { [self] in
                var buf = [UInt8](repeating: 0, count: 65536)
                var sent = 0
                var first = true
                while true {
                    var n = read(client, &buf, 65536 - 32)
                    if n <= 0 { break }
                    if first, let lf = buf[0..<n].firstIndex(of: 0x0A) {
                        let header = Array("Connection: close\r\n".utf8)
                        buf.replaceSubrange((lf + 1)..<(lf + 1), with: header)
                        n += header.count
                        first = false
                    }
                    var count = n
                    if fault == .cutRequest, sent + n >= offset {
                        count = max(0, offset - sent)
                        if count > 0 { _ = send(upstream, buf, count, Int32(MSG_NOSIGNAL)) }
                        reset(client)
                        reset(upstream)
                        shutdown(client, Int32(SHUT_RDWR))
                        shutdown(upstream, Int32(SHUT_RDWR))
                        break
                    }
                    if send(upstream, buf, count, Int32(MSG_NOSIGNAL)) != count { break }
                    sent += count
                }
                shutdown(upstream, Int32(SHUT_WR))
                requestDone.store(true, ordering: .releasing)
            }
            up.start()
            var buf = [UInt8](repeating: 0, count: 65536)
            var sent = 0
            loop: while true {
                let n = read(upstream, &buf, buf.count)
                if n <= 0 { break }
                var count = n
                var strike = false
                if fault == .reset || fault == .truncate || fault == .stall, sent + n >= offset {
                    count = max(0, offset - sent)
                    strike = true
                }
                if count > 0 && send(client, buf, count, Int32(MSG_NOSIGNAL)) != count { break }
                sent += count
                if strike {
                    switch fault {
                    case .reset: reset(client)
                    case .truncate: break  // FIN: the client sees a short response
                    case .stall:
                        let (seconds, attoseconds) = stall.components
                        usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
                        reset(client)
                    default: break
                    }
                    break loop
                }
            }
            shutdown(client, Int32(SHUT_RDWR))
            close(client)
            shutdown(upstream, Int32(SHUT_RDWR))
            close(upstream)
            _ = requestDone.load(ordering: .acquiring)
        }
    }
}
