import CFerryOS

/// A readers-writer lock that prefers writers (`ferry_os_rwlock_new`): many
/// holders share it, or one holds it alone; a waiting `alone` goes before new
/// `shared` holders. Not recursive. Lives as long as the process.
final class SharedLock: @unchecked Sendable {
    private let lock: UnsafeMutableRawPointer

    init() {
        guard let made = ferry_os_rwlock_new() else { fatalError("out of memory for a lock") }
        lock = made
    }

    /// Runs `body` holding the lock `alone`, or shared with other shared holders.
    func with<T, E: Error>(alone: Bool, _ body: () throws(E) -> T) throws(E) -> T {
        alone ? ferry_os_rwlock_exclusive(lock) : ferry_os_rwlock_shared(lock)
        defer { ferry_os_rwlock_unlock(lock) }
        return try body()
    }
}
