import FerryTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP connection to 127.0.0.1 that sends exactly what a hostile test chooses,
/// as slowly as it likes, and tells whether the server closed it.
final class RawSocket {
    private(set) var fd: Int32

    /// Connects; nil when the connection is refused.
    init?(port: Int) {
        guard let fd = Loopback.connect(port: port) else { return nil }
        self.fd = fd
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends all bytes; false once the peer has closed or reset the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads until the peer closes or `timeout` passes without data; the bytes and
    /// whether the peer closed.
    func read(timeout: Double) -> (bytes: [UInt8], closed: Bool) {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return (out, false) }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, Int32(left * 1000))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return (out, false) }
            let n = Glibc.read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return (out, true) }  // EOF or reset
            out += chunk[..<n]
        }
    }

    /// The status code of the first response in `bytes`, 0 when there is none.
    static func status(_ bytes: [UInt8]) -> Int {
        let text = String(decoding: bytes.prefix(64), as: UTF8.self)
        guard text.hasPrefix("HTTP/") else { return 0 }
        return text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    }
}

extension RawSocket {
    /// Sends a request whose line starts with NUL and waits up to 5 s: the
    /// status (0 for none), whether the server closed, and the seconds until it did.
    static func nulRequestLine(port: Int) -> (status: Int, closed: Bool, seconds: Double) {
        let start = Date()
        guard let socket = RawSocket(port: port) else { return (0, false, 0) }
        socket.send([0, 1, 2] + Array("garbage\r\n\r\n".utf8))
        let answer = socket.read(timeout: 5)
        return (status(answer.bytes), answer.closed, Date().timeIntervalSince(start))
    }
}

/// What /proc says about a process: threads, open descriptors, resident memory.
struct ProcessStats: CustomStringConvertible {
    var threads: Int
    var descriptors: Int
    var residentKiB: Int

    init(pid: Int32) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
                return Int(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ")[0])
                    ?? -1
            }
            return -1
        }
        threads = field("Threads")
        residentKiB = field("VmRSS")
        descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    var description: String { "\(threads) threads, \(descriptors) fds, \(residentKiB) KiB" }
}
