/// A readers-writer gate between tests: most tests enter shared, the test
/// that measures the process's memory enters alone, so other tests'
/// buffers do not show up in its measurement.
actor TestGate {
    static let shared = TestGate()

    private var readers = 0
    private var writer = false
    private var queue: [(exclusive: Bool, continuation: CheckedContinuation<Void, Never>)] = []

    private func acquire(exclusive: Bool) async {
        if queue.isEmpty, !writer, !exclusive || readers == 0 {
            if exclusive { writer = true } else { readers += 1 }
            return
        }
        await withCheckedContinuation { queue.append((exclusive, $0)) }
    }

    private func release(exclusive: Bool) {
        if exclusive { writer = false } else { readers -= 1 }
        // Admit waiters in order: one writer, or every reader up to the next writer.
        while let next = queue.first, !writer {
            if next.exclusive {
                guard readers == 0 else { break }
                writer = true
            } else {
                readers += 1
            }
            queue.removeFirst()
            next.continuation.resume()
        }
    }

    /// Runs `body` inside the gate.
    static func run<T>(exclusive: Bool = false, _ body: () async throws -> T) async rethrows -> T {
        await shared.acquire(exclusive: exclusive)
        do {
            let result = try await body()
            await shared.release(exclusive: exclusive)
            return result
        } catch {
            await shared.release(exclusive: exclusive)
            throw error
        }
    }
}
