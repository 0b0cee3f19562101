import Foundation
import Testing

@testable import FerryCLI
@testable import FerryKit

/// What the terminal shows while files wait and move (issue 16 item 3).
@Suite struct ProgressTableTests {
    @Test func queuedFilesSayQueuedAndTheTotalHasSizeAndETA() {
        let table = ProgressTable(waitingText: "waiting for the card (1 connection)")
        table.begin(files: 3, bytes: 3_000_000)
        let moving = Transfer(source: "flashair://card/A.JPG", destination: "A.JPG")
        let queued = Transfer(source: "flashair://card/B.JPG", destination: "B.JPG")
        table.add(moving, label: "A.JPG")
        table.add(queued, label: "B.JPG")
        moving.report(bytesDone: 500_000, totalBytes: 1_000_000, force: true)
        let lines = table.lines(width: 100, now: .now + .seconds(5))
        #expect(lines.count == 3, "\(lines)")
        #expect(lines[0].hasPrefix("A.JPG") && lines[0].contains("50%"), "\(lines)")
        #expect(lines[1].hasPrefix("B.JPG") && lines[1].hasSuffix("  queued"), "\(lines)")
        #expect(!lines.joined().contains("??"))
        #expect(lines[2].hasPrefix("total: 0/3 files, 500 KB of 3.0 MB"), "\(lines)")
    }

    @Test func nothingMovingForASecondIsWaitingForTheSourcesConnection() {
        let table = ProgressTable(waitingText: "waiting for the card (1 connection)")
        table.begin(files: 2, bytes: nil)
        let a = Transfer(source: "flashair://card/A.JPG", destination: "A.JPG")
        let b = Transfer(source: "flashair://card/B.JPG", destination: "B.JPG")
        table.add(a, label: "A.JPG")
        table.add(b, label: "B.JPG")
        #expect(table.lines(width: 100).prefix(2).allSatisfy { $0.hasSuffix("  queued") })
        let later = table.lines(width: 100, now: .now + .seconds(2))
        #expect(later[0].hasSuffix("  waiting for the card (1 connection)"), "\(later)")
        #expect(later[1].hasSuffix("  queued"), "\(later)")
        #expect(later[2] == "total: 0/2 files, 0 B, 0 B/s", "\(later)")
    }

    /// Issue 29: the first frame shows `--:--` (no `0 B/s`) and the bar keeps its width when the ETA comes.
    @Test func theFirstFrameHasNoSpeedYetAndTheWidthStays() {
        let first = TransferProgress(bytesDone: 16_384, totalBytes: 10_000_000, bytesPerSecond: 0)
        let later = TransferProgress(bytesDone: 2_500_000, totalBytes: 10_000_000, bytesPerSecond: 1_250_000)
        let a = ProgressTable.bar(label: "IMG_0001.JPG", progress: first, paused: false, width: 100)
        let b = ProgressTable.bar(label: "IMG_0001.JPG", progress: later, paused: false, width: 100)
        #expect(a.contains("ETA --:--") && !a.contains("0 B/s"), "\(a)")
        #expect(b.contains("ETA 0:06") && b.contains("1.2 MB/s"), "\(b)")
        #expect(a.count == b.count, "\(a)\n\(b)")
        let retry = TransferProgress.Retry(number: 2, of: 5, delay: .seconds(4), reason: "timed out")
        #expect(ProgressTable.retrying(retry) == "retrying (2 of 5) in 4.0 s: timed out")
    }

    /// A transfer waiting to retry says so in its row, within one terminal line.
    @Test func aRetryShowsInItsRowWithinTheWidth() async throws {
        let table = ProgressTable(waitingText: nil)
        let t = Transfer(source: "ftp://host/x.bin", destination: "x.bin")
        table.add(t, label: "x.bin")
        let retry = TransferProgress.Retry(
            number: 1, of: 5, delay: .seconds(2), reason: String(repeating: "timed out after 1000 ms ", count: 8))
        let sleeping = Task {
            try await t.backOff(for: .seconds(2), retry: retry)
        }
        try await Task.sleep(for: .milliseconds(200))
        let lines = table.lines(width: 60)
        #expect(lines.count == 1 && lines[0].hasPrefix("x.bin") && lines[0].contains("retrying (1 of 5) in 2.0 s"))
        #expect(lines.allSatisfy { $0.count < 60 }, "\(lines)")
        t.cancel()
        _ = try? await sleeping.value
        #expect(t.currentProgress.retry == nil)
    }
}
