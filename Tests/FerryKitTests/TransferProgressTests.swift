import Foundation
import Synchronization
import Testing

@testable import FerryKit

@Suite struct TransferProgressTests {
    /// A burst of reports followed by silence: the last snapshot still arrives,
    /// although the rate limit held it back.
    @Test func heldBackSnapshotArrivesAfterABurst() async throws {
        let t = Transfer(source: "s", destination: "d")
        let stream = t.progress
        let seen = Mutex<[Int64]>([])
        let reader = Task {
            for await p in stream { seen.withLock { $0.append(p.bytesDone) } }
        }
        t.report(bytesDone: 100, totalBytes: 1000)
        t.report(bytesDone: 200, totalBytes: 1000)
        t.report(bytesDone: 300, totalBytes: 1000)
        try await Task.sleep(for: .milliseconds(400))
        #expect(seen.withLock { $0.last } == 300)
        t.cancel()
        reader.cancel()
    }

    @Test func fractionAndETA() {
        let p = TransferProgress(bytesDone: 250, totalBytes: 1000, bytesPerSecond: 250)
        #expect(p.fraction == 0.25)
        #expect(p.eta == .seconds(3))
        #expect(TransferProgress(bytesDone: 5).fraction == nil)
    }
}
