import FerryKit
import Foundation
import Synchronization

/// `--json`: one JSON object per line on stdout: progress every half second,
/// one result per file, and the run's summary last.
final class JSONLinesOutput: CommandOutput {
    let console: Console
    /// Running transfers, for progress lines.
    private let running = Mutex<[Int: Transfer]>([:])
    private let ticker = Ticker()

    init(console: Console) {
        self.console = console
        ticker.start(every: .milliseconds(500)) { [weak self] in self?.emitProgress() }
    }

    func report(_ event: OutputEvent) {
        switch event {
        case .begin:
            break
        case .started(let transfer, _):
            running.withLock { $0[transfer.id] = transfer }
        case .finished(let transfer, let label, let result, let item):
            _ = running.withLock { $0.removeValue(forKey: transfer.id) }
            guard let item else {
                console.json(JSONResult(transfer: transfer, result: result))
                return
            }
            switch result {
            case .success(let r):
                var j = JSONItem(type: "imported", item: item, shown: label)
                j.record(r)
                console.json(j)
            case .failure(let error):
                console.json(JSONItem(failed: error, item: item, shown: label))
            }
        case .left(let file):
            console.json(JSONResult(left: file))
        case .did(let action, let target):
            console.json(["type": "done", "action": action, "target": target])
        case .failed(let error, let item, let shown):
            if let item {
                console.json(JSONItem(failed: error, item: item, shown: shown ?? item.destination))
            } else {
                console.json(JSONResult(failed: error))
            }
        case .notice(_, let json):
            if !json.isEmpty { console.json(json) }
        case .summary(let s):
            console.json(JSONRunSummary(s))
        case .syncFile(let kind, let item, let shown):
            switch kind {
            case .planned: console.json(JSONItem(type: "planned", item: item, shown: shown))
            case .recorded: console.json(JSONItem(type: "recorded", item: item, shown: shown))
            case .deletedFromSource: console.json(JSONItem(type: "deleted", item: item, shown: shown))
            case .keptOnSource(let reason):
                var j = JSONItem(type: "kept", item: item, shown: shown)
                j.reason = reason
                console.json(j)
            }
        case .passStarted(let pass, let source, let key):
            console.json(JSONPassStart(pass: pass, source: source, sourceKey: key))
        case .passFinished(let s, _):
            console.json(JSONSummary(s))
        }
    }

    func close() {
        ticker.stop()
    }

    private func emitProgress() {
        let transfers = running.withLock { Array($0.values) }.sorted { $0.id < $1.id }
        for t in transfers where t.state == .running {
            console.json(JSONProgress(transfer: t, progress: t.currentProgress))
        }
    }
}

/// One `--json` progress line.
struct JSONProgress: Encodable {
    var type = "progress"
    var source: String
    var destination: String
    var bytes: Int64
    var total: Int64?
    var fraction: Double?
    var bytesPerSecond: Double
    var etaSeconds: Double?

    init(transfer: Transfer, progress p: TransferProgress) {
        source = transfer.source
        destination = transfer.destination
        bytes = p.bytesDone
        total = p.totalBytes
        fraction = p.fraction
        bytesPerSecond = (p.bytesPerSecond * 10).rounded() / 10
        etaSeconds = p.eta.map { $0 / .seconds(1) }
    }
}

/// A per-file `--json` line (`result`, sync's `imported` and `failed`): what it
/// says of a transfer that finished, or why the file failed.
protocol JSONFileOutcome {
    var size: Int64? { get set }
    var bytesTransferred: Int64? { get set }
    var resumedFrom: Int64? { get set }
    var seconds: Double? { get set }
    var error: String? { get set }
    var errorCode: String? { get set }
    var serverCode: Int? { get set }
}

extension JSONFileOutcome {
    /// The size, the bytes moved, where they resumed from and the time taken.
    mutating func record(_ r: TransferResult) {
        size = r.size
        bytesTransferred = r.bytesTransferred
        resumedFrom = r.resumedFrom
        seconds = r.duration / .seconds(1)
    }

    /// The message, its code and the server's own code.
    mutating func describe(_ e: FerryError) {
        error = Hints.describe(e)
        errorCode = e.code.description
        serverCode = e.serverCode
    }
}

/// One `--json` result line per file.
struct JSONResult: Encodable, JSONFileOutcome {
    var type = "result"
    var ok: Bool
    var source: String
    var destination: String
    var size: Int64?
    var bytesTransferred: Int64?
    /// Every byte sent, retried attempts included (FTP uploads).
    var bytesSent: Int64?
    var resumedFrom: Int64?
    var skipped: Bool?
    /// For a file not transferred: "already-here", "differs" or "kept".
    var state: String?
    var seconds: Double?
    var error: String?
    var errorCode: String?
    var serverCode: Int?
    var recovery: String?

    init(transfer: Transfer, result: Result<TransferResult, FerryError>) {
        source = transfer.source
        destination = transfer.destination
        switch result {
        case .success(let r):
            ok = true
            record(r)
            bytesSent = r.bytesSent
            skipped = r.skipped
        case .failure(let e):
            ok = false
            describe(e)
            recovery = e.recovery?.rawValue
        }
    }

    /// A file that failed before its transfer began (its URL did not answer).
    init(failed e: FerryError) {
        ok = false
        source = e.target ?? ""
        destination = ""
        describe(e)
        recovery = e.recovery?.rawValue
    }

    init(left file: LeftFile) {
        source = file.source
        destination = file.destination
        size = file.size
        bytesTransferred = 0
        skipped = true
        switch file.why {
        case .alreadyHere:
            ok = true
            state = "already-here"
        case .keptExisting:
            ok = true
            state = "kept"
        case .differs(let reason):
            ok = false
            state = "differs"
            error = "\(file.destination) differs from the source (\(reason)); kept it"
            errorCode = FerryError.Code.destinationExists.description
            recovery = FerryError.Recovery.replaceOrKeep.rawValue
        }
    }
}

/// The final `--json` object of a multi-file `get` or `put`.
struct JSONRunSummary: Encodable {
    var type = "summary"
    var transferred: Int
    var verb: String
    var bytes: Int64
    var seconds: Double
    var bytesPerSecond: Double
    var alreadyHere: Int
    var differs: Int
    var kept: Int
    var failed: Int
    var interrupted: Bool
    var text: String

    init(_ s: RunSummary) {
        transferred = s.transferred
        verb = s.verb
        bytes = s.bytes
        seconds = (s.seconds * 1000).rounded() / 1000
        bytesPerSecond = s.bytesPerSecond.rounded()
        alreadyHere = s.alreadyHere
        differs = s.differs
        kept = s.kept
        failed = s.failed
        interrupted = s.interrupted
        text = s.text
    }
}
