import Foundation

/// A streaming `multipart/form-data` parser (RFC 7578, RFC 2046 section 5.1).
///
/// Feed the body in chunks of any size, down to single bytes, then call
/// ``finish()``. File parts (those with a `filename`) are written to
/// temporary files in `directory` as they arrive; plain fields are kept in
/// memory up to ``Limits/maxFieldSize``. The parser holds at most one chunk
/// plus a part's header block (``Limits/maxPartHeaderSize``) plus a 64 KiB
/// write buffer, whatever the body size.
///
/// The files of a successful ``finish()`` belong to the caller (delete or
/// move them). When parsing fails, or the parser is dropped before
/// ``finish()``, it deletes its files itself.
///
/// Not thread-safe: one parser is fed by one thread at a time.
public final class MultipartParser {
    /// Bounds on what a client can make the parser hold.
    public struct Limits: Sendable, Hashable {
        /// Largest header block of one part, in bytes.
        public var maxPartHeaderSize: Int
        /// Largest in-memory field (a part without `filename`), in bytes.
        public var maxFieldSize: Int
        /// Most parts in one body.
        public var maxParts: Int

        /// Creates limits.
        ///
        /// - Parameters:
        ///   - maxPartHeaderSize: Largest header block of one part.
        ///   - maxFieldSize: Largest in-memory field.
        ///   - maxParts: Most parts in one body.
        public init(maxPartHeaderSize: Int = 8 * 1024, maxFieldSize: Int = 1024 * 1024, maxParts: Int = 1000) {
            self.maxPartHeaderSize = maxPartHeaderSize
            self.maxFieldSize = maxFieldSize
            self.maxParts = maxParts
        }
    }

    private enum State {
        case preamble
        case afterDelimiter
        case headers
        case body
        case epilogue
        case failed
        case finished
    }

    private enum Sink {
        case memory(Data)
        case file(TemporaryFile)
    }

    private static let cr = UInt8(ascii: "\r")
    private static let headerEnd: [UInt8] = Array("\r\n\r\n".utf8)
    private static let maxPadding = 256

    private let delimiter: [UInt8]
    private let directory: String
    private let limits: Limits
    private var state = State.preamble
    /// Bytes received but not yet consumed by the state machine.
    private var buffer: [UInt8]
    private var padding = 0
    private var headerScanned = 0
    private var parts: [MultipartPart] = []
    private var files: [TemporaryFile] = []
    private var current: (headers: HTTPHeaders, name: String?, filename: String?, contentType: String?)?
    private var sink: Sink?

    /// Creates a parser for `boundary`.
    ///
    /// - Parameters:
    ///   - boundary: The `boundary` parameter of the body's `Content-Type`.
    ///   - directory: Where file parts are written.
    ///   - limits: Bounds on part headers, fields and part count.
    /// - Throws: ``MultipartError/Code/malformed`` for an empty boundary or one
    ///   longer than 200 bytes.
    public init(boundary: String, directory: String, limits: Limits = Limits()) throws(MultipartError) {
        guard !boundary.isEmpty, boundary.utf8.count <= 200 else {
            throw .malformed("invalid boundary \"\(boundary.prefix(40))\"")
        }
        self.delimiter = Array("\r\n--\(boundary)".utf8)
        self.directory = directory
        self.limits = limits
        // A virtual CRLF lets the first delimiter match at the very start of the body.
        self.buffer = [Self.cr, UInt8(ascii: "\n")]
    }

    deinit {
        if state != .finished {
            for file in files { file.discard() }
        }
    }

    /// The `boundary` parameter of a `multipart/form-data` content type, or
    /// `nil` when `contentType` is something else.
    ///
    /// - Parameter contentType: A `Content-Type` header value.
    public static func boundary(fromContentType contentType: String) -> String? {
        let parsed = HeaderParameters(parsing: contentType)
        guard parsed.value == "multipart/form-data", let boundary = parsed["boundary"], !boundary.isEmpty else {
            return nil
        }
        return boundary
    }

    /// Consumes the next bytes of the body.
    ///
    /// - Throws: ``MultipartError``; the parser is then unusable and has
    ///   deleted its files.
    public func feed(_ bytes: UnsafeRawBufferPointer) throws(MultipartError) {
        switch state {
        case .failed, .finished: throw .malformed("parser already finished")
        case .epilogue: return  // RFC 2046: ignore the epilogue
        default: break
        }
        buffer.append(contentsOf: bytes)
        do {
            try process()
        } catch {
            fail()
            throw error
        }
    }

    /// Consumes the next bytes of the body.
    ///
    /// - Throws: ``MultipartError``.
    public func feed(_ data: Data) throws(MultipartError) {
        try withBytes(of: data) { (bytes) throws(MultipartError) in try feed(bytes) }
    }

    /// Ends the body and returns the parts in order.
    ///
    /// - Returns: The parts; their files now belong to the caller.
    /// - Throws: ``MultipartError/Code/malformed`` when the closing boundary
    ///   never came.
    public func finish() throws(MultipartError) -> [MultipartPart] {
        guard state == .epilogue else {
            let reason =
                switch state {
                case .preamble: "no boundary found"
                case .failed, .finished: "parser already finished"
                default: "body ends before the closing boundary"
                }
            fail()
            throw .malformed(reason)
        }
        state = .finished
        buffer = []
        return parts
    }

    /// Stops and deletes every file written so far.
    public func cancel() {
        fail()
    }

    private func fail() {
        if case .file(let file) = sink { file.discard() }
        sink = nil
        for file in files { file.discard() }
        files = []
        parts = []
        buffer = []
        if state != .finished { state = .failed }
    }

    // MARK: - State machine

    private func process() throws(MultipartError) {
        var position = 0
        scan: while true {
            switch state {
            case .preamble:
                if let found = find(delimiter, from: position) {
                    position = found + delimiter.count
                    padding = 0
                    state = .afterDelimiter
                } else {
                    position = max(position, buffer.count - (delimiter.count - 1))
                    break scan
                }

            case .afterDelimiter:
                while position < buffer.count,
                    buffer[position] == UInt8(ascii: " ") || buffer[position] == UInt8(ascii: "\t")
                {
                    position += 1
                    padding += 1
                    guard padding <= Self.maxPadding else { throw .malformed("garbage after a boundary") }
                }
                guard buffer.count - position >= 2 else { break scan }
                if buffer[position] == UInt8(ascii: "-"), buffer[position + 1] == UInt8(ascii: "-") {
                    position = buffer.count
                    state = .epilogue
                    break scan
                }
                guard buffer[position] == Self.cr, buffer[position + 1] == UInt8(ascii: "\n") else {
                    throw .malformed("garbage after a boundary")
                }
                // Keep the CRLF: the header block is found as CRLF ... CRLF CRLF,
                // which also matches an empty block.
                headerScanned = 0
                state = .headers

            case .headers:
                let start = position
                if let end = find(Self.headerEnd, from: start + headerScanned) {
                    let block = end > start ? Array(buffer[(start + 2)..<end]) : []
                    guard block.count <= limits.maxPartHeaderSize else {
                        throw .headersTooLarge(limits.maxPartHeaderSize)
                    }
                    try beginPart(headerBlock: block)
                    position = end + Self.headerEnd.count
                    state = .body
                } else {
                    // The kept CRLF, the block, and up to 3 bytes of an unfinished
                    // CRLFCRLF: `+ 5`, or a block of exactly the limit is refused
                    // when a chunk happens to end inside its terminator.
                    guard buffer.count - start <= limits.maxPartHeaderSize + 5 else {
                        throw .headersTooLarge(limits.maxPartHeaderSize)
                    }
                    headerScanned = max(0, buffer.count - start - (Self.headerEnd.count - 1))
                    break scan
                }

            case .body:
                if let found = find(delimiter, from: position) {
                    try emit(position..<found)
                    try endPart()
                    position = found + delimiter.count
                    padding = 0
                    state = .afterDelimiter
                } else {
                    // Only a tail starting with CR can be the start of the delimiter.
                    var keep = buffer.count
                    let window = max(position, buffer.count - (delimiter.count - 1))
                    if let cr = buffer[window...].firstIndex(of: Self.cr) { keep = cr }
                    try emit(position..<keep)
                    position = keep
                    break scan
                }

            case .epilogue, .failed, .finished:
                position = buffer.count
                break scan
            }
        }
        buffer.removeFirst(position)
    }

    /// The index of the first occurrence of `needle` at or after `start`.
    /// (memchr for the first byte, memcmp for the rest; Glibc's memmem is
    /// not visible from Swift.)
    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard buffer.count - start >= needle.count else { return nil }
        return buffer.withUnsafeBytes { haystack in
            needle.withUnsafeBytes { needleBytes in
                let base = haystack.baseAddress!
                let last = haystack.count - needleBytes.count  // last possible start
                var index = start
                while index <= last {
                    guard let hit = memchr(base + index, Int32(needleBytes[0]), last - index + 1) else { return nil }
                    index = UnsafeRawPointer(hit) - base
                    if memcmp(base + index, needleBytes.baseAddress!, needleBytes.count) == 0 { return index }
                    index += 1
                }
                return nil
            }
        }
    }

    private func beginPart(headerBlock: [UInt8]) throws(MultipartError) {
        guard parts.count < limits.maxParts else { throw .tooManyParts(limits.maxParts) }
        let headers = Self.parseHeaders(headerBlock)
        let disposition = headers["Content-Disposition"].map(HeaderParameters.init(parsing:))
        let name = disposition?["name"]
        let filename = disposition?["filename"]
        current = (headers, name, filename, headers["Content-Type"])
        if filename != nil {
            let file = try TemporaryFile(directory: directory, prefix: "ferry-upload")
            files.append(file)
            sink = .file(file)
        } else {
            sink = .memory(Data())
        }
    }

    private func emit(_ range: Range<Int>) throws(MultipartError) {
        guard !range.isEmpty, let sink else { return }
        switch sink {
        case .file(let file):
            try withBytes(of: buffer) { (bytes) throws(MultipartError) in
                try file.write(UnsafeRawBufferPointer(rebasing: bytes[range]))
            }
        case .memory(var data):
            guard data.count + range.count <= limits.maxFieldSize else {
                throw .fieldTooLarge(current?.name, limit: limits.maxFieldSize)
            }
            self.sink = nil  // keep `data` uniquely referenced while appending
            data.append(contentsOf: buffer[range])
            self.sink = .memory(data)
        }
    }

    private func endPart() throws(MultipartError) {
        guard let current, let sink else { return }
        let content: MultipartPart.Content
        switch sink {
        case .file(let file):
            try file.close()
            content = .file(path: file.path, size: file.size)
        case .memory(let data):
            content = .data(data)
        }
        parts.append(
            MultipartPart(
                headers: current.headers, name: current.name, filename: current.filename,
                contentType: current.contentType, content: content))
        self.current = nil
        self.sink = nil
    }

    /// Splits a header block into fields. Lines are CRLF- (or LF-) separated;
    /// obsolete folded lines are joined; lines without a colon are skipped.
    /// Bytes that are not UTF-8 are read as ISO 8859-1.
    static func parseHeaders(_ block: [UInt8]) -> HTTPHeaders {
        // Split bytes, not Characters: in Swift "\r\n" is one Character.
        var lines: [String] = []
        for raw in block.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            let bytes = raw.last == cr ? raw.dropLast() : raw[...]
            let line = String(validating: bytes, as: UTF8.self) ?? String(bytes.map { Character(Unicode.Scalar($0)) })
            if let first = line.first, first == " " || first == "\t", !lines.isEmpty {
                lines[lines.count - 1] += " " + line.trimmingSpaces()
            } else {
                lines.append(line)
            }
        }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(
                name: String(line[..<colon].trimmingSpaces()),
                value: String(line[line.index(after: colon)...].trimmingSpaces()))
        }
        return headers
    }
}
