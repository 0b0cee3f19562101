import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The one accept loop of the test proxies (``FaultProxy``, ``ChaosProxy``,
/// ``FTPChaosProxy``): a listener on a free 127.0.0.1 port and a thread that
/// accepts on it and hands each connection to `accepted` (on the loop's thread:
/// the proxy starts the connection's own thread), until ``stop()``.
///
/// Stopping only wakes the loop (`shutdown`), and the loop closes the socket
/// itself: closed from another thread, its number could go to the next test's
/// listener while the loop still accepts on it.
public final class ProxyListener: Sendable {
    public let port: Int
    private let loop: Loop

    /// What the loop's thread holds: not the listener object, so releasing it stops the loop.
    private final class Loop: Sendable {
        let fd: Int32
        let stopped = Atomic<Bool>(false)
        let ended = Atomic<Bool>(false)

        init(fd: Int32) { self.fd = fd }

        func run(_ accepted: @Sendable (Int32) -> Void) {
            while true {
                let client = accept(fd, nil, nil)
                if stopped.load(ordering: .acquiring) {
                    if client >= 0 { close(client) }
                    close(fd)
                    ended.store(true, ordering: .releasing)
                    return
                }
                if client >= 0 { accepted(client) }
            }
        }
    }

    /// Listens (`what` names it in an error) and starts the loop.
    public init(what: String, backlog: Int32 = 128, accepted: @escaping @Sendable (Int32) -> Void) throws {
        let (fd, port) = try Loopback.listen(backlog: backlog, what: what)
        self.port = port
        let loop = Loop(fd: fd)
        self.loop = loop
        let thread = Thread { loop.run(accepted) }
        thread.start()
    }

    deinit { stop() }

    /// Stops accepting; returns once the loop has closed the listener (at most about a second).
    public func stop() {
        guard !loop.stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(loop.fd, Int32(SHUT_RDWR))
        let deadline = ContinuousClock.now + .seconds(1)
        while !loop.ended.load(ordering: .acquiring) && ContinuousClock.now < deadline { usleep(1_000) }
    }
}
