import Dispatch
import Synchronization

/// One run of the async handler that a connection thread waits for.
///
/// Exactly one of ``complete(_:)`` (the handler returned) and ``abandon()``
/// (the server is stopping) takes effect and signals the waiter.
final class HandlerCall: Sendable {
    private struct State {
        var finished = false
        var response: HTTPResponse?
        var task: Task<Void, Never>?
        var abandoned = false
    }

    private let state = Mutex(State())
    private let semaphore = DispatchSemaphore(value: 0)

    func start(_ task: Task<Void, Never>) {
        let cancel = state.withLock { state in
            state.task = task
            return state.abandoned
        }
        if cancel { task.cancel() }
    }

    func complete(_ response: HTTPResponse) {
        let signal = state.withLock { state in
            guard !state.finished else { return false }
            state.finished = true
            state.response = response
            return true
        }
        if signal { semaphore.signal() }
    }

    func abandon() {
        let (signal, task) = state.withLock { state in
            state.abandoned = true
            guard !state.finished else { return (false, state.task) }
            state.finished = true
            return (true, state.task)
        }
        task?.cancel()
        if signal { semaphore.signal() }
    }

    /// Blocks until the handler returned or the call was abandoned.
    func wait() -> HTTPResponse? {
        semaphore.wait()
        return state.withLock { $0.response }
    }
}
