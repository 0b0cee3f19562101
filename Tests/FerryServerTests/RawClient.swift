import FerryTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

struct RawClientError: Error, CustomStringConvertible {
    var description: String
}

/// A blocking TCP client for requests curl will not send (hand-made
/// multipart bodies, oversized headers) and for holding connections open.
/// Use it from `onThread`, never directly on a cooperative thread.
final class RawClient: @unchecked Sendable {  // used by one thread at a time
    private var fd: Int32
    private var pending = Data()

    /// Connects to 127.0.0.1:`port`, with 10 s send/receive timeouts.
    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawClientError(description: "socket: \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            Glibc.close(fd)
            throw RawClientError(description: "connect: \(errno)")
        }
    }

    deinit { close() }

    /// Closes the connection.
    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends all of `data`; returns false when the peer closed.
    @discardableResult
    func send(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Data(text.utf8)) }

    /// Reads one response: head plus a `Content-Length` body, or up to
    /// close. `nil` when the connection closed before any byte.
    func readResponse() throws -> (status: Int, headers: [String: String], body: Data)? {
        while pending.range(of: Data("\r\n\r\n".utf8)) == nil {
            guard try fill() else {
                if pending.isEmpty { return nil }
                throw RawClientError(description: "closed inside the head")
            }
        }
        let end = pending.range(of: Data("\r\n\r\n".utf8))!
        let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
        pending = Data(pending[end.upperBound...])
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        let status = Int(statusLine[1]) ?? 0
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        if let length = headers["content-length"].flatMap(Int.init) {
            while pending.count < length {
                guard try fill() else { throw RawClientError(description: "closed inside the body") }
            }
            let body = pending.prefix(length)
            pending = Data(pending.dropFirst(length))
            return (status, headers, Data(body))
        }
        while try fill() {}
        defer { pending = Data() }
        return (status, headers, pending)
    }

    /// Whether the server closed the connection (reads until EOF or error, up to the timeout).
    func isClosedByPeer() -> Bool {
        (try? fill()) != true
    }

    private func fill() throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &buffer, buffer.count, 0)
        if n < 0 {
            if errno == ECONNRESET { return false }
            throw RawClientError(description: "recv: \(errno)")
        }
        if n == 0 { return false }
        pending.append(contentsOf: buffer[..<n])
        return true
    }
}
