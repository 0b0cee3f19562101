// LeakSanitizer report from swift-corelibs-foundation: a Process that has run is never freed.
//   swiftc -sanitize=address process-leak.swift -o /tmp/pl && /tmp/pl
import Foundation

let done = DispatchSemaphore(value: 0)
for _ in 0..<3 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/true")
    process.terminationHandler = { _ in done.signal() }
    try! process.run()
    done.wait()
}
