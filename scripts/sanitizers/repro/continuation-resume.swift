// ThreadSanitizer false positive: a CheckedContinuation resumed from a plain thread.
// The thread writes job.value, then resumes; the task reads job.value after the await.
// Swift orders the two, yet when the resume wins the race with the task's suspension
// TSan reports a race (the runtime's fast path is not instrumented), in some runs:
//   swiftc -parse-as-library -sanitize=thread continuation-resume.swift -o /tmp/cr && /tmp/cr
import Foundation

final class Job: @unchecked Sendable {
    var value: [Int] = []
    var continuation: CheckedContinuation<Int, Never>?
}

final class Queue: @unchecked Sendable {
    let lock = NSLock()  // pthread mutex: visible to TSan, unlike Synchronization.Mutex
    var jobs: [Job] = []
}

let queue = Queue()

@main struct Main {
    static func main() async {
        Thread {
            while true {
                let taken = queue.lock.withLock { () -> [Job] in
                    defer { queue.jobs.removeAll() }
                    return queue.jobs
                }
                for job in taken {
                    job.value.append(42)
                    let c = job.continuation
                    job.continuation = nil
                    c?.resume(returning: 1)
                }
                if taken.isEmpty { sched_yield() }
            }
        }.start()
        for _ in 0..<20000 {
            let job = Job()
            _ = await withCheckedContinuation { (c: CheckedContinuation<Int, Never>) in
                job.continuation = c
                queue.lock.withLock { queue.jobs.append(job) }
            }
            precondition(job.value.count == 1)
        }
        print("done")
    }
}
