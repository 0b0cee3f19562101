import FerryKit
import Foundation
import Synchronization

/// What a command reports while it works. Commands describe what happened as
/// events; one ``CommandOutput`` (terminal text and bars, or JSON lines) is
/// chosen once per run by ``Output/make(_:console:verb:)`` and turns them into
/// output, as a swift-log handler turns log calls into lines.
protocol CommandOutput: Sendable {
    func report(_ event: OutputEvent)
    /// Erases the bars and stops the ticker; called once at the end.
    func close()
}

/// One thing that happened.
enum OutputEvent: Sendable {
    /// A multi-file run begins: how many files, and their total size when the listing gave every size.
    case begin(files: Int, bytes: Int64?)
    /// A transfer was started (it may wait for a connection before bytes move).
    case started(Transfer, label: String)
    /// A transfer ended; `syncItem` is the sync's file when a sync ran it.
    case finished(Transfer, label: String, result: Result<TransferResult, FerryError>, syncItem: SyncItem? = nil)
    /// A file was not transferred because the destination already holds it, or another file.
    case left(LeftFile)
    /// What a command did to one target ("deleted", "created", "renamed ... to ...").
    case did(action: String, target: String)
    /// A failure that ended no transfer (a listing, a delete); `syncItem` as above.
    case failed(FerryError, syncItem: SyncItem? = nil, shown: String? = nil)
    /// A line for people that is not an outcome ("the source answers again").
    case notice(String, json: [String: String])
    /// The end of a multi-file `get` or `put`.
    case summary(RunSummary)
    /// Sync: a file planned (dry run), recorded as already here, deleted from or kept on the source.
    case syncFile(SyncFileEvent, item: SyncItem, shown: String)
    /// Sync: a pass began.
    case passStarted(pass: Int, source: String, sourceKey: String)
    /// Sync: a pass ended.
    case passFinished(SyncPassSummary, watching: Bool)
}

/// Sync file events that are not transfers.
enum SyncFileEvent: Sendable {
    case planned, recorded, deletedFromSource
    case keptOnSource(reason: String)
}

/// A file left as it was.
struct LeftFile: Sendable {
    enum Why: Sendable, Equatable {
        /// Same size and time: nothing to do.
        case alreadyHere
        /// Another file is there; kept, and the run fails (exit 1) with a hint.
        case differs(reason: String)
        /// Another file is there; kept because `--skip-existing` asked so.
        case keptExisting
    }
    var label: String
    var source: String
    var destination: String
    var size: Int64?
    var why: Why

    /// Why a destination is left as it is, given how it compares and the
    /// command's choice; nil to transfer. The same file is always left (as rsync
    /// does); one that differs is kept unless `--overwrite`.
    static func why(_ existing: ExistingFile, _ policy: OverwritePolicy) -> Why? {
        switch existing {
        case .same: .alreadyHere
        case .differs(let reason):
            switch policy {
            case .fail: .differs(reason: reason)
            case .skip: .keptExisting
            case .overwrite: nil
            }
        case .missing, .folder: nil
        }
    }
}

/// The numbers of one multi-file run.
struct RunSummary: Sendable, Equatable {
    /// "downloaded" or "uploaded".
    var verb: String
    var transferred = 0
    var bytes: Int64 = 0
    var seconds: Double = 0
    var alreadyHere = 0
    var differs = 0
    var kept = 0
    var failed = 0
    var interrupted = false

    var bytesPerSecond: Double { seconds > 0 ? Double(bytes) / seconds : 0 }

    /// `12 downloaded (1.1 GB in 40 s, 28 MB/s), 13 already here, 1 differs (kept), 0 failed`
    var text: String {
        var s = "\(transferred) \(verb)"
        if transferred > 0 {
            s += " (\(Format.bytes(bytes)) in \(Format.seconds(seconds)), \(Format.rate(bytesPerSecond)))"
        }
        s += ", \(alreadyHere) already here"
        if differs > 0 { s += ", \(differs) differ\(differs == 1 ? "s" : "") (kept)" }
        if kept > 0 { s += ", \(kept) kept (--skip-existing)" }
        s += ", \(failed) failed"
        if interrupted { s += "; interrupted" }
        return s
    }
}

/// Chooses the output once per run.
enum Output {
    /// JSON lines with `--json`; otherwise terminal text, with bars when stderr is
    /// a terminal and `--quiet` is not given. `verb` names a finished transfer
    /// ("saved", "uploaded", "imported").
    static func make(
        json: Bool, quiet: Bool, console: Console, verb: String, command: String, labelSuffix: String = "",
        waitingText: String? = nil, announce: Bool = false
    ) -> any CommandOutput {
        if json { return JSONLinesOutput(console: console) }
        return TerminalOutput(
            console: console, bars: !quiet && console.stderrIsTerminal, quiet: quiet, verb: verb, command: command,
            labelSuffix: labelSuffix, waitingText: waitingText, announce: announce)
    }
}

/// How the command line says a library's recovery choice: as its own options.
enum Hints {
    static func text(_ recovery: FerryError.Recovery) -> String {
        switch recovery {
        case .replaceOrKeep: "--overwrite replaces it, --skip-existing keeps it"
        case .replace: "--overwrite replaces it; nothing was renamed"
        case .trustCertificateOrSkipVerification:
            "trust its certificate authority with --cacert FILE, SSL_CERT_FILE or CURL_CA_BUNDLE; "
                + "--insecure only for a server you know"
        case .acceptNewHostKey: "if that is the server's key, run again with --accept-new-host-key to record it"
        }
    }

    /// An error as the command line prints it: the recovery as options.
    static func describe(_ error: FerryError) -> String {
        guard let recovery = error.recovery else { return error.description }
        var e = error
        e.recovery = nil
        e.detail = [error.detail, text(recovery)].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "; ")
        return e.description
    }
}

/// The task that redraws an output at an interval (bars, `--json` progress
/// lines) until ``stop()``.
final class Ticker: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Calls `tick` every `interval` from now on (the output passes itself weakly).
    func start(every interval: Duration, _ tick: @escaping @Sendable () -> Void) {
        task.withLock {
            $0 = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    tick()
                }
            }
        }
    }

    func stop() {
        task.withLock {
            $0?.cancel()
            $0 = nil
        }
    }
}
