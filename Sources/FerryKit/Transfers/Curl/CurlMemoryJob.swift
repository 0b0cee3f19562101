import CCurl
import Foundation

/// What a protocol adds to a read into memory (`CurlMemoryJob`): it keeps what
/// the server said (response headers, a reply log) for its backend to judge
/// once the job ended, and says before the first body byte how the body
/// relates to the bytes asked for. Every member is required, as in
/// `DownloadAttemptAdapter`.
///
/// Engine-thread confined while the job runs; `configure` runs on the
/// submitting thread, before the engine sees the job.
protocol MemoryReadReply {
    /// Sets the job's handle up (`enableDebug` for a protocol whose replies
    /// `debug` reads).
    mutating func configure(_ job: CurlJob)
    /// A response header line as libcurl gives it (with its CRLF).
    mutating func header(_ line: UnsafeRawBufferPointer)
    /// Protocol text libcurl logs (`CurlJob.debug`), for `job` to act on.
    mutating func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer, job: CurlJob)
    /// What the body is, judged before its first byte, for bytes asked for
    /// from `start` on.
    func body(askedFrom start: Int64) -> MemoryReadBody
}

/// What a read's body is, as its protocol judges it before the first byte.
enum MemoryReadBody: Sendable, Hashable {
    /// The asked bytes, from the asked start; `total` is the file's size when
    /// the server named it.
    case asked(total: Int64?)
    /// The whole file from its first byte (the server ignored the range):
    /// the bytes before the asked start are skipped.
    case wholeFile(total: Int64?)
    /// None of the asked bytes: the transfer stops with no body kept (the
    /// backend says why from its `MemoryReadReply`).
    case none
}

/// A read into memory with a hard cap: keeps at most `capacity` body bytes and
/// stops the transfer as soon as more arrive, so a server that sends more than
/// was asked for (one that ignores a range) is cut off, not read to the end.
///
/// Its `Reply` judges the body before its first byte (`MemoryReadBody`): the
/// asked bytes are kept, a whole file has its first `start` bytes skipped,
/// anything else stops the transfer with no body kept; with `sizeLimit` a size
/// announced over it stops the transfer before any body is kept.
///
/// Engine-thread confined while running (see `CurlJob`); the awaiting task reads
/// the results (`reply` among them) after `CurlEngine.perform` returned.
final class CurlMemoryJob<Reply: MemoryReadReply>: CurlJob, @unchecked Sendable {
    /// What the server said, as the protocol keeps it.
    private(set) var reply: Reply
    /// The bytes kept.
    private(set) var body: [UInt8] = []
    let capacity: Int
    let start: Int64
    let sizeLimit: Int64?
    /// Set when the body reached `capacity` and the transfer was stopped for it.
    private(set) var filled = false
    /// The size the server announced, when it was over `sizeLimit`.
    private(set) var announcedOverLimit: Int64?
    private var decided = false
    private var toSkip: Int64 = 0

    init(
        _ reply: Reply, hostKey: String, capacity: Int, start: Int64, sizeLimit: Int64? = nil,
        tlsSessionCache: TLSSessionCache = .own
    ) {
        self.reply = reply
        self.capacity = capacity
        self.start = start
        self.sizeLimit = sizeLimit
        super.init(hostKey: hostKey, tlsSessionCache: tlsSessionCache)
        self.reply.configure(self)
    }

    override func didReceiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        reply.header(line)
        return true
    }

    override func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer) {
        reply.debug(type, text, job: self)
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !decided {
            decided = true
            if !decide() { return false }
        }
        var chunk = bytes[...]
        if toSkip > 0 {
            let n = Int(min(toSkip, Int64(chunk.count)))
            toSkip -= Int64(n)
            chunk = chunk.dropFirst(n)
        }
        let room = capacity - body.count
        body.append(contentsOf: chunk.prefix(room))
        if chunk.count > room {
            filled = true
            return false
        }
        return true
    }

    /// Judges the body before its first byte; false stops the transfer.
    private func decide() -> Bool {
        let total: Int64?
        switch reply.body(askedFrom: start) {
        case .asked(let size):
            total = size
        case .wholeFile(let size):
            toSkip = start
            total = size
        case .none:
            return false
        }
        if let sizeLimit, let total, total > sizeLimit {
            announcedOverLimit = total
            return false
        }
        return true
    }
}
