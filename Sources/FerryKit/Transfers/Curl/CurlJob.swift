import CCurl
import Foundation
import Synchronization

/// How one libcurl transfer ended, as the engine saw it.
struct CurlCompletion: Sendable {
    /// libcurl's result code.
    var code: CurlCode
    /// The last HTTP status or FTP reply code (`CURLINFO_RESPONSE_CODE`).
    var responseCode: Int
    /// libcurl's error text for `code`, when there was one.
    var errorText: String
    /// True when Ferry removed the transfer (pause, cancel) rather than libcurl ending it.
    var interrupted: Bool
}

/// One unit of work for `CurlEngine`: an easy handle plus the callbacks libcurl calls.
///
/// Subclasses set options in their initialiser (on the submitting thread, before
/// `CurlEngine.perform`) and override the callback methods, which run only on the
/// engine thread. That hand-over is what makes `@unchecked Sendable` safe here:
/// the job is never touched by two threads at once, except `interruptRequested`
/// and `raisedTo`, which are atomics.
class CurlJob: @unchecked Sendable {
    /// Which server this job talks to, for the per-host connection limit.
    let hostKey: String
    let easy: EasyHandle
    /// Set by `CurlEngine.interrupt` from any thread.
    let interruptRequested = Atomic<Bool>(false)
    /// The highest priority `CurlEngine.raise` asked for (a `TransferPriority`'s
    /// raw value; -1: none), from any thread: read when the job arrives, so a
    /// raise that comes before the job does is not lost.
    let raisedTo = Atomic<Int>(-1)
    /// Resumed exactly once by the engine thread.
    var continuation: CheckedContinuation<CurlCompletion, Never>?
    /// The hand-over of everything the callbacks wrote, spelled out: stored (release)
    /// by the engine thread after the job's last callback, loaded (acquire) by the
    /// awaiting task when `CurlEngine.perform` returns. Resuming the continuation
    /// already orders the two, but ThreadSanitizer cannot see that ordering when the
    /// resume wins the race with the task's suspension (docs/RELIABILITY.md).
    let handedOver = Atomic<Bool>(false)
    /// Set (on the engine thread) when the server turned this connection away
    /// because of how many this client already has (FTP `421` at login): the
    /// engine then holds the server to the connections that are working.
    var refusedForTooManyConnections = false
    /// Set (on the engine thread, by a callback) when libcurl has more to do at
    /// once but may not say so: the engine then drives it again before it waits
    /// (see `followFTP`). Cleared by the engine.
    var performAgain = false
    /// For an FTPS job (`TLSSessionCache.lane`): log in on a new connection
    /// in a lane of its own (`ConnectionLanes`). Set before `CurlEngine.perform`.
    var freshLane = false
    /// Who learns that this job waits for a connection (``ConnectionWait/observer``
    /// of the submitting task). Set before `CurlEngine.perform`.
    var waitObserver: (any ConnectionWaitObserver)?
    /// Where the job goes in the engine's queue (``TransferPriority/current`` of
    /// the submitting task). Set by `CurlEngine.perform`.
    var priority: TransferPriority = .interactive
    /// Whether the engine may stop the job while it runs for one of higher
    /// priority on a preempting lane (`LanePolicy.preempts`): its owner then
    /// tries again, as a download attempt does (it resumes with `Range`). Set
    /// before `CurlEngine.perform`.
    var yieldsToHigherPriority = false

    /// - Parameter tlsSessionCache: `.lane` for FTPS (`FTPEndpoint.tlsSessionCache`).
    init(hostKey: String, tlsSessionCache: TLSSessionCache = .own) {
        self.hostKey = hostKey
        easy = EasyHandle(tlsSessionCache: tlsSessionCache)
        // The context pointer is unretained: the engine keeps the job alive from
        // submission until the continuation is resumed, and libcurl stops calling
        // back once the handle is removed from the multi handle.
        let context = Unmanaged.passUnretained(self).toOpaque()
        easy.set(CURLOPT_WRITEDATA, pointer: context)
        easy.set(CURLOPT_HEADERDATA, pointer: context)
        easy.set(CURLOPT_READDATA, pointer: context)
        easy.set(CURLOPT_XFERINFODATA, pointer: context)
        easy.setCallback(CURLOPT_WRITEFUNCTION) { ptr, size, count, ctx in
            let job = Unmanaged<CurlJob>.fromOpaque(ctx!).takeUnretainedValue()
            CurlEngine.assertOnEngineThread()
            let n = size * count
            return job.didReceive(UnsafeRawBufferPointer(start: ptr, count: n)) ? n : FERRY_CURL_WRITEFUNC_ERROR
        }
        easy.setCallback(CURLOPT_HEADERFUNCTION) { ptr, size, count, ctx in
            let job = Unmanaged<CurlJob>.fromOpaque(ctx!).takeUnretainedValue()
            CurlEngine.assertOnEngineThread()
            let n = size * count
            return job.didReceiveHeader(UnsafeRawBufferPointer(start: ptr, count: n)) ? n : 0
        }
    }

    /// Installs the read callback for uploads; `readBody` supplies the bytes.
    func enableUpload() {
        easy.setCallback(CURLOPT_READFUNCTION) { ptr, size, count, ctx in
            let job = Unmanaged<CurlJob>.fromOpaque(ctx!).takeUnretainedValue()
            CurlEngine.assertOnEngineThread()
            let buffer = UnsafeMutableRawBufferPointer(start: ptr, count: size * count)
            return job.readBody(into: buffer) ?? FERRY_CURL_READFUNC_ABORT
        }
    }

    /// Installs the progress callback (`progress` is then called about once a second
    /// and on every chunk; returning false aborts).
    func enableProgress() {
        easy.setProgressCallback { ctx, dlTotal, dlNow, ulTotal, ulNow in
            let job = Unmanaged<CurlJob>.fromOpaque(ctx!).takeUnretainedValue()
            CurlEngine.assertOnEngineThread()
            return job.progress(
                downloadTotal: Int64(dlTotal), downloaded: Int64(dlNow), uploadTotal: Int64(ulTotal),
                uploaded: Int64(ulNow)) ? 0 : 1
        }
    }

    /// Installs the debug callback, which sees protocol text (FTP replies) as `debug`
    /// and hands it to `trace` when one is set.
    func enableDebug() {
        easy.set(CURLOPT_DEBUGDATA, pointer: Unmanaged.passUnretained(self).toOpaque())
        easy.setDebugCallback { _, type, data, size, ctx in
            let job = Unmanaged<CurlJob>.fromOpaque(ctx!).takeUnretainedValue()
            CurlEngine.assertOnEngineThread()
            let bytes = UnsafeRawBufferPointer(start: data, count: size)
            if let trace = job.trace {
                for line in RequestSettings.lines(type: type.rawValue, bytes) { trace(line) }
            }
            job.debug(type, bytes)
            return 0
        }
    }

    /// Who sees this job's protocol trace (``RequestSettings/trace``); set before `CurlEngine.perform`.
    var trace: (@Sendable (TraceLine) -> Void)?

    /// Applies the submitting task's ``RequestSettings`` over the job's own
    /// options (on the submitting thread, before the engine sees the job).
    func apply(_ settings: RequestSettings) {
        if let connect = settings.connectTimeout {
            easy.set(CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(connect / .milliseconds(1))))
        }
        if let stall = settings.stallTimeout {
            easy.set(CURLOPT_LOW_SPEED_LIMIT, 1)
            easy.set(CURLOPT_LOW_SPEED_TIME, max(1, Int(stall / .seconds(1))))
        }
        if let trace = settings.trace {
            self.trace = trace
            enableDebug()
        }
    }

    // MARK: Engine-thread callbacks, for subclasses.

    /// Body bytes arrived. Return false to abort the transfer.
    func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool { true }

    /// One header line arrived (with its CRLF). Return false to abort.
    func didReceiveHeader(_ line: UnsafeRawBufferPointer) -> Bool { true }

    /// Fill `buffer` with upload bytes; 0 means end of data, nil aborts.
    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int? { 0 }

    /// Progress from libcurl. Return false to abort.
    func progress(downloadTotal: Int64, downloaded: Int64, uploadTotal: Int64, uploaded: Int64)
        -> Bool
    { true }

    /// Protocol text libcurl logs (server replies arrive as `CURLINFO_HEADER_IN`).
    func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer) {}

    /// Called once on the engine thread after the transfer left the multi handle,
    /// before the awaiting task resumes: the last moment the handle may be read.
    func didComplete(_ completion: CurlCompletion) {}

    /// Called once on the engine thread right after `didComplete`, for work that
    /// every job of a kind does at its end whatever its subclass decided
    /// (`DownloadAttempt` hands its write buffer back).
    func didEnd() {}

    /// Hands the completion to the task awaiting `CurlEngine.perform`: called
    /// once on the engine thread after `didEnd`, as the job's last step there
    /// (the job's fields are handed over already). The default resumes at once.
    /// A job whose awaiting task would only pass the work on to another thread
    /// may take the continuation along and resume it from there, once, from any
    /// thread: a finished download goes straight to its flush
    /// (`DownloadAttempt`), one thread hand-over fewer per file.
    func handOver(_ completion: CurlCompletion, to continuation: CheckedContinuation<CurlCompletion, Never>) {
        continuation.resume(returning: completion)
    }
}
