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

/// Who goes first when a server's connections are all in use (a FlashAir card
/// has one): the transfer engine starts waiting requests in this order, and on
/// a one-connection card a request stops a running download of lower priority,
/// which resumes with `Range` once the card is free again.
///
/// Requests take the priority of the task that makes them, as they take its
/// ``ConnectionWait/observer``:
///
/// ```swift
/// try await TransferPriority.$current.withValue(.bulk) {
///     try await sync.run()
/// }
/// ```
public enum TransferPriority: Int, Comparable, Sendable, CaseIterable {
    /// Copies nobody watches file by file: an import, a sync.
    case bulk
    /// Fetched ahead of need (the viewer's next photo).
    case prefetch
    /// Many small requests a person waits for as a whole (a grid's thumbnails):
    /// each goes after a single request a person waits for.
    case browsing
    /// A request a person waits for: a listing, the photo opened. The default.
    case interactive

    /// The priority of the current task's requests.
    @TaskLocal public static var current: TransferPriority = .interactive

    /// Whether `a` goes after `b`.
    public static func < (a: TransferPriority, b: TransferPriority) -> Bool { a.rawValue < b.rawValue }
}

extension Ferry {
    /// How many running downloads of `url`'s server at `priority` the engine
    /// stopped so far for a request of higher priority (a one-connection card's
    /// `LanePolicy`); each resumed with `Range` in its turn.
    package static func preemptions(of url: RemoteURL, at priority: TransferPriority) -> Int {
        CurlEngine.shared.preemptions(of: url.hostKey, at: priority)
    }
}
