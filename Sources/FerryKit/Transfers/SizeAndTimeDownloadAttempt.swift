import CCurl
import Foundation

/// The part of an FTP or SFTP download attempt that both share: it feeds
/// `SizeAndTimeDownloadDecision` (size and time as validators) from libcurl's
/// callbacks and carries the decision's actions out. A subclass sets its
/// handle up, and says what it knows of the file (`facts()`), the total to
/// show progress against, and how a failed transfer reads (`ending(failed:)`).
///
/// Engine-thread confined while running, like every `CurlJob`; the driver reads
/// `outcome` only after `perform` returned.
class SizeAndTimeDownloadAttempt: DownloadAttemptJob, @unchecked Sendable {
    private(set) var decision: SizeAndTimeDownloadDecision

    init(
        decision: SizeAndTimeDownloadDecision, hostKey: String, tlsSessionCache: TLSSessionCache, part: PartFile,
        transfer: Transfer, offset: Int64
    ) {
        self.decision = decision
        super.init(hostKey: hostKey, tlsSessionCache: tlsSessionCache, part: part, transfer: transfer, offset: offset)
    }

    override var outcome: AttemptOutcome { decision.outcome }

    /// What this attempt knows about the file now.
    func facts() -> SizeAndTimeDownloadDecision.Facts { preconditionFailure("subclasses say what they know") }

    /// The file's size for progress.
    var progressTotal: Int64? { part.journal.totalSize }

    /// How a transfer that libcurl ended with another code than `.ok` or
    /// `.badDownloadResume` ends for the decision.
    func ending(failed completion: CurlCompletion) -> SizeAndTimeDownloadDecision.Ending {
        preconditionFailure("subclasses read their failures")
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if decision.needsHead {
            guard carryOut(decision.handle(.head(facts())), failed: fail) else { return false }
        }
        guard carryOut(decision.handle(.body(bytes.count)), failed: fail) else { return false }
        if let error = write(bytes, totalForProgress: progressTotal) {
            fail(error)
            return false
        }
        return true
    }

    override func didComplete(_ completion: CurlCompletion) {
        let ending: SizeAndTimeDownloadDecision.Ending
        if completion.interrupted {
            ending = .interrupted
        } else {
            switch completion.code {
            case .ok:
                // No body at all: an empty file, or the .part already held every byte
                // (libcurl skips the read when the offset is the file's end).
                if decision.needsHead && !carryOut(decision.handle(.head(facts())), failed: fail) {
                    _ = decision.handle(.end(.ok(length: part.length)))
                    return
                }
                ending = .ok(length: part.length)
            case .badDownloadResume:
                ending = .restPastEnd
            default:
                ending = self.ending(failed: completion)
            }
        }
        if decision.handle(.end(ending)) == .recordWholeFileAndFinish { part.recordWholeFile() }
    }

    /// Tells the decision that writing failed.
    private func fail(_ error: FerryError) {
        _ = decision.handle(.localFailure(error))
    }
}
