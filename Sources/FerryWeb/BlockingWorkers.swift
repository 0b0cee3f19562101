import Dispatch
import Synchronization

/// A few serial queues for blocking work (JPEG decoding, file copies) so it
/// never occupies the cooperative pool, where it would stall every request.
///
/// One queue per core at most; jobs go round-robin.
final class BlockingWorkers: Sendable {
    private let queues: [DispatchQueue]
    private let next = Atomic<Int>(0)

    /// Creates `count` worker queues.
    init(count: Int, label: String) {
        queues = (0..<max(1, count)).map { DispatchQueue(label: "\(label).\($0)") }
    }

    /// Runs `work` on a worker queue and returns its result.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let queue = queues[next.add(1, ordering: .relaxed).oldValue % queues.count]
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
