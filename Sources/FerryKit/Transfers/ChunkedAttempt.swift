import Foundation
import Synchronization

/// The bookkeeping of one download attempt that reads the file itself, chunk
/// by chunk, instead of through libcurl (`DownloadAttempt`): SMB on its
/// context's thread, SFTP over OpenSSH on its channel's. The decision
/// (`SizeAndTimeDownloadDecision`) hears the file's facts, each chunk and the
/// end; the part is begun and written as it says; the driver gets the report.
struct ChunkedAttempt {
    private(set) var decision: SizeAndTimeDownloadDecision
    let part: PartFile
    let transfer: Transfer
    let offset: Int64
    private(set) var begunAt: Int64?
    private(set) var received: Int64 = 0
    /// Set once the attempt ended.
    private(set) var report: AttemptReport?

    init(decision: SizeAndTimeDownloadDecision, part: PartFile, transfer: Transfer, offset: Int64) {
        self.decision = decision
        self.part = part
        self.transfer = transfer
        self.offset = offset
    }

    /// Tells the decision what the file is (its size and time), and begins the
    /// part where it says. Returns the offset to read from, nil when the
    /// attempt ended here (`report` is set).
    mutating func head(_ facts: SizeAndTimeDownloadDecision.Facts) -> Int64? {
        switch decision.handle(.head(facts)) {
        case .begin(let start):
            do {
                try part.begin(start, showingOn: transfer)
            } catch {
                _ = decision.handle(.localFailure(error))
                end(.interrupted)
                return nil
            }
            begunAt = start.at
        case .stop:
            end(.interrupted)
            return nil
        default:
            break
        }
        return begunAt ?? offset
    }

    /// Writes one chunk into the part and shows it. False when the attempt
    /// ended (the decision refused the bytes, or the disk did).
    mutating func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard decision.handle(.body(bytes.count)) == .write else {
            end(.interrupted)
            return false
        }
        guard part.append(bytes) else {
            _ = decision.handle(
                .localFailure(part.writeError ?? FerryError(.localIO, operation: "write", target: part.partPath)))
            end(.interrupted)
            return false
        }
        received += Int64(bytes.count)
        transfer.report(bytesDone: part.length, totalBytes: part.journal.totalSize)
        return true
    }

    /// Ends the attempt (once; later calls change nothing).
    mutating func end(_ ending: SizeAndTimeDownloadDecision.Ending) {
        guard report == nil else { return }
        if decision.handle(.end(ending)) == .recordWholeFileAndFinish { part.recordWholeFile() }
        part.releaseBuffer()
        report = AttemptReport(outcome: decision.outcome, begunAt: begunAt, bytesReceived: received)
    }
}

/// Set from any thread to stop an attempt running on a thread of its own
/// (pause, cancel); read between reads.
final class StopFlag: Sendable {
    private let flag = Atomic(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}
