// ThreadSanitizer false positive: two accesses under the same Synchronization.Mutex.
// When the lock is contended, Mutex on Linux waits and wakes with futexes inside the
// Swift runtime (_lockSlow/_unlockSlow), which TSan does not see:
//   swiftc -parse-as-library -sanitize=thread mutex.swift -o /tmp/mx && /tmp/mx
import Foundation
import Synchronization

final class Box: Sendable {
    let items = Mutex<[Int]>([])
}

let box = Box()

@main struct Main {
    static func main() {
        let writer = Thread {
            for i in 0..<100_000 { box.items.withLock { $0.append(i) } }
        }
        writer.start()
        var seen = 0
        while seen < 100_000 {
            seen += box.items.withLock { items -> Int in
                defer { items.removeAll() }
                return items.count
            }
        }
        print("done")
    }
}
