import Foundation
import Synchronization

/// A thread of its own that runs jobs one after another, for a C library whose
/// calls block and whose handles must not be used by two threads at once
/// (libgphoto2's camera, libsmbclient's context): every call on one handle goes
/// through one `SerialThread`, and no async task ever blocks on it.
///
/// The thread lives as long as the process (its owners are kept per camera or
/// server for the process's life).
final class SerialThread: Sendable {
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let ready = DispatchSemaphore(value: 0)

    /// Starts the thread, named `name` (as `top -H` and debuggers show it).
    init(name: String) {
        let thread = Thread { [self] in self.loop() }
        thread.name = name
        thread.start()
    }

    private func loop() {
        while true {
            ready.wait()
            let job = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            job?()
        }
    }

    /// Jobs waiting, not counting the one running.
    var waiting: Int { jobs.withLock { $0.count } }

    /// Runs `body` on the thread after the jobs before it, and returns what it returned.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws(FerryError) -> T) async throws(FerryError) -> T {
        let result: Result<T, FerryError> = await withCheckedContinuation { continuation in
            jobs.withLock {
                $0.append {
                    do throws(FerryError) {
                        continuation.resume(returning: .success(try body()))
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
            }
            ready.signal()
        }
        return try result.get()
    }
}
