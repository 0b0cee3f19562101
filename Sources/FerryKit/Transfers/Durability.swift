import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Makes finished downloads durable before they get their final name, with a
/// group commit for small files: every file that finishes while one `syncfs` runs
/// waits for the next, so a thousand small files cost tens of flushes, not a
/// thousand. Large files get their own `fsync` (a `syncfs` would also flush
/// unrelated dirty data of the same size).
///
/// One dedicated thread does the flushing; the cooperative pool never blocks.
final class Durability: Sendable {
    static let shared = Durability()

    /// Files up to this size join a group commit.
    static let groupLimit: Int64 = 4 << 20

    private struct Waiter {
        var fd: Int32
        var device: UInt64
        var group: Bool
        var continuation: CheckedContinuation<Int32, Never>
    }

    private let queue = Mutex<[Waiter]>([])
    private let wake = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in self.run() }
        thread.name = "ferry.durability"
        thread.start()
    }

    /// Returns once the data of `fd` (a file of `size` bytes) is on stable storage.
    func sync(fd: Int32, size: Int64, path: String) async throws(FerryError) {
        var st = stat()
        fstat(fd, &st)
        let device = UInt64(st.st_dev)
        let error = await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
            queue.withLock {
                $0.append(Waiter(fd: fd, device: device, group: size <= Durability.groupLimit, continuation: c))
            }
            wake.signal()
        }
        if error != 0 { throw FerryError.posix(error, operation: "sync", path: path) }
    }

    /// While files keep finishing (a flush ended less than `streamGap` ago), the
    /// flusher waits `gatherDelay` before taking the queue, so that one flush
    /// covers more files. On a thousand 64 KiB files (bench/http_bench.py
    /// --many-only) no wait took 0.27 s, 1 ms 0.25 s and 5-10 ms about 0.21 s, with
    /// the CLI starting enough transfers that downloading goes on meanwhile
    /// (`TransferRunner.window`). A lone download never waits.
    static let gatherDelay: Duration = .milliseconds(5)
    static let streamGap: Duration = .milliseconds(20)

    private func run() {
        var lastFlush = ContinuousClock.now - .seconds(1)
        while true {
            wake.wait()
            if ContinuousClock.now - lastFlush < Durability.streamGap {
                Thread.sleep(forTimeInterval: Durability.gatherDelay / .seconds(1))
            }
            defer { lastFlush = .now }
            let batch = queue.withLock { q -> [Waiter] in
                defer { q.removeAll() }
                return q
            }
            guard !batch.isEmpty else { continue }
            // Drain extra wake-ups for the waiters taken together here.
            for _ in 1..<batch.count { _ = wake.wait(timeout: .now()) }
            var groups: [UInt64: [Waiter]] = [:]
            for w in batch {
                if w.group {
                    groups[w.device, default: []].append(w)
                } else {
                    w.continuation.resume(returning: OS.sync(w.fd) == 0 ? 0 : errno)
                }
            }
            for (_, members) in groups {
                // A lone small file: its own fsync is cheaper than flushing the file system.
                if members.count == 1 {
                    members[0].continuation.resume(returning: OS.sync(members[0].fd) == 0 ? 0 : errno)
                    continue
                }
                let rc = OS.syncFileSystem(members[0].fd) == 0 ? 0 : errno
                for m in members { m.continuation.resume(returning: rc) }
            }
        }
    }
}
