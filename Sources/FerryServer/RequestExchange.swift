import Foundation

/// One request on one connection, from its headers to its completion: the
/// head, the body as it arrives, and the temporary files to delete at the end.
///
/// Confined to the connection's thread (thread-per-connection mode); never shared.
final class RequestExchange {
    private enum Sink {
        case none
        case memory(Data)
        /// Created on the first byte, so empty bodies make no file.
        case file(TemporaryFile?)
        case multipart(MultipartParser)
    }

    let method: String
    let target: String
    let version: String
    let headers: HTTPHeaders
    let remote: (host: String, port: Int)?
    /// An answer decided by the server itself (400, 413, 431, 500); the
    /// handler is not called.
    private(set) var failure: HTTPResponse?
    /// Set once a response is queued.
    var responded = false

    private let options: HTTPServer.Options
    private var sink: Sink = .none
    private var received: Int64 = 0
    private var body: HTTPRequest.Body = .none
    /// Files to delete when the request completes (the handler may have moved them).
    private var temporaryFiles: [String] = []

    init(
        method: String, target: String, version: String, headers: HTTPHeaders, remote: (host: String, port: Int)?,
        options: HTTPServer.Options
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.remote = remote
        self.options = options
        checkHead()
    }

    deinit {
        discardFiles()
    }

    /// Validates the head and picks where the body goes.
    private func checkHead() {
        var headerSize = method.utf8.count + target.utf8.count + version.utf8.count + 4
        for field in headers { headerSize += field.name.utf8.count + field.value.utf8.count + 4 }
        guard headerSize + 2 <= options.maxHeaderSize else {
            failure = .status(431)
            return
        }
        // A NUL would cut the path short in every C file API.
        guard !URLTarget.split(target).path.contains("%00") else {
            failure = .text("400 Bad Request: NUL in path\n", status: 400)
            return
        }
        let length = headers["Content-Length"].flatMap { Int64($0.trimmingSpaces()) }
        let chunked = headers["Transfer-Encoding"] != nil
        if let length, length > options.maxBodySize {
            failure = tooLarge()
            return
        }
        guard chunked || (length ?? 0) > 0 else { return }
        let declared = length ?? 0
        if let contentType = headers["Content-Type"],
            let boundary = MultipartParser.boundary(fromContentType: contentType)
        {
            do throws(MultipartError) {
                sink = .multipart(
                    try MultipartParser(
                        boundary: boundary, directory: options.temporaryDirectory, limits: options.multipartLimits))
            } catch {
                failure = .text("400 Bad Request: \(error)\n", status: 400)
            }
        } else if chunked || declared <= Int64(options.memoryBodyLimit) {
            // A chunked body starts in memory and moves to a file if it outgrows it.
            sink = .memory(Data(capacity: chunked ? 0 : Int(declared)))
        } else {
            sink = .file(nil)
        }
    }

    /// Takes the next piece of the body; on a problem sets ``failure`` (the
    /// caller then answers at once and reads no more of it).
    func consume(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        received += Int64(bytes.count)
        guard received <= options.maxBodySize else {
            failure = tooLarge()
            dropSink()
            return
        }
        do throws(MultipartError) {
            switch sink {
            case .none:
                break
            case .memory(var data):
                sink = .none  // keep `data` uniquely referenced while appending
                if data.count + bytes.count <= options.memoryBodyLimit {
                    data.append(contentsOf: bytes)
                    sink = .memory(data)
                } else {
                    // A chunked body outgrew memory: move it to a file.
                    let file = try TemporaryFile(directory: options.temporaryDirectory, prefix: "ferry-body")
                    temporaryFiles.append(file.path)
                    sink = .file(file)
                    try file.write(data)
                    try file.write(bytes)
                }
            case .file(let existing):
                let file: TemporaryFile
                if let existing {
                    file = existing
                } else {
                    file = try TemporaryFile(directory: options.temporaryDirectory, prefix: "ferry-body")
                    temporaryFiles.append(file.path)
                    sink = .file(file)
                }
                try file.write(bytes)
            case .multipart(let parser):
                try parser.feed(bytes)
            }
        } catch {
            failure = response(for: error)
            dropSink()
        }
    }

    /// Ends the body. Afterwards either ``failure`` is set or ``request`` is complete.
    func finishBody() {
        guard failure == nil else { return }
        do throws(MultipartError) {
            switch sink {
            case .none:
                body = .none
            case .memory(let data):
                body = data.isEmpty ? .none : .data(data)
            case .file(let file):
                if let file {
                    try file.close()
                    body = .file(path: file.path, size: file.size)
                } else {
                    body = .none
                }
            case .multipart(let parser):
                let parts = try parser.finish()
                for part in parts {
                    if case .file(let path, _) = part.content { temporaryFiles.append(path) }
                }
                body = .multipart(parts)
            }
            sink = .none
        } catch {
            failure = response(for: error)
            dropSink()
        }
    }

    /// The request for the handler.
    var request: HTTPRequest {
        HTTPRequest(
            method: method, target: target, version: version, headers: headers, remoteAddress: remote?.host,
            remotePort: remote?.port, body: body)
    }

    /// Deletes every temporary file of this request that is still there.
    func discardFiles() {
        dropSink()
        for path in temporaryFiles { unlink(path) }
        temporaryFiles = []
    }

    private func dropSink() {
        switch sink {
        case .file(let file): file?.discard()
        case .multipart(let parser): parser.cancel()
        default: break
        }
        sink = .none
    }

    private func tooLarge() -> HTTPResponse {
        .text("413 Content Too Large: the limit is \(options.maxBodySize) bytes\n", status: 413)
    }

    private func response(for error: MultipartError) -> HTTPResponse {
        switch error.code {
        case .fileSystem: .text("500 Internal Server Error: \(error.detail)\n", status: 500)
        case .noSpace: .text("507 Insufficient Storage: \(error.detail)\n", status: 507)
        case .fieldTooLarge, .tooManyParts: .text("413 Content Too Large: \(error)\n", status: 413)
        default: .text("400 Bad Request: \(error)\n", status: 400)
        }
    }
}
