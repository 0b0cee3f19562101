import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An upload's retry budget and byte counts, shared by all its steps (the checks
/// before and after a transfer, the transfers, the rename) and kept as a
/// download's is: one `RetryBudget`, so `maxRetries` failures in a row give up,
/// so does the whole budget spent (`RetryBudget.limit`), and back-offs double.
/// Only bytes the server confirms holding, more than ever before, start a new
/// row: bytes merely handed to the network do not (a server that takes some and
/// then refuses the rest kept an upload retrying for ever).
struct UploadBudget: Sendable {
    private(set) var budget: RetryBudget
    /// Bytes handed to the network by every attempt, retried ones included.
    var sent: Int64 = 0
    /// A transfer started at the file's first byte: kept bytes of an earlier
    /// try, if any, were not used (the result's `resumedFrom` is then 0).
    var sentFromStart = false
    /// The most bytes of the file being sent the server has confirmed holding.
    private(set) var confirmed: Int64 = 0
    /// The server confirmed more since the last failure.
    private var progressed = false

    init(maxRetries: Int, retryDelay: Duration) {
        budget = RetryBudget(maxRetries: maxRetries, firstDelay: retryDelay)
    }

    /// Failed tries that were retried.
    var retries: Int { budget.retries }

    /// Counting starts again for a file the server holds `length` bytes of.
    mutating func startsAt(_ length: Int64) { confirmed = length }

    /// The server holds `length` bytes: progress when more than ever before.
    @discardableResult
    mutating func serverHolds(_ length: Int64) -> Bool {
        guard length > confirmed else { return false }
        confirmed = length
        progressed = true
        return true
    }

    /// Counts a failed try and returns the back-off before the next; throws the
    /// failure, saying after how many tries, when the budget is spent.
    mutating func spend(_ failure: FerryError) throws(FerryError) -> Duration {
        defer { progressed = false }
        switch budget.failure(progressed: progressed) {
        case .again(let delay): return delay
        case .exhaustedInRow(let tries), .exhaustedInAll(let tries): throw DownloadSource.gaveUpAfter(failure, tries)
        case .tooManyRestarts: preconditionFailure("an upload does not restart")
        }
    }

    /// Spends a failure and sleeps its back-off (waking on cancel, then waiting
    /// out a pause).
    mutating func backOff(after failure: FerryError, _ transfer: Transfer) async throws(FerryError) {
        let delay = try spend(failure)
        let retry = TransferProgress.Retry(
            number: budget.failuresInRow, of: budget.maxRetries, delay: delay, reason: failure.description)
        try await transfer.backOff(for: delay, retry: retry)
    }

    /// Runs a step, retrying its transient failures (a dropped connection) from
    /// the budget.
    mutating func retrying<T>(_ transfer: Transfer, _ step: () async throws(FerryError) -> T)
        async throws(FerryError) -> T
    {
        while true {
            do {
                return try await step()
            } catch {
                guard error.isTransient else { throw error }
                try await backOff(after: error, transfer)
            }
        }
    }
}

/// The steps of an upload that do not depend on the protocol, which the driver
/// `ResumableUpload` takes in order (and a FlashAir card's upload in part).
enum UploadSteps {
    /// How many bytes at the end of a leftover temporary file are compared with
    /// the local file before appending to it.
    static let tailCheckLength: Int64 = 64 << 10

    /// Opens the local file and reports its size as the total: its descriptor and size.
    static func open(_ source: String, transfer: Transfer) throws(FerryError) -> (fd: Int32, size: Int64) {
        if LocalFile.isDirectory(source) {
            throw FerryError(.localIO, operation: "upload", target: source, detail: "is a folder; name a file")
        }
        let fd = try LocalFile.openForReading(source)
        let size = LocalFile.size(fd)
        transfer.report(bytesDone: 0, totalBytes: size, force: true)
        return (fd, size)
    }

    /// What `stat` says the server holds under a name, nil when nothing.
    static func existing(_ stat: () async throws(FerryError) -> RemoteEntry) async throws(FerryError) -> RemoteEntry? {
        do {
            return try await stat()
        } catch  where error.code == .notFound {
            return nil
        }
    }

    /// The finished upload's result: the bytes this upload moved into the file,
    /// and apart from them every byte it sent (after three tries of 300,000
    /// bytes: 300,000 and 900,000).
    static func result(
        source: String, destination: String, size: Int64, resumedFrom: Int64, budget: UploadBudget,
        started: ContinuousClock.Instant
    ) -> TransferResult {
        let resumedFrom = budget.sentFromStart ? 0 : resumedFrom
        var result = TransferResult(
            source: source, destination: destination, size: size, bytesTransferred: size - resumedFrom,
            resumedFrom: resumedFrom, retries: budget.retries, duration: .now - started)
        result.bytesSent = budget.sent
        return result
    }

    /// The range of a leftover temporary file of `have` bytes to compare with
    /// the local file (its last `tailCheckLength` bytes).
    static func tail(of have: Int64) -> ClosedRange<Int64> {
        (have - min(have, tailCheckLength))...(have - 1)
    }

    /// Whether `remote`, the server's bytes at `tail(of: have)`, are the local
    /// file's bytes there.
    static func tailMatches(_ remote: [UInt8], fd: Int32, have: Int64) -> Bool {
        let range = tail(of: have)
        let n = Int(range.count)
        guard remote.count == n else { return false }
        var local = [UInt8](repeating: 0, count: n)
        let got = local.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, n, off_t(range.lowerBound)) }
        return got == n && local == remote
    }
}

extension UploadSteps {
    /// Sends a local file of `size` bytes from `start` on, as `ResumableUpload` does: one transfer job after another (`makeJob(offset)`), each
    /// checked afterwards against what the server holds (`storedLength`, nil when
    /// it cannot tell), going on after a pause or a transient failure from what
    /// the server kept (`continuation`), every failure drawn from `budget`.
    ///
    /// A failure of the checks around a transfer counts as a failed try like the
    /// transfer's own; `failure` reads a transfer libcurl ended with an error.
    /// `remote` names the file being written in messages, `destination` the
    /// upload's (a cancel is reported for it).
    static func send<Job: LocalFileUploadJob>(
        size: Int64, from start: Int64, remote: String, destination: String, engine: CurlEngine,
        transfer: Transfer, budget: inout UploadBudget,
        makeJob: (Int64) -> Job,
        failure failureOf: (CurlCompletion, Job) -> FerryError,
        continuation: () async throws(FerryError) -> Int64,
        storedLength: () async throws(FerryError) -> Int64?
    ) async throws(FerryError) {
        // nil: ask the server how much of the file it holds.
        var offset: Int64? = start
        budget.startsAt(start)
        while true {
            try await transfer.waitWhilePaused()
            var failure: FerryError
            do throws(FerryError) {
                let from: Int64
                if let offset {
                    from = offset
                } else {
                    from = try await continuation()
                    // Progress only as the server counts it: the row of failures
                    // and the back-off start over.
                    budget.serverHolds(from)
                }
                offset = from
                if from == 0 { budget.sentFromStart = true }
                if from == size && size > 0 {
                    // Everything is already there (a leftover that was complete, or a
                    // transfer whose check failed).
                    budget.serverHolds(size)
                    return
                }
                let job = makeJob(from)
                transfer.setInterrupter { engine.interrupt(job) }
                let completion = await engine.perform(job)
                transfer.setInterrupter(nil)
                budget.sent += job.bytesSent
                if let readError = job.readError { throw readError }
                if completion.interrupted {
                    if transfer.isCancelled { throw FerryError(.cancelled, operation: "upload", target: destination) }
                    // Paused: once resumed, go on from what the server kept.
                    offset = nil
                    continue
                }
                if completion.code == .ok {
                    // Check what arrived: a dropped data connection can look like success
                    // (and libcurl 7.88 + vsftpd over TLS 1.3 has stored 0 bytes that way).
                    let stored = try await storedLength()
                    if let stored, job.end < size, stored == job.end {
                        // A piece of the file arrived (WebDAV's ranged PUTs): the next
                        // one goes on from there, with a new row of failures.
                        budget.serverHolds(stored)
                        offset = stored
                        continue
                    }
                    guard let stored, stored != size else {
                        // All there: the steps after (the rename) get a row of their own.
                        budget.serverHolds(size)
                        return
                    }
                    if stored > size {
                        throw FerryError(
                            .verificationFailed, operation: "upload", target: remote,
                            detail: "the server holds \(stored) bytes, the file has \(size)")
                    }
                    failure = FerryError(
                        .verificationFailed, operation: "upload", target: remote,
                        detail: "the server holds \(stored) of \(size) bytes", isTransient: true)
                } else {
                    failure = failureOf(completion, job)
                }
            } catch {
                failure = error
            }
            guard failure.isTransient else { throw failure }
            try await budget.backOff(after: failure, transfer)
            offset = nil
        }
    }
}
