/// Learns when the transfer engine holds one of a task's requests back because
/// its server's connections are all in use (a FlashAir card allows one).
///
/// A server that shares one card between several people (`ferry serve`) sets an
/// observer around each request it answers, so it can tell the person that
/// their request waits for the card, and make room for it (pause a bulk
/// download) while it waits.
public protocol ConnectionWaitObserver: Sendable {
    /// A request of the observed task started (`true`) or stopped (`false`)
    /// waiting for a connection; each `true` is followed by exactly one `false`
    /// (the request got its connection, or ended while it waited).
    ///
    /// Called on the transfer engine's thread: it must return quickly and never
    /// wait for a transfer. Pausing or resuming a ``Transfer`` is fine.
    ///
    /// - Parameter waiting: Whether the request now waits.
    func connectionWait(_ waiting: Bool)
}

/// Where the transfer engine looks for the ``ConnectionWaitObserver`` of the
/// task that submits a request.
///
/// ```swift
/// try await ConnectionWait.$observer.withValue(observer) {
///     try await fs.list("/DCIM")
/// }
/// ```
///
/// Tasks started inside (`Task {}`, a ``Transfer``'s driver) inherit it, as task-local values are.
public enum ConnectionWait {
    /// The observer of the current task's requests; nil: nobody asks.
    @TaskLocal public static var observer: (any ConnectionWaitObserver)?
}
