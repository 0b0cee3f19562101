import CCurl
import Foundation

/// What one protocol adds to a download attempt (`DownloadAttempt`): it sets
/// the handle up, reads what libcurl reported into its decision's events (the
/// head before the first byte, how the transfer ended), and owns the decision
/// (`HTTPDownloadDecision`, `SizeAndTimeDownloadDecision`). Every member is
/// required: an adapter that leaves one out does not compile.
///
/// Engine-thread confined while the attempt runs, as its job is; `configure`
/// runs on the submitting thread, before the engine sees the job.
protocol DownloadAttemptAdapter {
    associatedtype Decision: AttemptDecision
    /// The decision of this attempt.
    var decision: Decision { get set }
    /// Sets the attempt's handle up (the job's `easy`; `enableDebug` for a
    /// protocol whose replies `debug` reads).
    mutating func configure(_ job: CurlJob)
    /// A response header line as libcurl gives it (with its CRLF).
    mutating func header(_ line: UnsafeRawBufferPointer)
    /// Protocol text libcurl logs (`CurlJob.debug`), for `job` to act on.
    mutating func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer, job: CurlJob)
    /// What the server said about the file before the first byte.
    func head(_ easy: EasyHandle) -> Decision.Head
    /// How libcurl ended the transfer (interrupted by Ferry included), for a
    /// part now `length` bytes long.
    func ending(_ completion: CurlCompletion, length: Int64) -> Decision.Ending
    /// The file's size to show progress against.
    func progressTotal(_ part: PartFile) -> Int64?
}

/// The libcurl side of one download attempt, the same for every protocol: it
/// feeds the adapter's decision with what libcurl reports and carries its
/// actions out on the `PartFile`.
///
/// Engine-thread confined while running, like every `CurlJob`; the driver reads
/// `outcome`, `bytesReceived` and `begunAt` only after `perform` returned.
final class DownloadAttempt<Adapter: DownloadAttemptAdapter>: CurlJob, @unchecked Sendable {
    let part: PartFile
    let transfer: Transfer
    /// The offset this attempt asked to start from.
    let offset: Int64
    /// Bytes that arrived in this attempt.
    private(set) var bytesReceived: Int64 = 0
    /// Where this attempt's bytes began in the file (its `PartStart.at`), once it
    /// wrote any: `offset` when it continued the part, 0 when it started over.
    private(set) var begunAt: Int64?
    private var adapter: Adapter
    /// Whether the decision was shown the head (which always moves it on from
    /// `awaitingHead`): asked on every chunk, and here rather than through the
    /// adapter's `decision`, whose generic getter copies the whole decision
    /// (it showed in bench/cpu_bench.py's instructions per small file).
    private var headSeen = false

    init(
        _ adapter: Adapter, hostKey: String, tlsSessionCache: TLSSessionCache = .own, part: PartFile,
        transfer: Transfer, offset: Int64
    ) {
        self.adapter = adapter
        self.part = part
        self.transfer = transfer
        self.offset = offset
        super.init(hostKey: hostKey, tlsSessionCache: tlsSessionCache)
        self.adapter.configure(self)
    }

    /// How the attempt ended, as its decision decided. Read only once `perform`
    /// returned: the decision traps when asked before the end.
    var outcome: AttemptOutcome { adapter.decision.outcome }

    // Specialized for each adapter: a generic class's overrides are otherwise
    // run unspecialized, every chunk through the adapter's witness table
    // (bench/cpu_bench.py's instructions per small file). The only place the
    // engine names the backends' adapters: a hint to the optimizer, which
    // `@_specialize` takes only on the declaration it specializes.
    @_specialize(where Adapter == HTTPDownloadAttempt)
    @_specialize(where Adapter == FTPDownloadAttempt)
    @_specialize(where Adapter == SFTPDownloadAttempt)
    override func didReceiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        adapter.header(line)
        return true
    }

    override func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer) {
        adapter.debug(type, text, job: self)
    }

    @_specialize(where Adapter == HTTPDownloadAttempt)
    @_specialize(where Adapter == FTPDownloadAttempt)
    @_specialize(where Adapter == SFTPDownloadAttempt)
    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !headSeen {
            headSeen = true
            let head = adapter.head(easy)
            guard carryOut(adapter.decision.handle(.head(head))) else { return false }
        }
        guard carryOut(adapter.decision.handle(.body(bytes.count))) else { return false }
        guard part.append(bytes) else {
            fail(part.writeError ?? FerryError(.localIO, operation: "write", target: part.partPath))
            return false
        }
        bytesReceived += Int64(bytes.count)
        transfer.report(bytesDone: part.length, totalBytes: adapter.progressTotal(part))
        return true
    }

    @_specialize(where Adapter == HTTPDownloadAttempt)
    @_specialize(where Adapter == FTPDownloadAttempt)
    @_specialize(where Adapter == SFTPDownloadAttempt)
    override func didComplete(_ completion: CurlCompletion) {
        if !completion.interrupted, completion.code == .ok, !headSeen {
            headSeen = true
            // No body at all (an empty file, or a part that already held every
            // byte: libcurl skips the read at the file's end): the head decides.
            let head = adapter.head(easy)
            guard carryOut(adapter.decision.handle(.head(head))) else {
                _ = adapter.decision.handle(.end(adapter.ending(completion, length: part.length)))
                return
            }
        }
        let ending = adapter.ending(completion, length: part.length)
        if adapter.decision.handle(.end(ending)) == .recordWholeFileAndFinish { part.recordWholeFile() }
    }

    /// The transfer left the engine: the part's last bytes go to the file and its
    /// write buffer back to the pool now, on the engine thread, not when the
    /// driver's task next runs. A thousand small files queued behind each other
    /// held a hundred 256 KiB buffers between their last byte and `finish`,
    /// most of the peak heap and of the page faults (massif, bench/RESULTS.md, "Issue 19, third step (2026-12-01,
    /// branch many): CPU per file").
    override func didEnd() {
        part.releaseBuffer()
    }

    /// An attempt that brought the whole file goes from here to its flush
    /// (`Durability`), and the driver's task runs again only once the bytes are
    /// durable: before, the engine woke the driver, whose first step was to
    /// hand the file to the flusher thread and sleep again (two hand-overs per
    /// file instead of one). Only the bytes' state is read here; the driver
    /// verifies the outcome, links and renames as before (`PartFile.finish`).
    override func handOver(
        _ completion: CurlCompletion, to continuation: CheckedContinuation<CurlCompletion, Never>
    ) {
        guard !completion.interrupted, case .complete(let expected) = outcome,
            part.syncEarly(expectedSize: expected, then: { continuation.resume(returning: completion) })
        else {
            continuation.resume(returning: completion)
            return
        }
    }

    /// Carries out a decision's action before the bytes are written: `.begin`
    /// cuts the part, records what the bytes are and shows where they continue
    /// from; a failure there goes to the decision. False when the transfer is
    /// to stop.
    private func carryOut(_ action: AttemptAction) -> Bool {
        CurlEngine.assertOnEngineThread()
        switch action {
        case .begin(let start):
            do {
                try part.begin(start, showingOn: transfer)
            } catch {
                fail(error)
                return false
            }
            begunAt = start.at
            return true
        case .write, .finish, .recordWholeFileAndFinish:
            return true
        case .stop:
            return false
        }
    }

    /// Tells the decision that writing failed.
    private func fail(_ error: FerryError) {
        _ = adapter.decision.handle(.localFailure(error))
    }
}

extension SizeAndTimeDownloadDecision.Ending {
    /// How libcurl's end of a size-and-time download reads (FTP, SFTP): done,
    /// interrupted, `REST` past the end, or what `failed` makes of the rest.
    init(_ completion: CurlCompletion, length: Int64, failed: (CurlCompletion) -> Self) {
        if completion.interrupted {
            self = .interrupted
        } else if completion.code == .ok {
            self = .ok(length: length)
        } else if completion.code == .badDownloadResume {
            self = .restPastEnd
        } else {
            self = failed(completion)
        }
    }
}

extension CurlCode {
    /// A resume offset past the end of the file (libcurl checks it against the size).
    static let badDownloadResume = CurlCode(CURLE_BAD_DOWNLOAD_RESUME)
}
