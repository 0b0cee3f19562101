import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One sync at a time per destination folder: two would write the same `.part`
/// files. An advisory `flock` on `DIR/.ferry-sync.lock`, released when the
/// process ends however it ends (the kernel drops it with the descriptor).
final class SyncLock: Sendable {
    static let fileName = ".ferry-sync.lock"
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Takes the lock, or throws when another sync holds it for `patience`.
    ///
    /// A little patience is needed even without another sync: a process this one
    /// forks (any `Process` started meanwhile) shares the lock until its `exec`
    /// closes the descriptor.
    static func acquire(directory: String, patience: Duration = .seconds(2)) async throws(FerryError) -> SyncLock {
        let path = directory + "/" + SyncLock.fileName
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FerryError.posix(errno, operation: "sync", path: path) }
        let deadline = ContinuousClock.now + patience
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = errno
            guard e == EWOULDBLOCK || e == EINTR, ContinuousClock.now < deadline else {
                close(fd)
                if e == EWOULDBLOCK {
                    throw FerryError(
                        .localIO, operation: "sync", target: directory,
                        detail: "another ferry sync is importing into this folder")
                }
                throw FerryError.posix(e, operation: "sync", path: path)
            }
            do {
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                close(fd)
                throw FerryError(.cancelled, operation: "sync", target: directory)
            }
        }
        return SyncLock(fd: fd)
    }

    deinit { close(fd) }
}
