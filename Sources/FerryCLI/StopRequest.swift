/// SIGINT and SIGTERM caught from creation on, for commands that serve until
/// stopped (`ferry serve`, `ferry demo`): ``wait()`` returns at the first one,
/// so the command can stop its servers and clean up. A second signal exits at
/// once (see ``InterruptHandler``).
final class StopRequest: Sendable {
    private let stream: AsyncStream<Void>
    private let handler: InterruptHandler

    init() {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.stream = stream
        handler = InterruptHandler {
            continuation.yield()
            continuation.finish()
        }
    }

    /// Whether a signal has arrived.
    var isRequested: Bool { handler.fired }

    /// Suspends until a signal arrives (at once if one already did).
    func wait() async {
        for await _ in stream { break }
    }

    /// Restores the default signal handling.
    func remove() {
        handler.remove()
    }
}
