import Foundation

/// The ``HTTPServer/Options/maxConnections`` slots. A connection takes one
/// when its first request arrives and keeps it until it closes. A
/// connection that finds every slot taken waits up to
/// ``HTTPServer/Options/slotWait``, first come first served, and is closed
/// without an answer if none frees in time. (Before it waits, the server
/// closes a connection that only idles in a slot, see
/// ``HTTPServer/Options/shedsIdleConnections``.)
///
/// Why it waits: a client that closes a connection and at once opens the
/// next one (tfatool, curl, most clients) would otherwise find its old
/// connection still counted for a few milliseconds, until libmicrohttpd has
/// joined that connection's thread and cleaned it up, and be refused.
///
/// Threading (libmicrohttpd 0.9.75, thread per connection; checked with a
/// probe that logs the thread of every callback):
/// - ``acquire(trusted:waitingUpTo:)`` runs on the connection's own thread, in the
///   first access-handler call of its first request, so a waiting
///   connection blocks only itself.
/// - ``release()`` runs on the daemon's accepting thread: libmicrohttpd
///   delivers `MHD_CONNECTION_NOTIFY_CLOSED` from its cleanup pass
///   (`MHD_cleanup_connections`) after it has joined the connection's
///   thread, and that pass only runs when the accepting thread is not busy.
///   That is why the wait is not in the accept policy callback (`apc` of
///   `MHD_start_daemon`): it runs on the accepting thread too, and while it
///   blocks no connection is cleaned up and no slot could ever free (the
///   probe saw a closed connection's CLOSED held back until the blocking
///   callback returned).
/// - ``stop()`` runs on the thread that stops the server and ends every wait.
///
/// `@unchecked Sendable`: every stored property is only touched with
/// `condition` locked.
final class ConnectionSlots: @unchecked Sendable {
    private let condition = NSCondition()
    private let limit: Int
    /// Slots only trusted connections may take (``HTTPServer/Options/reservedSlots``).
    private let reserved: Int
    private var taken = 0
    /// The waiting connections, oldest first.
    private var queue: [(ticket: UInt64, trusted: Bool)] = []
    private var nextTicket: UInt64 = 0
    private var stopped = false

    init(limit: Int, reserved: Int = 0) {
        self.limit = limit
        self.reserved = min(max(reserved, 0), limit - 1)
    }

    /// Whether a connection of this kind fits in the slots free now.
    private func fits(trusted: Bool) -> Bool {
        taken < (trusted ? limit : limit - reserved)
    }

    /// Takes a slot, waiting up to `wait` for one to free. An untrusted
    /// connection never takes the ``HTTPServer/Options/reservedSlots``; among
    /// the waiting connections that fit, the oldest goes first.
    ///
    /// - Parameters:
    ///   - trusted: Whether the connection may take a reserved slot.
    ///   - wait: The most time to wait.
    ///   - whileWaiting: Called about every 100 ms while the connection waits
    ///     (with the slots locked, so it must not take them), until it returns
    ///     `true`: the server makes room with it.
    /// - Returns: `true` with a slot taken (give it back with ``release()``),
    ///   `false` when none freed in time or the server is stopping.
    func acquire(
        trusted: Bool = true, waitingUpTo wait: Duration, whileWaiting: (() -> Bool)? = nil
    ) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { return false }
        if fits(trusted: trusted), !queue.contains(where: { fits(trusted: $0.trusted) }) {
            taken += 1
            return true
        }
        guard wait > .zero else { return false }
        let ticket = nextTicket
        nextTicket += 1
        queue.append((ticket, trusted))
        let (seconds, attoseconds) = wait.components
        let deadline = Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18)
        var admitted = false
        var helping = whileWaiting
        while !stopped {
            if fits(trusted: trusted), queue.first(where: { fits(trusted: $0.trusted) })?.ticket == ticket {
                admitted = true
                break
            }
            if Date() >= deadline { break }
            if let help = helping {
                if help() { helping = nil }
                _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.1)))
            } else {
                _ = condition.wait(until: deadline)
            }
        }
        queue.removeAll { $0.ticket == ticket }
        if admitted { taken += 1 }
        // The next in line may now be first, or fit in another free slot.
        condition.broadcast()
        return admitted
    }

    /// Gives back a slot taken by ``acquire(trusted:waitingUpTo:)``.
    func release() {
        condition.lock()
        taken -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Ends every wait, now and later: the server is stopping.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Slots taken and connections waiting for one.
    var usage: (taken: Int, waiting: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (taken, queue.count)
    }
}
