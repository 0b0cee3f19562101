import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns an ``HTTPResponse`` into a libmicrohttpd response for one request:
/// file bodies with validators and `Range`, pacing when a rate is set.
///
/// Used on the connection's own thread, right before `MHD_queue_response`.
struct ResponseWriter {
    /// The request method (HEAD bodies are never read, so never paced).
    var method: String
    /// The request headers (`Range`, `If-Range`).
    var requestHeaders: HTTPHeaders
    /// Pace for response bodies, or `nil`.
    var bytesPerSecond: Int?
    var stop: StopSignal

    /// Queues `response` on `connection`.
    ///
    /// - Returns: `false` when libmicrohttpd refused it; the caller then closes the connection.
    func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> Bool {
        var (status, headers, handle) = make(response)
        if handle == nil || !(100...999).contains(status) {
            (status, headers, handle) = make(.status(500))
        }
        guard let handle else { return false }
        defer { MHD_destroy_response(handle) }
        for field in headers where field.name.lowercased() != "content-length" {
            // libmicrohttpd refuses values with CR or LF; such a header is dropped.
            _ = MHD_add_response_header(handle, field.name, field.value)
        }
        return MHD_queue_response(connection, UInt32(status), handle) == .YES
    }

    private var paced: Int? {
        method == "HEAD" ? nil : bytesPerSecond
    }

    private func make(_ response: HTTPResponse) -> (Int, HTTPHeaders, OpaquePointer?) {
        var headers = response.headers
        switch response.body {
        case .empty:
            return (response.status, headers, MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT))
        case .text(let text):
            if !headers.contains("Content-Type") {
                headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            }
            return (response.status, headers, bytes(Data(text.utf8)))
        case .data(let data):
            if !headers.contains("Content-Type") {
                headers.add(name: "Content-Type", value: "application/octet-stream")
            }
            return (response.status, headers, bytes(data))
        case .file(let path, let contentType):
            if !headers.contains("Content-Type") { headers.add(name: "Content-Type", value: contentType) }
            return file(path, status: response.status, headers: headers, supportsRanges: response.supportsRanges)
        }
    }

    private func bytes(_ data: Data) -> OpaquePointer? {
        if let paced, !data.isEmpty {
            return PacedBody(source: .data(data), length: Int64(data.count), bytesPerSecond: paced, stop: stop)
                .makeResponse()
        }
        return data.withUnsafeBytes { raw in
            MHD_create_response_from_buffer(
                raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
        }
    }

    private func file(
        _ path: String, status: Int, headers: HTTPHeaders, supportsRanges: Bool
    ) -> (Int, HTTPHeaders, OpaquePointer?) {
        var headers = headers
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            return errorResponse(code == EACCES || code == EPERM ? 403 : code == ENOENT || code == ENOTDIR ? 404 : 500)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            Sys.close(fd)
            return errorResponse(404)
        }
        let size = Int64(info.st_size)
        let modified = Int(info.st_mtim.tv_sec)
        let nanoseconds = Int(info.st_mtim.tv_nsec)
        // Changes with size or modification time; the inode tells apart a replaced file.
        let inode = String(info.st_ino, radix: 16)
        let stamp = String(modified * 1_000_000_000 + nanoseconds, radix: 16)
        let etag = "\"\(inode)-\(String(size, radix: 16))-\(stamp)\""
        let lastModified = HTTPDate.format(secondsSince1970: modified)
        headers.replaceOrAdd(name: "ETag", value: etag)
        headers.replaceOrAdd(name: "Last-Modified", value: lastModified)

        var decision = ByteRangeDecision.full
        if supportsRanges {
            headers.replaceOrAdd(name: "Accept-Ranges", value: "bytes")
            if status == 200, method == "GET" || method == "HEAD",
                ByteRange.ifRangeMatches(requestHeaders["If-Range"], etag: etag, lastModified: lastModified)
            {
                decision = ByteRange.decide(range: requestHeaders["Range"], size: size)
            }
        }
        var status = status
        let offset: Int64
        let length: Int64
        switch decision {
        case .full:
            (offset, length) = (0, size)
        case .partial(let lower, let upper):
            (offset, length) = (lower, upper - lower + 1)
            status = 206
            headers.replaceOrAdd(name: "Content-Range", value: "bytes \(lower)-\(upper)/\(size)")
        case .unsatisfiable:
            Sys.close(fd)
            var (_, errorHeaders, handle) = errorResponse(416)
            errorHeaders.replaceOrAdd(name: "Content-Range", value: "bytes */\(size)")
            return (416, errorHeaders, handle)
        }

        if let paced, length > 0 {
            // PacedBody now owns fd.
            let body = PacedBody(
                source: .file(fd: fd, offset: offset), length: length, bytesPerSecond: paced, stop: stop)
            return (status, headers, body.makeResponse())
        }
        // libmicrohttpd owns fd from here (closes it with the response) and sends it with sendfile.
        let handle = MHD_create_response_from_fd_at_offset64(UInt64(length), fd, UInt64(offset))
        if handle == nil { Sys.close(fd) }
        return (status, headers, handle)
    }

    private func errorResponse(_ status: Int) -> (Int, HTTPHeaders, OpaquePointer?) {
        let text = "\(status) \(HTTPStatus.reason(status))\n"
        let handle = Data(text.utf8).withUnsafeBytes { raw in
            MHD_create_response_from_buffer(
                raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
        }
        return (status, ["Content-Type": "text/plain; charset=utf-8"], handle)
    }
}
