import Foundation

/// The decisions of one FTP or SFTP download attempt, as a pure value: whether
/// the file the server now has is still the one the `.part` came from (its size
/// and time, FTP's `MDTM` or SFTP's `stat`, against the journal), and how the
/// attempt ended.
///
/// Events in, actions out; a `DownloadAttempt` (FTP's and SFTP's adapters) or
/// the SMB backend's attempt feeds it and carries the actions out. The states are `AttemptPhase`'s; the
/// head is the `SIZE`/`MDTM` answers (or the listing's facts), fed with the
/// first byte or at the end of an empty transfer. An event in a state it cannot
/// arrive in traps.
struct SizeAndTimeDownloadDecision: AttemptDecision {
    /// What the server said about the file in this attempt (`SIZE`, `MDTM`), or
    /// what the listing said when the attempt went without asking.
    struct Facts: Sendable, Hashable {
        var size: Int64?
        /// `MDTM`'s answer, or the file's stamp (SFTP's `stat`, SMB).
        var modified: SourceTime?
    }

    /// How libcurl ended the transfer.
    enum Ending: Sendable, Hashable {
        /// Done without an error; `length` is the part's length now.
        case ok(length: Int64)
        /// Paused or cancelled by Ferry.
        case interrupted
        /// `REST` past the end of the file (libcurl checks it against `SIZE`).
        case restPastEnd
        /// The server refused `REST` (its reply, when seen); `error` is how
        /// libcurl's failure reads, for an attempt from offset 0.
        case restRefused(reply: String?, error: FerryError)
        /// Any other failure, as `FerryError.ftp` words it.
        case failed(FerryError)
    }

    /// `head` carries the `Facts`.
    typealias Head = Facts
    typealias Event = AttemptEvent<Facts, Ending>
    typealias Action = AttemptAction

    /// The offset of `REST`, 0 for the whole file.
    let offset: Int64
    /// What the part's journal said when the attempt started.
    let journal: DownloadJournal
    /// What the listing said, when this attempt uses it instead of asking.
    let listedSize: Int64?
    /// Whether the attempt went without asking the time (FTP's `MDTM`) because
    /// the listing gave it or the file is small.
    let skipsTimeCheck: Bool
    let display: String
    private(set) var state = AttemptPhase.awaitingHead
    /// The facts the attempt went by.
    private(set) var facts = Facts()

    /// `listedSize` when the attempt goes by a listing's size instead of asking.
    init(
        offset: Int64, journal: DownloadJournal, listedSize: Int64? = nil, skipsTimeCheck: Bool = false,
        display: String
    ) {
        self.offset = offset
        self.journal = journal
        self.listedSize = listedSize
        self.skipsTimeCheck = skipsTimeCheck
        self.display = display
    }

    mutating func handle(_ event: Event) -> Action {
        if let action = state.shared(event) { return action }
        switch (state, event) {
        case (.awaitingHead, .head(let f)):
            facts = f
            return decide()
        case (.streaming, .end(.ok(let length))):
            if let listedSize, length != listedSize {
                // The listing was stale, or wrong (some servers list sizes modulo
                // 4 GiB), and the server said the transfer is complete: the retry
                // checks the bytes against SIZE (and MDTM), which completes at once
                // without a byte more when they are still the whole file.
                state = .done(
                    .failed(
                        FerryError(
                            .verificationFailed, operation: "download", target: display,
                            detail: "listed as \(listedSize) bytes, received \(length)", isTransient: true)))
                return .recordWholeFileAndFinish
            }
            state = .done(.complete(expectedSize: facts.size))
            return .finish
        case (.awaitingHead, .end(.ok)):
            preconditionFailure("an attempt that succeeded must be shown its facts before its end")
        case (.awaitingHead, .end(let ending)), (.streaming, .end(let ending)):
            state = .done(failure(ending))
            return .finish
        default:
            preconditionFailure("size-and-time download: \(event) cannot arrive while \(state)")
        }
    }

    private func failure(_ ending: Ending) -> AttemptOutcome {
        switch ending {
        case .ok: preconditionFailure("not a failure")
        case .interrupted: return .interrupted
        case .restPastEnd:
            // The .part is longer than the file now is: it changed.
            return .restart(reason: "the file is shorter than the \(offset) bytes already downloaded")
        case .restRefused(let reply, _) where offset > 0:
            // The server cannot resume (no REST, or it refused this offset): the
            // bytes can only come again from the start.
            return .restart(reason: "the server cannot resume with REST" + (reply.map { " (\($0))" } ?? ""))
        case .restRefused(_, let error):
            return .failed(error)
        case .failed(let error): return .failed(error)
        }
    }

    /// Compares the validators with the journal before the first byte is written.
    private mutating func decide() -> Action {
        let size = facts.size
        let modified = facts.modified
        if offset > 0 {
            if journal.unverifiable == true {
                return stop(.restart(reason: "nothing can tell whether the file is still the one the part came from"))
            }
            if let old = journal.totalSize, let size, old != size {
                return stop(.restart(reason: "size changed from \(old) to \(size)"))
            }
            if let old = journal.modified, let modified, !old.sameVersion(as: modified) {
                return stop(.restart(reason: "modification time changed from \(old.text) to \(modified.text)"))
            }
        }
        // Bytes are verifiable by a time, or by a size when MDTM was asked (a
        // server without SIZE and MDTM leaves nothing to check a part against).
        let verifiable = modified != nil || (size != nil && !skipsTimeCheck)
        state = .streaming
        return .begin(
            PartStart(
                at: offset, etag: nil, modified: modified ?? journal.modified,
                totalSize: size ?? journal.totalSize, verifiable: verifiable))
    }

    private mutating func stop(_ outcome: AttemptOutcome) -> Action {
        state = .stopped(outcome)
        return .stop
    }
}
