import Foundation

/// How one attempt of a download ended.
enum AttemptOutcome: Sendable {
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

/// The protocol-specific part of one download attempt: a libcurl job that writes
/// into the `PartFile` and decides its `outcome` by the time it completes.
class DownloadAttemptJob: CurlJob, @unchecked Sendable {
    let part: PartFile
    let transfer: Transfer
    /// The offset this attempt asked to start from.
    let offset: Int64
    /// Decided on the engine thread, read by the driver after `perform` returns.
    var outcome: AttemptOutcome = .failed(FerryError(.protocolError, detail: "no outcome"))
    /// Bytes that arrived in this attempt.
    var bytesReceived: Int64 = 0
    /// Set when the attempt itself started the file over (a 200 to a ranged request).
    var restartedInPlace = false

    init(
        hostKey: String, tlsSessionCache: TLSSessionCache = .own, part: PartFile, transfer: Transfer, offset: Int64
    ) {
        self.part = part
        self.transfer = transfer
        self.offset = offset
        super.init(hostKey: hostKey, tlsSessionCache: tlsSessionCache)
    }
}

/// Something a file can be downloaded from with resume: HTTP, FTP, a FlashAir card.
protocol DownloadSource: Sendable {
    /// The source as shown to people (redacted).
    var displayName: String { get }
    /// The engine the jobs run on.
    var engine: CurlEngine { get }
    /// Makes the job for one attempt starting at `offset`.
    func makeAttempt(offset: Int64, part: PartFile, transfer: Transfer, options: DownloadOptions)
        -> DownloadAttemptJob
}

/// The download loop every protocol shares: `.part` and journal, resume, restart,
/// retries with exponential back-off, pause and cancel, verify and rename.
enum DownloadDriver {
    /// Starts a download as a `Transfer`.
    static func start(_ source: any DownloadSource, to destination: String, options: DownloadOptions)
        -> Transfer
    {
        Transfer.start(source: source.displayName, destination: destination) { transfer in
            try await run(source, to: destination, options: options, transfer: transfer)
        }
    }

    static func run(
        _ source: any DownloadSource, to destination: String, options: DownloadOptions, transfer: Transfer
    ) async throws(FerryError) -> TransferResult {
        let started = ContinuousClock.now
        let existing = LocalFile.kind(destination)
        if existing == .directory {
            throw FerryError(
                .localIO, operation: "download", target: destination, detail: "is a folder; name a file")
        }
        if existing == .file {
            switch options.overwrite {
            case .fail:
                throw FerryError(
                    .destinationExists, operation: "download", target: destination, recovery: .replaceOrKeep)
            case .skip:
                let size = LocalFile.size(atPath: destination) ?? 0
                return TransferResult(
                    source: source.displayName, destination: destination, size: size, bytesTransferred: 0,
                    skipped: true, duration: .now - started)
            case .overwrite:
                break
            }
        }
        let part = PartFile(destination: destination, source: source.displayName)
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
        _ source: any DownloadSource, part: PartFile, resumedFrom: Int64, options: DownloadOptions,
        transfer: Transfer, started: ContinuousClock.Instant
    ) async throws(FerryError) -> TransferResult {
        let destination = part.destination
        transfer.report(
            bytesDone: resumedFrom, totalBytes: part.journal.totalSize, resumedFrom: resumedFrom, force: true)

        var transferred: Int64 = 0
        var failuresInRow = 0
        var retries = 0
        var restarts = 0
        var delay = options.retryDelay
        while true {
            try await transfer.waitWhilePaused()
            let job = source.makeAttempt(offset: part.length, part: part, transfer: transfer, options: options)
            let engine = source.engine
            transfer.setInterrupter { engine.interrupt(job) }
            _ = await engine.perform(job)
            transfer.setInterrupter(nil)
            transferred += job.bytesReceived
            if job.restartedInPlace { restarts += 1 }

            switch job.outcome {
            case .complete(let expected):
                do {
                    let size = try await part.finish(expectedSize: expected, overwrite: options.overwrite)
                    return TransferResult(
                        source: source.displayName, destination: destination, size: size,
                        bytesTransferred: transferred, resumedFrom: resumedFrom, restarts: restarts,
                        retries: retries, duration: .now - started)
                } catch  where error.code == .verificationFailed {
                    // Fewer bytes than announced: the connection ended early. Retry.
                    failuresInRow += 1
                    retries += 1
                    if failuresInRow > options.maxRetries { throw error }
                    try await transfer.backOff(&delay)
                }
            case .restart(let reason):
                restarts += 1
                guard restarts <= 5 else {
                    throw FerryError(
                        .protocolError, operation: "download", target: source.displayName,
                        detail: "gave up after \(restarts - 1) restarts: \(reason)")
                }
                try part.begin(at: 0, etag: nil, lastModified: nil, totalSize: nil)
                transfer.report(bytesDone: 0, totalBytes: nil, force: true)
            case .interrupted:
                part.checkpoint()
                if transfer.isCancelled {
                    throw FerryError(.cancelled, operation: "download", target: source.displayName)
                }
            case .failed(var error):
                part.checkpoint()
                // Refused before a single byte: the server is not there; say so at
                // once. Refused mid-file: it is restarting; retry. A connection
                // reset, cut or closed without a reply is retried from the start.
                if error.wasRefused && transferred == 0 && resumedFrom == 0 {
                    error.isTransient = false
                }
                guard error.isTransient else { throw error.context(operation: "download", target: source.displayName) }
                if job.bytesReceived > 0 {
                    failuresInRow = 0
                    delay = options.retryDelay
                }
                failuresInRow += 1
                retries += 1
                if failuresInRow > options.maxRetries {
                    error.detail = [error.detail, "gave up after \(failuresInRow) tries"]
                        .compactMap { $0 }.joined(separator: "; ")
                    throw error.context(operation: "download", target: source.displayName)
                }
                try await transfer.backOff(&delay)
            }
        }
    }
}
