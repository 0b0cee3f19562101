import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Sends one HTTP/1.1 request with exactly the bytes a test chooses (a request
/// target no client library would send, such as `/../x` or `/%2e%2e/x`) and reads
/// the whole response.
public enum RawHTTP {
    /// A response: status, headers (lower-case names) and body.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]
        /// The body as text.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends `METHOD TARGET HTTP/1.1` with `Connection: close` and returns the reply.
    ///
    /// - Parameters:
    ///   - port: The server's port on 127.0.0.1.
    ///   - method: The method.
    ///   - target: The request target, sent as is.
    ///   - headers: Extra header lines.
    ///   - body: A body (Content-Length is added when it is not empty).
    public static func request(
        port: Int, method: String = "GET", target: String, headers: [String: String] = [:], body: [UInt8] = []
    ) throws -> Response {
        guard let fd = Loopback.connect(port: port) else {
            throw TestServerError.didNotStart("connect to \(port) failed")
        }
        defer { close(fd) }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        if !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let out = Array(head.utf8) + body
        var sent = 0
        while sent < out.count {
            let n = out.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { break }
            sent += n
        }
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            reply += chunk[..<n]
        }
        return parse(reply)
    }

    static func parse(_ reply: [UInt8]) -> Response {
        let sep: [UInt8] = [13, 10, 13, 10]
        var split = reply.count
        if reply.count >= 4 {
            for i in 0...(reply.count - 4) where Array(reply[i..<(i + 4)]) == sep {
                split = i
                break
            }
        }
        let head = String(decoding: reply[..<split], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.isEmpty ? "" : lines.removeFirst()
        let status = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        var body = split + 4 <= reply.count ? Array(reply[(split + 4)...]) : []
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return Response(status: status, headers: headers, body: body)
    }

    private static func dechunk(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < data.count {
            var j = i
            while j + 1 < data.count && !(data[j] == 13 && data[j + 1] == 10) { j += 1 }
            let sizeText = String(decoding: data[i..<j], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size > 0 else { break }
            let start = j + 2
            guard start + size <= data.count else { break }
            out += data[start..<(start + size)]
            i = start + size + 2
        }
        return out
    }
}
