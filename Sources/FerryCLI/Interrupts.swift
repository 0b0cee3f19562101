import FerryKit
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The transfers a command has running, so Ctrl-C can cancel them all.
final class TransferRegistry: Sendable {
    private let transfers = Mutex<[Int: Transfer]>([:])

    func add(_ t: Transfer) { transfers.withLock { $0[t.id] = t } }
    func remove(_ t: Transfer) { _ = transfers.withLock { $0.removeValue(forKey: t.id) } }

    func cancelAll() {
        let all = transfers.withLock { Array($0.values) }
        for t in all { t.cancel() }
    }
}

/// Ctrl-C (SIGINT) and SIGTERM: the first one stops transfers cleanly (partial
/// files kept for resume), a second one exits at once.
final class InterruptHandler: @unchecked Sendable {
    // Safe: `sources` is written only in init and `remove`, which the owning
    // command calls once from its own task after all transfers ended.
    private var sources: [any DispatchSourceSignal] = []
    private let count = Atomic<Int>(0)

    init(_ onInterrupt: @escaping @Sendable () -> Void) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { [unowned self] in
                if self.count.add(1, ordering: .sequentiallyConsistent).newValue > 1 { exit(CLI.interruptedExitCode) }
                onInterrupt()
            }
            // A signal arriving between SIG_IGN above and the source's registration
            // would be lost: wait until the source is registered.
            let registered = DispatchSemaphore(value: 0)
            s.setRegistrationHandler { registered.signal() }
            s.resume()
            registered.wait()
            sources.append(s)
        }
    }

    /// Whether an interrupt arrived.
    var fired: Bool { count.load(ordering: .sequentiallyConsistent) > 0 }

    func remove() {
        for s in sources { s.cancel() }
        sources = []
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
