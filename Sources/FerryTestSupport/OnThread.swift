import Foundation

/// Runs blocking work (processes, sleeps, pixel drawing in a debug build) on
/// its own thread: the cooperative pool has as many threads as cores (two
/// here), and the HTTP servers other suites run in this process need it.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        // Room for ThreadSanitizer's bigger frames (and multi-megabyte test bodies).
        thread.stackSize = 16 << 20
        thread.start()
    }
}
