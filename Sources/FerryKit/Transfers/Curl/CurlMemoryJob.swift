import CCurl
import Foundation

/// A read into memory with a hard cap: keeps at most `capacity` body bytes and
/// stops the transfer as soon as more arrive, so a server that sends more than
/// was asked for (one that ignores `Range`) is cut off, not read to the end.
///
/// Over HTTP it judges the response before the first body byte as a download
/// does (`HTTPRangeReply`): a `206` of the asked bytes is kept, a `200` (Range
/// ignored) has its first `start` bytes skipped, anything else stops the
/// transfer with no body kept (`HTTPMemoryRead` says why); with `sizeLimit` a
/// size announced over it stops the transfer before any body is kept. Over FTP
/// (`ftp` true) libcurl's `REST` does the skipping and the server replies go
/// into `log`.
///
/// Engine-thread confined while running (see `CurlJob`); the awaiting task reads
/// the results after `CurlEngine.perform` returned.
final class CurlMemoryJob: CurlJob, @unchecked Sendable {
    /// Response headers of the final response (HTTP).
    var headers = HTTPHeaders()
    /// Server replies (FTP).
    var log = FTPReplyLog()
    /// The bytes kept.
    private(set) var body: [UInt8] = []
    let capacity: Int
    let start: Int64
    let sizeLimit: Int64?
    let ftp: Bool
    /// Set when the body reached `capacity` and the transfer was stopped for it.
    private(set) var filled = false
    /// The size the server announced, when it was over `sizeLimit`.
    private(set) var announcedOverLimit: Int64?
    private var decided = false
    private var toSkip: Int64 = 0

    init(
        hostKey: String, capacity: Int, start: Int64, sizeLimit: Int64? = nil, ftp: Bool = false,
        tlsSessionCache: TLSSessionCache = .own
    ) {
        self.capacity = capacity
        self.start = start
        self.sizeLimit = sizeLimit
        self.ftp = ftp
        super.init(hostKey: hostKey, tlsSessionCache: tlsSessionCache)
        if ftp { enableDebug() }
    }

    override func didReceiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        if !ftp { headers.consume(line: line) }
        return true
    }

    override func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer) {
        followFTP(&log, type, text)
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !decided {
            decided = true
            if !ftp && !decide() { return false }
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

    /// Judges an HTTP response before its first body byte; false stops it.
    private func decide() -> Bool {
        let total: Int64?
        switch HTTPRangeReply(status: headers.status, headers: headers, offset: start) {
        case .fromOffset(let size):
            total = size
        case .wholeFile(let size):
            // The server ignored Range and sends the file from its first byte.
            toSkip = start
            total = size
        case .pastEnd, .notTheRange, .error, .unexpected:
            // No byte of this body is one of the file's asked bytes.
            return false
        }
        if let sizeLimit, let total, total > sizeLimit {
            announcedOverLimit = total
            return false
        }
        return true
    }
}
