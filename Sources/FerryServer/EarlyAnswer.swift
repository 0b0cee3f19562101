import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An answer written straight to a connection's socket, past libmicrohttpd,
/// for the cases it cannot answer itself: a body that failed while more of it
/// is still arriving (libmicrohttpd queues no response before the body ends),
/// and a request line that never comes. Always `Connection: close`; the caller
/// closes the connection afterwards.
enum EarlyAnswer {
    /// `response` as HTTP/1.1 bytes (a text or data body; any other is sent as
    /// the status's reason).
    static func bytes(_ response: HTTPResponse) -> [UInt8] {
        let body: [UInt8]
        var contentType = response.headers["Content-Type"] ?? "text/plain; charset=utf-8"
        switch response.body {
        case .text(let text): body = Array(text.utf8)
        case .data(let data): body = Array(data)
        case .empty: body = []
        case .file:
            body = Array("\(response.status) \(HTTPStatus.reason(response.status))\n".utf8)
            contentType = "text/plain; charset=utf-8"
        }
        // The reason libmicrohttpd gives its own answers, so both kinds read alike.
        let known = MHD_get_reason_phrase_for(UInt32(clamping: response.status)).map { String(cString: $0) }
        let reason = known.flatMap { $0.isEmpty || $0 == "Unknown" ? nil : $0 } ?? HTTPStatus.reason(response.status)
        var head = "HTTP/1.1 \(response.status) \(reason)\r\n"
        head += "Date: \(HTTPDate.format(secondsSince1970: Int(Date().timeIntervalSince1970)))\r\n"
        head += "Connection: close\r\n"
        for field in response.headers {
            let name = field.name.lowercased()
            guard !["content-length", "connection", "content-type", "date"].contains(name),
                !(field.name + field.value).contains(where: { $0 == "\r" || $0 == "\n" })
            else { continue }
            head += "\(field.name): \(field.value)\r\n"
        }
        if !body.isEmpty { head += "Content-Type: \(contentType)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// Writes `response` to `socket` (libmicrohttpd's sockets are non-blocking),
    /// waiting for room up to `wait`.
    ///
    /// - Returns: Whether all of it was written.
    @discardableResult
    static func send(_ response: HTTPResponse, on socket: Int32, wait: Duration = .zero) -> Bool {
        let bytes = bytes(response)
        let deadline = ContinuousClock.now + wait
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if n > 0 {
                sent += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            guard n < 0, errno == EAGAIN || errno == EWOULDBLOCK else { return false }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            var p = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
            _ = poll(&p, 1, Int32(min(left, .milliseconds(250)) / .milliseconds(1)))
        }
        return true
    }

    /// After an early answer: sends nothing more, and reads and drops what the
    /// client still sends, so that closing does not reset the connection (and
    /// destroy the answer) while the client is still sending. Ends when the
    /// client closes, sends nothing for 2 s, after 30 s, or when the server stops.
    static func linger(on socket: Int32, stop: StopSignal) {
        shutdown(socket, Int32(SHUT_WR))
        let end = ContinuousClock.now + .seconds(30)
        var lastData = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while !stop.isStopped {
            let now = ContinuousClock.now
            guard now < end, now - lastData < .seconds(2) else { return }
            var p = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, 250)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 {
                lastData = .now
            } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                return
            }
        }
    }
}
