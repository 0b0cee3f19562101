import FerryServer
import FerryTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Slow and stalled clients against FerryServer itself (in this process, so its
/// threads can be counted): the server under `ferry card` and `ferry serve`.
/// Oversized headers and bodies are in `FerryServerTests/LimitsTests`.
@Suite(.serialized)
struct HostileServerClientTests {
    static func withServer<T>(_ options: HTTPServer.Options, _ body: (HTTPServer) throws -> T) throws -> T {
        let server = HTTPServer(host: "127.0.0.1", port: 0, options: options) { _ in .text("ok") }
        try server.start()
        defer { server.stop() }
        return try body(server)
    }

    /// A client that sends half a request line and then nothing is closed after
    /// the idle timeout, freeing its slot.
    @Test func stalledRequestsAreClosedAfterTheTimeout() async throws {
        try await onThread { try self.stalledRequestsAreClosedAfterTheTimeoutBody() }
    }

    func stalledRequestsAreClosedAfterTheTimeoutBody() throws {
        var options = HTTPServer.Options()
        options.connectionTimeout = .seconds(1)
        options.maxConnections = 2
        try Self.withServer(options) { server in
            let stalled = (0..<2).compactMap { _ in RawSocket(port: server.port) }
            for socket in stalled { socket.send("GET /half HTT") }
            let start = Date()
            for socket in stalled {
                let (bytes, closed) = socket.read(timeout: 5)
                #expect(closed && bytes.isEmpty, "a stalled client was kept")
            }
            #expect(Date().timeIntervalSince(start) < 4)
            // Both slots are free again (once the server has finished closing them).
            var served = false
            for _ in 0..<50 where !served {
                if let polite = RawSocket(port: server.port) {
                    polite.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    served = RawSocket.status(polite.read(timeout: 3).bytes) == 200
                }
                if !served { usleep(100_000) }
            }
            #expect(served)
        }
    }

    /// A slowloris client: one header byte every 200 ms keeps an idle timeout
    /// from ever firing, so the head as a whole has a deadline. A client that
    /// keeps sending whole requests on the same connection is not affected.
    @Test func slowHeadersAreClosedAtTheHeaderDeadline() async throws {
        try await onThread { try self.slowHeadersAreClosedAtTheHeaderDeadlineBody() }
    }

    func slowHeadersAreClosedAtTheHeaderDeadlineBody() throws {
        var options = HTTPServer.Options()
        options.connectionTimeout = .seconds(10)
        options.headerDeadline = .seconds(1)
        let lines = Mutex<[String]>([])
        options.logger = { line in lines.withLock { $0.append(line) } }
        try Self.withServer(options) { server in
            guard let slow = RawSocket(port: server.port), let busy = RawSocket(port: server.port) else {
                Issue.record("could not connect")
                return
            }
            slow.send("GET / HTTP/1.1\r\nHost: x\r\n")
            let start = Date()
            var closedAfter: Double?
            var answered = 0
            // 3 s on the clock: the slow head must be cut after about 1 s, while a
            // whole request goes out every ~0.3 s on the other, kept-alive connection.
            while Date().timeIntervalSince(start) < 3 {
                if closedAfter == nil {
                    slow.send("X")
                    if slow.read(timeout: 0.15).closed { closedAfter = Date().timeIntervalSince(start) }
                }
                busy.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                if RawSocket.status(busy.read(timeout: 0.15).bytes) == 200 { answered += 1 }
            }
            #expect(closedAfter.map { $0 >= 0.9 && $0 < 2.6 } == true, "closed after \(closedAfter ?? -1) s")
            #expect(answered >= 8, "the busy client got \(answered) answers")
            #expect(!busy.read(timeout: 0.1).closed, "a client sending whole requests was closed")
            #expect(lines.withLock { $0.contains { $0.contains("sent no complete request") } })
        }
    }

    /// 200 connections against a limit of 8 (plus the connections allowed to wait for
    /// a slot): the rest are closed at once, and the
    /// server serves again once the flood stops. (Threads and descriptors are
    /// counted in `HostileCardClientTests.slowClientsAreBounded`, in a process of
    /// their own; this test process runs other suites in parallel.)
    @Test func connectionFloodsAreBoundedByTheLimit() async throws {
        try await onThread { try self.connectionFloodsAreBoundedByTheLimitBody() }
    }

    func connectionFloodsAreBoundedByTheLimitBody() throws {
        var options = HTTPServer.Options()
        options.maxConnections = 8
        try Self.withServer(options) { server in
            var sockets = (0..<200).compactMap { _ in RawSocket(port: server.port) }
            for socket in sockets { socket.send("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ") }
            usleep(300_000)
            let admitted = 8 + options.maxWaitingConnections
            #expect(server.connectionCount <= admitted)
            var closed = 0
            for socket in sockets where socket.read(timeout: 0.05).closed { closed += 1 }
            #expect(closed >= 200 - admitted, "only \(closed) of the extra connections were refused")
            sockets.removeAll()
            var served = false
            for _ in 0..<40 where !served {
                usleep(100_000)
                if let socket = RawSocket(port: server.port) {
                    socket.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    served = RawSocket.status(socket.read(timeout: 2).bytes) == 200
                }
            }
            #expect(served)
        }
    }
}
