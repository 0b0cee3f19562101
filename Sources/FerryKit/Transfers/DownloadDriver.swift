import Foundation

/// How one attempt of a download ended.
enum AttemptOutcome: Sendable, Hashable {
    /// All bytes are in the `.part`; `expectedSize` is what the server announced.
    case complete(expectedSize: Int64?)
    /// The bytes on disk cannot be continued (server ignored Range, file changed):
    /// start from zero at once, without counting a failure.
    case restart(reason: String)
    /// Paused or cancelled by Ferry.
    case interrupted
    /// Failed; `error.isTransient` says whether to retry.
    case failed(FerryError)
}

/// Where an attempt's bytes go in the `.part`, and what they are: decided by a
/// protocol's decision machine from the server's answer, carried out by
/// `PartFile.begin` before the first byte is written.
struct PartStart: Sendable, Hashable {
    /// The offset the bytes continue from; 0 starts the file over.
    var at: Int64
    var etag: String?
    /// The source's time (`DownloadJournal.modified`).
    var modified: SourceTime?
    var totalSize: Int64?
    /// False when no validator describes the bytes (`DownloadJournal.unverifiable`).
    var verifiable = true
    /// Where redirects led, when not the source itself (HTTP).
    var finalSource: String?
}

extension PartFile {
    /// Carries out a decision's `.begin`: cuts the part to where the bytes
    /// continue, records what they are, and shows the transfer where they
    /// continue from.
    func begin(_ start: PartStart, showingOn transfer: Transfer) throws(FerryError) {
        try begin(
            at: start.at, etag: start.etag, modified: start.modified, totalSize: start.totalSize,
            verifiable: start.verifiable, finalSource: start.finalSource)
        transfer.report(bytesDone: start.at, totalBytes: start.totalSize, resumedFrom: start.at, force: true)
    }
}

/// How one attempt ended, as the driver's loop needs to know it.
struct AttemptReport: Sendable, Hashable {
    var outcome: AttemptOutcome
    /// Where the attempt's bytes began in the file (its `PartStart.at`), nil when it wrote none.
    var begunAt: Int64?
    /// Bytes that arrived in the attempt.
    var bytesReceived: Int64
}

/// Something a file can be downloaded from with resume: HTTP, FTP, a FlashAir
/// card, an SMB share. A backend makes one per file; the driver asks it for one
/// attempt at a time (a `DownloadAttempt` with the backend's adapter, or the
/// SMB backend's attempt on its own thread).
struct DownloadSource: Sendable {
    /// The source as shown to people (redacted), and as the journal names it.
    let displayName: String
    /// Runs one attempt from `offset` (the part's length) into the part, and says
    /// how it ended. It sets the transfer's interrupter for as long as it runs.
    let attempt:
        @Sendable (_ offset: Int64, _ part: PartFile, _ transfer: Transfer, _ options: DownloadOptions) async ->
            AttemptReport
    /// The error for a transfer whose retry budget ran out, from the last failure
    /// and the number of tries (a card turns silence into `notAnswering`).
    var gaveUp: @Sendable (_ last: FerryError, _ tries: Int) -> FerryError = DownloadSource.gaveUpAfter

    /// A source whose attempts are libcurl jobs on `engine`, made by `makeAttempt`.
    init<Adapter>(
        displayName: String, engine: CurlEngine,
        makeAttempt:
            @escaping @Sendable (_ offset: Int64, _ part: PartFile, _ transfer: Transfer, _ options: DownloadOptions)
            -> DownloadAttempt<Adapter>,
        gaveUp: @escaping @Sendable (_ last: FerryError, _ tries: Int) -> FerryError = DownloadSource.gaveUpAfter
    ) {
        self.displayName = displayName
        self.gaveUp = gaveUp
        attempt = { offset, part, transfer, options in
            let job = makeAttempt(offset, part, transfer, options)
            // Stopped for a request of higher priority, the loop keeps the bytes and tries again.
            job.yieldsToHigherPriority = true
            transfer.setInterrupter { engine.interrupt(job) }
            // Raised meanwhile (a person now waits for a prefetch), the attempt
            // goes at the raised priority; raised while it waits or runs, it goes up.
            transfer.setRaiser { engine.raise(job, to: $0) }
            let priority = max(TransferPriority.current, transfer.raisedPriority ?? .bulk)
            _ = await TransferPriority.$current.withValue(priority) { await engine.perform(job) }
            transfer.setRaiser(nil)
            transfer.setInterrupter(nil)
            return AttemptReport(outcome: job.outcome, begunAt: job.begunAt, bytesReceived: job.bytesReceived)
        }
    }

    /// A source whose attempts run elsewhere (a library's own thread).
    init(
        displayName: String,
        attempt:
            @escaping @Sendable (_ offset: Int64, _ part: PartFile, _ transfer: Transfer, _ options: DownloadOptions)
            async -> AttemptReport
    ) {
        self.displayName = displayName
        self.attempt = attempt
    }

    /// The default: the last failure, "gave up after N tries" added to its detail.
    static func gaveUpAfter(_ last: FerryError, _ tries: Int) -> FerryError {
        var e = last
        e.detail = [e.detail, "gave up after \(tries) tries"].compactMap { $0 }.joined(separator: "; ")
        return e
    }
}

/// A backend that can hand the download driver a source (used by `get -r`, sync).
protocol DownloadSourceFactory {
    func downloadSource(for path: String) -> DownloadSource
}

/// The download loop every protocol shares: `.part` and journal, resume, restart,
/// retries with exponential back-off, pause and cancel, verify and rename. What
/// to do after each attempt is `DownloadLoop`'s decision; this carries it out.
enum DownloadDriver {
    /// Starts a download as a `Transfer`.
    static func start(_ source: DownloadSource, to destination: String, options: DownloadOptions) -> Transfer {
        Transfer.start(source: source.displayName, destination: destination) { transfer async throws(FerryError) in
            try await run(source, to: destination, options: options, transfer: transfer)
        }
    }

    static func run(
        _ source: DownloadSource, to destination: String, options: DownloadOptions, transfer: Transfer
    ) async throws(FerryError) -> TransferResult {
        let started = ContinuousClock.now
        try LocalDestination.makeReady(destination, options)
        let existing = options.outputDescriptor != nil ? .missing : LocalFile.kind(destination)
        let found: OverwriteDecision.Found =
            switch existing {
            case .directory: .folder
            case .file: .file(size: options.overwrite == .skip ? LocalFile.size(atPath: destination) : nil)
            case .missing: .nothing
            }
        if let skipped = try OverwriteDecision.check(
            found, policy: options.overwrite, operation: "download", source: source.displayName,
            destination: destination, started: started,
            folder: FerryError(.localIO, operation: "download", target: destination, detail: "is a folder; name a file")
        ) {
            return skipped
        }
        let part = PartFile.make(destination: destination, source: source.displayName, options: options)
        let resumedFrom = try part.open(resume: options.resume)
        do {
            return try await loop(
                source, part: part, resumedFrom: resumedFrom, options: options, transfer: transfer, started: started)
        } catch {
            // Keep a .part worth resuming; an empty one is just clutter.
            part.settle()
            throw error
        }
    }

    private static func loop(
        _ source: DownloadSource, part: PartFile, resumedFrom: Int64, options: DownloadOptions,
        transfer: Transfer, started: ContinuousClock.Instant
    ) async throws(FerryError) -> TransferResult {
        transfer.report(
            bytesDone: resumedFrom, totalBytes: part.journal.totalSize, resumedFrom: resumedFrom, force: true)
        var decision = DownloadLoop(
            onDisk: resumedFrom, maxRetries: options.maxRetries, retryDelay: options.retryDelay,
            display: source.displayName)
        var action: DownloadLoop.Action = .attempt
        while true {
            switch action {
            case .attempt:
                try await transfer.waitWhilePaused()
                let offset = part.length
                let report = await source.attempt(offset, part, transfer, options)
                action = decision.attemptEnded(
                    report.outcome, offset: offset, begunAt: report.begunAt, bytesReceived: report.bytesReceived,
                    cancelled: transfer.isCancelled)
            case .finish(let expected):
                do {
                    let size = try await part.finish(expectedSize: expected, overwrite: options.overwrite)
                    decision.finished()
                    var result = TransferResult(
                        source: source.displayName, destination: part.destination, size: size,
                        bytesTransferred: decision.transferred, resumedFrom: decision.keptFrom,
                        restarts: decision.budget.restarts, retries: decision.budget.retries,
                        duration: .now - started)
                    result.sourceModified = part.sourceModified
                    result.sha256 = part.sha256
                    return result
                } catch {
                    action = decision.finishFailed(error)
                }
            case .startOver:
                try part.begin(at: 0, etag: nil, modified: nil, totalSize: nil)
                transfer.report(bytesDone: 0, totalBytes: nil, resumedFrom: 0, force: true)
                action = .attempt
            case .keepAndWait:
                part.checkpoint()
                action = .attempt
            case .backOff(let delay):
                part.checkpoint()
                let retry = TransferProgress.Retry(
                    number: decision.budget.failuresInRow, of: decision.budget.maxRetries, delay: delay,
                    reason: decision.lastFailure?.description ?? "")
                try await transfer.backOff(for: delay, retry: retry)
                action = .attempt
            case .fail(let error):
                part.checkpoint()
                throw error
            case .gaveUp(let last, let tries):
                part.checkpoint()
                throw source.gaveUp(last, tries)
            }
        }
    }
}
