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

    /// Takes the lock or throws at once when another sync holds it.
    init(directory: String) throws(FerryError) {
        let path = directory + "/" + SyncLock.fileName
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FerryError.posix(errno, operation: "sync", path: path) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let e = errno
            close(fd)
            if e == EWOULDBLOCK {
                throw FerryError(
                    .localIO, operation: "sync", target: directory,
                    detail: "another ferry sync is importing into this folder")
            }
            throw FerryError.posix(e, operation: "sync", path: path)
        }
        self.fd = fd
    }

    deinit { close(fd) }
}
