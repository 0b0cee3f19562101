import Foundation

/// What a protocol's attempt decision (`HTTPDownloadDecision`,
/// `SizeAndTimeDownloadDecision`) feeds on: the server's answer before the first byte
/// (`Head`: an HTTP status and headers, FTP `SIZE`/`MDTM`), the bytes, a local
/// write failure, and how libcurl ended the transfer (`Ending`).
enum AttemptEvent<Head: Sendable & Hashable, Ending: Sendable & Hashable>: Sendable, Hashable {
    case head(Head)
    /// Body bytes arrived (their count).
    case body(Int)
    /// Writing to the part failed (disk full ...).
    case localFailure(FerryError)
    case end(Ending)
}

/// A protocol's decision of one attempt: a pure value whose `state` moves
/// through `AttemptPhase`.
protocol AttemptDecision: Sendable {
    /// What the server says before the first byte.
    associatedtype Head: Sendable & Hashable
    /// How the transfer ended.
    associatedtype Ending: Sendable & Hashable
    var state: AttemptPhase { get }
    /// Takes one event; the action its adapter carries out.
    mutating func handle(_ event: AttemptEvent<Head, Ending>) -> AttemptAction
}

extension AttemptDecision {
    /// Whether the head has been seen (the adapter feeds it once, before the
    /// first byte or at the end of an empty body). Asked on every body chunk: a
    /// pattern, not `==`, which copies both phases with their payloads.
    var needsHead: Bool {
        if case .awaitingHead = state { return true }
        return false
    }

    /// The attempt's outcome; only once it is `done`.
    var outcome: AttemptOutcome { state.outcome }
}

/// What an attempt decision asks its libcurl adapter to do.
enum AttemptAction: Sendable, Hashable {
    /// Cut the part and record the validators (`PartFile.begin`), then write.
    case begin(PartStart)
    /// Append the bytes to the part.
    case write
    /// Abort the transfer: the outcome is decided.
    case stop
    /// The attempt is over: read the outcome.
    case finish
    /// Record the part as a whole file as the server sent it
    /// (`PartFile.recordWholeFile`); then the attempt is over (FTP).
    case recordWholeFileAndFinish
}

/// Where an attempt is, the same for every protocol:
///
/// - `awaitingHead`: the request is out; the head arrives with the first body
///   byte (or at the end of an empty body) and decides `begin` or `stop`;
/// - `streaming`: bytes go into the part (`body` -> `write`);
/// - `stopped`: an outcome is decided and the transfer is being aborted;
///   libcurl's own ending (the write error the abort causes) is ignored;
/// - `done`: the outcome is final.
enum AttemptPhase: Sendable, Hashable {
    case awaitingHead
    case streaming
    case stopped(AttemptOutcome)
    case done(AttemptOutcome)

    /// The outcome; only once `done`.
    var outcome: AttemptOutcome {
        guard case .done(let o) = self else { preconditionFailure("no outcome before the attempt ended: \(self)") }
        return o
    }

    /// The transitions every protocol shares: bytes while streaming, a write
    /// failure, the end after a stop; nothing may arrive once done. Nil for the
    /// events the protocol decides itself.
    ///
    /// This runs for every body chunk: it switches on the phase and then on the
    /// event instead of on the pair, which copied both (the head's headers
    /// included) for each chunk.
    mutating func shared<Head, Ending>(_ event: AttemptEvent<Head, Ending>) -> AttemptAction? {
        switch self {
        case .awaitingHead:
            return nil
        case .streaming:
            switch event {
            case .body:
                return .write
            case .localFailure(let error):
                self = .stopped(.failed(error))
                return .stop
            case .head, .end:
                return nil
            }
        case .stopped(let decided):
            guard case .end = event else { preconditionFailure("\(event) cannot arrive while \(self)") }
            self = .done(decided)
            return .finish
        case .done:
            preconditionFailure("\(event) cannot arrive while \(self)")
        }
    }
}
