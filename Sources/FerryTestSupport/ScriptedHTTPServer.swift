import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One request as a ``ScriptedHTTPServer`` received it.
public struct ScriptedRequest: Sendable {
    /// `GET`, `POST` ...
    public var method: String
    /// The raw request target (`/command.cgi?op=100&DIR=%2FDCIM`).
    public var target: String
    /// The target before `?`, still percent-encoded.
    public var path: String
    /// The target after `?`, still percent-encoded; nil when there is none.
    public var query: String?
    /// Header fields with lower-case names (the last one wins).
    public var headers: [String: String]
    /// The body (chunked bodies are decoded).
    public var body: [UInt8]
    /// Which connection it came on, counting from 1.
    public var connection: Int

    /// The decoded value of one `name=value` query parameter.
    public func parameter(_ name: String) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts[0] == name {
                let raw = parts.count > 1 ? String(parts[1]) : ""
                return raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? raw
            }
        }
        return nil
    }
}

/// What a ``ScriptedHTTPServer`` answers to one request.
public struct ScriptedResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Extra header fields (Content-Length is added).
    public var headers: [String: String]
    /// The body.
    public var body: [UInt8]
    /// Wait this long before answering.
    public var delay: Duration
    /// Answer nothing at all: wait `delay`, then close the connection (a sleeping card).
    public var silent: Bool
    /// Bytes sent exactly as they are instead of a response made from the fields
    /// above (an old, odd or broken server); the connection closes after them.
    public var raw: [UInt8]?

    /// Creates a response.
    public init(
        status: Int = 200, headers: [String: String] = [:], body: [UInt8] = [], delay: Duration = .zero,
        silent: Bool = false
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
        self.silent = silent
    }

    /// A `text/plain` response.
    public static func text(_ text: String, status: Int = 200) -> ScriptedResponse {
        ScriptedResponse(status: status, headers: ["Content-Type": "text/plain"], body: Array(text.utf8))
    }

    /// Exactly these bytes (head and body, CRLFs included), then the connection closes.
    public static func raw(_ bytes: [UInt8]) -> ScriptedResponse {
        var r = ScriptedResponse()
        r.raw = bytes
        return r
    }

    /// Exactly this text (head and body, CRLFs included), then the connection closes.
    public static func raw(_ text: String) -> ScriptedResponse { raw(Array(text.utf8)) }

    /// No answer for `duration`, then the connection closes.
    public static func silence(for duration: Duration) -> ScriptedResponse {
        ScriptedResponse(status: 0, delay: duration, silent: true)
    }
}

/// A minimal HTTP/1.1 server on 127.0.0.1 whose every answer comes from a closure:
/// a scripted FlashAir card for tests. It serves ONE connection at a time, as a real
/// card does (a second connection waits until the first is closed or idle for
/// `idleTimeout`), keeps connections alive, and records every request.
public final class ScriptedHTTPServer: LoopbackHTTPServer {
    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let handler: @Sendable (ScriptedRequest) -> ScriptedResponse
    private let idleTimeout: Duration
    private struct State {
        var requests: [ScriptedRequest] = []
        var connections = 0
        var current: Int32 = -1
        var stopped = false
    }
    private let state = Mutex(State())

    /// Starts listening on a free port.
    ///
    /// - Parameters:
    ///   - idleTimeout: Close a kept-alive connection that sends nothing for this long.
    ///   - handler: Decides the answer to each request (called on the server's thread).
    public init(
        idleTimeout: Duration = .seconds(2), _ handler: @escaping @Sendable (ScriptedRequest) -> ScriptedResponse
    ) throws {
        self.handler = handler
        self.idleTimeout = idleTimeout
        let (fd, boundPort) = try Loopback.listen(backlog: 16, what: "scripted server")
        port = boundPort
        listener = fd
        let t = Thread { [self] in self.acceptLoop() }
        t.start()
    }

    deinit { stop() }

    /// Stops listening and closes the connection being served.
    public func stop() {
        let first = state.withLock { s -> Bool in
            defer { s.stopped = true }
            // Under the lock: the serving loop closes the connection only after clearing it.
            if !s.stopped && s.current >= 0 { shutdown(s.current, Int32(SHUT_RDWR)) }
            return !s.stopped
        }
        guard first else { return }
        // Only wakes the accept loop, which closes the socket itself: closed here, its
        // number could go to the next test's listener while the loop still accepts on it.
        shutdown(listener, Int32(SHUT_RDWR))
    }

    /// Every request received so far, in order.
    public var requests: [ScriptedRequest] { state.withLock { $0.requests } }

    /// Connections accepted so far.
    public var connectionCount: Int { state.withLock { $0.connections } }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if state.withLock({ $0.stopped }) {
                    close(listener)
                    return
                }
                continue
            }
            let number = state.withLock { s -> Int in
                s.connections += 1
                s.current = client
                return s.connections
            }
            let ms = Int(idleTimeout / .milliseconds(1))
            var tv = timeval(tv_sec: ms / 1000, tv_usec: Int(ms % 1000) * 1000)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            serve(client, number: number)
            state.withLock { $0.current = -1 }
            shutdown(client, Int32(SHUT_RDWR))
            close(client)
        }
    }

    /// Serves requests on one connection until it closes, idles out or asks to close.
    private func serve(_ fd: Int32, number: Int) {
        var buffer: [UInt8] = []
        while true {
            guard let request = readRequest(fd, &buffer, connection: number) else { return }
            state.withLock { $0.requests.append(request) }
            let response = handler(request)
            if response.delay > .zero { Thread.sleep(forTimeInterval: response.delay / .seconds(1)) }
            if response.silent { return }
            if let raw = response.raw {
                _ = writeAll(fd, raw)
                return
            }
            var head = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
            var fields = response.headers
            fields["Content-Length"] = String(response.body.count)
            let close = request.headers["connection"]?.lowercased() == "close"
            if close { fields["Connection"] = "close" }
            for (name, value) in fields.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
            head += "\r\n"
            var out = Array(head.utf8)
            if request.method != "HEAD" { out += response.body }
            guard writeAll(fd, out), !close else { return }
        }
    }

    private func readRequest(_ fd: Int32, _ buffer: inout [UInt8], connection: Int) -> ScriptedRequest? {
        let terminator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            if let r = find(terminator, in: buffer) {
                headEnd = r
                break
            }
            guard fill(fd, &buffer) else { return nil }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        buffer.removeFirst(headEnd! + 4)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                .trimmingCharacters(in: .whitespaces)
        }
        var body: [UInt8] = []
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            while true {
                guard let lineEnd = readLine(fd, &buffer) else { return nil }
                let size = Int(lineEnd.split(separator: ";").first.map(String.init) ?? "", radix: 16) ?? 0
                if size == 0 {
                    // Trailers up to the blank line.
                    while let l = readLine(fd, &buffer), !l.isEmpty {}
                    break
                }
                while buffer.count < size + 2 { guard fill(fd, &buffer) else { return nil } }
                body += buffer[..<size]
                buffer.removeFirst(size + 2)
            }
        } else if let length = headers["content-length"].flatMap({ Int($0) }), length > 0 {
            while buffer.count < length { guard fill(fd, &buffer) else { return nil } }
            body = Array(buffer[..<length])
            buffer.removeFirst(length)
        }
        let target = String(requestLine[1])
        let q = target.firstIndex(of: "?")
        return ScriptedRequest(
            method: String(requestLine[0]), target: target, path: q.map { String(target[..<$0]) } ?? target,
            query: q.map { String(target[target.index(after: $0)...]) }, headers: headers, body: body,
            connection: connection)
    }

    private func readLine(_ fd: Int32, _ buffer: inout [UInt8]) -> String? {
        while true {
            if let r = find([13, 10], in: buffer) {
                let line = String(decoding: buffer[..<r], as: UTF8.self)
                buffer.removeFirst(r + 2)
                return line
            }
            guard fill(fd, &buffer) else { return nil }
        }
    }

    private func fill(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            buffer += chunk[..<n]
            return true
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    private func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 405: "Method Not Allowed"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 416: "Range Not Satisfiable"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
