import CCurl
import Foundation

extension HTTPFileSystem {
    /// Ranges come with `Range` requests; a server that ignores them is cut off
    /// once the range is read.
    public var capabilities: RemoteCapabilities { [.rangeReads] }

    /// Reads one byte range with a `Range` request (see ``RemoteFileSystem/data(at:range:)``).
    public func data(at path: String, range: Range<Int64>) async throws(FerryError) -> Data {
        try await memoryFile(path).data(range: range)
    }

    /// Reads a whole file, refusing it before its body when the server announces
    /// a size over `limit`, else after `limit + 1` bytes.
    public func data(at path: String, limit: Int) async throws(FerryError) -> Data {
        try await memoryFile(path).data(limit: limit)
    }

    private func memoryFile(_ path: String) -> HTTPMemoryRead.File {
        HTTPMemoryRead.File(shown: target(path).redacted, engine: engine, verifyTLS: verifyTLS, settings: settings) {
            target(path)
        }
    }

    /// The URL of `path`, keeping the query of the URL this file system was opened with.
    private func target(_ path: String) -> RemoteURL { url.file(at: path) }
}

/// Capped HTTP reads into memory, for HTTP, WebDAV and the cards.
enum HTTPMemoryRead {
    /// A file one of these backends reads into memory: where it is (looked up
    /// for each read, where a card hands out links), how to ask for it, and its
    /// name in errors. Its two reads are the backends' `data(at:range:)` and
    /// `data(at:limit:)`.
    struct File {
        /// The file as errors name it (a redacted URL).
        let shown: String
        let engine: CurlEngine
        /// The scheme libcurl speaks (`http` for a card, `https` for `davs://`); nil: the URL's own.
        var wireScheme: String? = nil
        var verifyTLS = true
        /// An HTTP file system's credentials, headers and CA file; nil: the URL's own credentials.
        var settings: HTTPRequestSettings? = nil
        /// The file's URL.
        let url: () async throws(FerryError) -> RemoteURL

        /// The bytes of `range`.
        func data(range: Range<Int64>) async throws(FerryError) -> Data {
            Data(try await read(range, sizeLimit: nil))
        }

        /// The whole file, refused over `limit` bytes (``HTTPMemoryRead/whole(limit:shown:_:)``).
        func data(limit: Int) async throws(FerryError) -> Data {
            try await whole(limit: limit, shown: shown) { (range, sizeLimit) async throws(FerryError) -> [UInt8] in
                try await read(range, sizeLimit: sizeLimit)
            }
        }

        private func read(_ range: Range<Int64>, sizeLimit: Int64?) async throws(FerryError) -> [UInt8] {
            try await HTTPMemoryRead.read(
                try await url(), wireScheme: wireScheme, range: range, sizeLimit: sizeLimit, engine: engine,
                verifyTLS: verifyTLS, settings: settings)
        }
    }

    /// A whole file of at most `limit` bytes, as each of these backends'
    /// `data(at:limit:)` reads one: `read` asks for the range `0..<limit + 1`
    /// with `limit` as its size limit (refused before the body when the server
    /// announces more); a byte past `limit` that still arrives refuses it after.
    static func whole(
        limit: Int, shown: @autoclosure () -> String,
        _ read: (_ range: Range<Int64>, _ sizeLimit: Int64) async throws(FerryError) -> [UInt8]
    ) async throws(FerryError) -> Data {
        let limit = max(0, limit)
        let bytes = try await read(0..<Int64(limit) + 1, Int64(limit))
        guard bytes.count <= limit else {
            throw FerryError.overLimit(limit, size: nil, operation: "read", target: shown())
        }
        return Data(bytes)
    }

    /// Reads `range` of `target`, the response judged as a download judges it
    /// (`HTTPRangeReply`): a `206` of the asked bytes gives them, a `200` (Range
    /// ignored) is skipped up to the range and cut off after it, a `416` means
    /// the range starts past the end (no bytes); a `206` of other bytes, or a
    /// `416` that names a size past the range's start, is the server's error.
    ///
    /// - Parameters:
    ///   - sizeLimit: Stop before the body when the announced size is over it.
    ///   - settings: An HTTP file system's credentials, headers and CA file
    ///     (nil: the URL's own credentials only, as for a FlashAir card).
    static func read(
        _ target: RemoteURL, wireScheme: String? = nil, range: Range<Int64>, sizeLimit: Int64?, engine: CurlEngine,
        verifyTLS: Bool, settings: HTTPRequestSettings? = nil, operation: String = "read"
    ) async throws(FerryError) -> [UInt8] {
        let display = target.redacted
        guard range.lowerBound >= 0 else { throw FerryError.badRange(range, operation: operation, target: display) }
        if range.isEmpty { return [] }
        let capacity = Int(min(range.upperBound - range.lowerBound, Int64(Int32.max)))
        let job = CurlMemoryJob(
            HTTPMemoryReply(), hostKey: target.hostKey, capacity: capacity, start: range.lowerBound,
            sizeLimit: sizeLimit)
        if let settings {
            HTTPFileSystem.configure(job.easy, url: target, scheme: wireScheme, settings: settings)
        } else {
            HTTPFileSystem.configure(job.easy, url: target, scheme: wireScheme, verifyTLS: verifyTLS)
        }
        job.easy.set(CURLOPT_RANGE, "\(range.lowerBound)-\(range.lowerBound + Int64(capacity) - 1)")
        job.easy.setTimeouts(connect: .seconds(15), stall: .seconds(30))
        let c = await engine.perform(job)
        if c.interrupted { throw FerryError(.cancelled, operation: operation, target: display) }
        let status = job.reply.headers.status != 0 ? job.reply.headers.status : c.responseCode
        if status != 0 {
            // Judged as a download judges it (and as the job did before the first byte).
            switch HTTPRangeReply(status: status, headers: job.reply.headers, offset: range.lowerBound) {
            case .pastEnd(let total):
                // Nothing from the range's start on. A size past that start
                // contradicts the refusal: a download starts over on it.
                guard let total, total > range.lowerBound else { return [] }
                throw FerryError(
                    .protocolError, operation: operation, target: display, serverCode: status,
                    serverText: job.reply.headers.reason,
                    detail: "asked for bytes from \(range.lowerBound), refused as past the end of \(total) bytes")
            case .error:
                throw FerryError.http(
                    status: status, reason: job.reply.headers.reason, operation: operation, target: display)
            case .notTheRange(let reason):
                throw FerryError(
                    .protocolError, operation: operation, target: display, serverCode: status,
                    serverText: job.reply.headers.reason,
                    detail: [reason, job.reply.headers["Content-Range"].map { "Content-Range: \($0)" }].compactMap {
                        $0
                    }
                    .joined(separator: "; "))
            case .unexpected:
                throw HTTPRangeReply.unexpected(
                    status, reason: job.reply.headers.reason, operation: operation, target: display)
            case .fromOffset, .wholeFile:
                break
            }
        }
        if let total = job.announcedOverLimit, let sizeLimit {
            throw FerryError.overLimit(Int(sizeLimit), size: total, operation: operation, target: display)
        }
        guard c.code == .ok || job.filled else {
            throw HTTPFileSystem.failure(
                c, headers: job.reply.headers, bodyStarted: !job.body.isEmpty, operation: operation, target: display)
        }
        return job.body
    }
}

/// What HTTP adds to a read into memory (`CurlMemoryJob`): the final
/// response's headers, and its body judged by `HTTPRangeReply` as a download
/// judges it (a `206` of the asked bytes, a `200` that ignored `Range`, the
/// rest none of the asked bytes, which `HTTPMemoryRead` words).
struct HTTPMemoryReply: MemoryReadReply {
    private(set) var headers = HTTPHeaders()

    func configure(_ job: CurlJob) {}

    mutating func header(_ line: UnsafeRawBufferPointer) {
        headers.consume(line: line)
    }

    func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer, job: CurlJob) {}

    func body(askedFrom start: Int64) -> MemoryReadBody {
        switch HTTPRangeReply(status: headers.status, headers: headers, offset: start) {
        case .fromOffset(let total): return .asked(total: total)
        case .wholeFile(let total): return .wholeFile(total: total)
        case .pastEnd, .notTheRange, .error, .unexpected: return .none
        }
    }
}
