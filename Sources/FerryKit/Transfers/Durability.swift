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
        var group: Bool
        /// Runs on the flusher thread before the flush (the source's time).
        var prepare: @Sendable () -> Date?
        /// Runs on the flusher thread with 0 or the `errno` once the flush ended,
        /// and what `prepare` returned.
        var done: @Sendable (Int32, Date?) -> Void
        var prepared: Date? = nil
    }

    private let queue = Mutex<[Waiter]>([])
    private let wake = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            // The engine thread wakes this one for every finished file; a flush
            // must not preempt the engine on its core while the next file's
            // request is about to go out (bench/RESULTS.md, "Issue 19, branch hops").
            OS.makeBackgroundThread()
            self.run()
        }
        thread.name = "ferry.durability"
        thread.start()
    }

    /// Returns once the data of `fd` (a file of `size` bytes) is on stable storage.
    func sync(fd: Int32, size: Int64, path: String) async throws(FerryError) {
        let error = await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
            enqueue(fd: fd, size: size, prepare: { nil }) { error, _ in c.resume(returning: error) }
        }
        if error != 0 { throw FerryError.posix(error, operation: "sync", path: path) }
    }

    /// Queues the data of `fd` (a file of `size` bytes) for the next flush;
    /// `prepare` runs on the flusher thread first, `done` with 0 or the `errno`
    /// (and what `prepare` returned) once the data is on stable storage, all of
    /// one group's in one go. `fd` stays open until then.
    func enqueue(
        fd: Int32, size: Int64, prepare: @escaping @Sendable () -> Date?,
        then done: @escaping @Sendable (Int32, Date?) -> Void
    ) {
        queue.withLock {
            $0.append(Waiter(fd: fd, group: size <= Durability.groupLimit, prepare: prepare, done: done))
        }
        wake.signal()
    }

    /// While files keep finishing (a flush ended less than `streamGap` ago), the
    /// flusher waits `gatherDelay` before taking the queue, so that one flush
    /// covers more files, while the CLI starts enough transfers that
    /// downloading goes on meanwhile (`TransferRunner.window`). The delay was
    /// chosen on a thousand 64 KiB files (bench/http_bench.py --many-only),
    /// whose figures are not in bench/: measure again before changing it; a
    /// longer, adaptive gather is under "Tried and dropped" in bench/RESULTS.md,
    /// "Issue 19, third step (2026-12-01, branch many): CPU per file". A lone
    /// download never waits.
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
            for var w in batch {
                w.prepared = w.prepare()
                var st = stat()
                if w.group && fstat(w.fd, &st) == 0 {
                    groups[UInt64(st.st_dev), default: []].append(w)
                } else {
                    w.done(OS.sync(w.fd) == 0 ? 0 : errno, w.prepared)
                }
            }
            for (_, members) in groups {
                // A lone small file: its own fsync is cheaper than flushing the file system.
                if members.count == 1 {
                    members[0].done(OS.sync(members[0].fd) == 0 ? 0 : errno, members[0].prepared)
                    continue
                }
                let rc = OS.syncFileSystem(members[0].fd) == 0 ? 0 : errno
                for m in members { m.done(rc, m.prepared) }
            }
        }
    }
}
