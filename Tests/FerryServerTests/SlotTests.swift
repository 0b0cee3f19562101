import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryServer

/// `maxConnections` slots: a connection beyond the limit waits up to
/// `slotWait` for one instead of being refused at once.
@Suite struct SlotTests {
    private static let get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"

    /// Opens a connection, sends one request and keeps the connection (idle, kept alive).
    private static func holder(port: Int) async throws -> RawClient {
        try await onThread {
            let client = try RawClient(port: port)
            client.send(get)
            guard try client.readResponse()?.status == 200 else { throw RawClientError(description: "no answer") }
            return client
        }
    }

    /// Sends one request on a new connection: its status (nil when closed
    /// without an answer) and how long the answer took.
    private static func timedRequest(port: Int) async throws -> (status: Int?, elapsed: Duration) {
        try await onThread {
            let clock = ContinuousClock()
            let start = clock.now
            let client = try RawClient(port: port)
            client.send(get)
            let status = (try? client.readResponse())?.status
            return (status, start.duration(to: clock.now))
        }
    }

    /// Waits until `condition` holds, up to 5 s.
    private static func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<100 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    @Test func backToBackConnectionsAreNeverRefused() async throws {
        var options = HTTPServer.Options()
        options.maxConnections = 1
        // Each wait is a few milliseconds; the margin is for a machine busy
        // with other tests (handlers run on the shared cooperative pool).
        options.slotWait = .seconds(10)
        try await withServer(options: options, handler: okHandler) { server in
            let port = server.port
            // Each client: connect, one kept-alive request, close, and at
            // once the next connection, so the server only learns of the
            // close from the client's FIN while the next one is knocking.
            let client: @Sendable () throws -> Int = {
                var served = 0
                for i in 0..<50 {
                    let client = try RawClient(port: port)
                    client.send("GET /\(i) HTTP/1.1\r\nHost: x\r\n\r\n")
                    if (try? client.readResponse())?.status == 200 { served += 1 }
                    client.close()
                }
                return served
            }
            async let first = onThread(client)
            async let second = onThread(client)
            let served = try await [first, second]
            #expect(served == [50, 50])
            #expect(try await Self.eventually { server.slotUsage.taken == 0 && server.slotUsage.waiting == 0 })
        }
    }

    @Test func anIdleConnectionMakesTheNextWaitThenBeRefused() async throws {
        let lines = Mutex<[String]>([])
        var options = HTTPServer.Options()
        options.maxConnections = 1
        // The waiting room itself: idle holders keep their slots.
        options.shedsIdleConnections = false
        options.slotWait = .milliseconds(700)
        options.logger = { line in lines.withLock { $0.append(line) } }
        try await withServer(options: options, handler: okHandler) { server in
            let port = server.port
            let holder = try await Self.holder(port: port)
            async let waiter = Self.timedRequest(port: port)
            #expect(try await Self.eventually { server.slotUsage.waiting == 1 })
            #expect(server.slotUsage.taken == 1)
            let (status, elapsed) = try await waiter
            #expect(status == nil, "closed without an answer")
            #expect(elapsed >= .milliseconds(650), "\(elapsed)")
            #expect(elapsed < .seconds(5), "\(elapsed)")
            #expect(lines.withLock { $0.contains { $0.contains("connection slots taken") } })
            // The holder keeps its slot and is still served.
            let again = try await onThread {
                holder.send(Self.get)
                return try holder.readResponse()?.status
            }
            #expect(again == 200)
        }
    }

    @Test func aWaitingConnectionIsServedWhenASlotFrees() async throws {
        var options = HTTPServer.Options()
        options.maxConnections = 1
        // The waiting room itself: idle holders keep their slots.
        options.shedsIdleConnections = false
        options.slotWait = .seconds(10)
        try await withServer(options: options, handler: okHandler) { server in
            let port = server.port
            let holder = try await Self.holder(port: port)
            async let waiter = Self.timedRequest(port: port)
            #expect(try await Self.eventually { server.slotUsage.waiting == 1 })
            try await Task.sleep(for: .milliseconds(300))
            try await onThread { holder.close() }
            let (status, elapsed) = try await waiter
            #expect(status == 200)
            #expect(elapsed >= .milliseconds(300), "\(elapsed)")
            #expect(elapsed < .seconds(8), "\(elapsed)")
        }
    }

    @Test func waitingLongerThanTheIdleTimeoutIsNotIdleness() async throws {
        var options = HTTPServer.Options()
        options.maxConnections = 1
        // The waiting room itself: idle holders keep their slots.
        options.shedsIdleConnections = false
        options.connectionTimeout = .seconds(2)
        options.slotWait = .seconds(15)
        try await withServer(options: options, handler: okHandler) { server in
            let port = server.port
            let holder = try await Self.holder(port: port)
            async let waiter = Self.timedRequest(port: port)
            #expect(try await Self.eventually { server.slotUsage.waiting == 1 })
            // The holder keeps its slot for 3.5 s (longer than the idle
            // timeout) by asking again every quarter second, then closes.
            let statuses = try await onThread {
                var statuses: [Int?] = []
                for _ in 0..<14 {
                    usleep(250_000)
                    holder.send(Self.get)
                    statuses.append(try holder.readResponse()?.status)
                }
                holder.close()
                return statuses
            }
            #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            let (status, elapsed) = try await waiter
            #expect(status == 200)
            #expect(elapsed >= .seconds(3), "\(elapsed)")
        }
    }

    @Test func connectionsPastTheWaitingRoomAreClosedAtOnce() async throws {
        var options = HTTPServer.Options()
        options.maxConnections = 1
        // The waiting room itself: idle holders keep their slots.
        options.shedsIdleConnections = false
        options.maxWaitingConnections = 1
        options.slotWait = .seconds(10)
        try await withServer(options: options, handler: okHandler) { server in
            let port = server.port
            let holder = try await Self.holder(port: port)
            async let waiter = Self.timedRequest(port: port)
            #expect(try await Self.eventually { server.slotUsage.waiting == 1 })
            // libmicrohttpd's own limit (1 + 1) closes a third at once.
            let (status, elapsed) = try await Self.timedRequest(port: port)
            #expect(status == nil)
            #expect(elapsed < .seconds(2), "\(elapsed)")
            try await onThread { holder.close() }
            #expect(try await waiter.status == 200)
        }
    }

    @Test func stopEndsTheWait() async throws {
        var options = HTTPServer.Options()
        options.maxConnections = 1
        // The waiting room itself: idle holders keep their slots.
        options.shedsIdleConnections = false
        options.slotWait = .seconds(60)
        try await withServer(options: options, handler: okHandler) { server in
            let port = server.port
            let holder = try await Self.holder(port: port)
            async let waiter = Self.timedRequest(port: port)
            #expect(try await Self.eventually { server.slotUsage.waiting == 1 })
            let stopping = ContinuousClock().measure { server.stop() }
            #expect(stopping < .seconds(5), "\(stopping)")
            let (status, elapsed) = try await waiter
            #expect(status == nil)
            #expect(elapsed < .seconds(10), "\(elapsed)")
            withExtendedLifetime(holder) {}
        }
    }

    @Test func anIdleHolderMakesRoomForANewcomer() async throws {
        let lines = Mutex<[String]>([])
        var options = HTTPServer.Options()
        options.maxConnections = 1
        options.slotWait = .seconds(10)
        options.logger = { line in lines.withLock { $0.append(line) } }
        try await withServer(options: options, handler: okHandler) { server in
            let port = server.port
            let holder = try await Self.holder(port: port)
            try await Task.sleep(for: .milliseconds(400))
            // The holder only idles: the newcomer gets its slot at once.
            let (status, elapsed) = try await Self.timedRequest(port: port)
            #expect(status == 200)
            #expect(elapsed < .seconds(1), "\(elapsed)")
            #expect(lines.withLock { $0.contains { $0.contains("was idle while every slot was taken") } })
            let closed = try await onThread { (try? holder.readResponse()) == nil }
            #expect(closed, "the idle holder was closed")
        }
    }

    @Test func aBusyHolderIsNeverClosedForRoom() async throws {
        var options = HTTPServer.Options()
        options.maxConnections = 1
        options.slotWait = .milliseconds(500)
        let released = Released()
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { _ in
            while !released.value.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(20)) }
            return .text("ok")
        }
        try await withServer(options: options, handler: handler) { server in
            let port = server.port
            async let busy = Self.timedRequest(port: port)
            #expect(try await Self.eventually { server.slotUsage.taken == 1 })
            try await Task.sleep(for: .milliseconds(400))
            let (status, _) = try await Self.timedRequest(port: port)
            #expect(status == nil, "the busy holder kept its slot")
            released.value.withLock { $0 = true }
            #expect(try await busy.status == 200)
        }
    }

    @Test func reservedSlotsAreForTrustedConnections() async throws {
        var options = HTTPServer.Options()
        options.maxConnections = 2
        options.reservedSlots = 1
        options.slotWait = .milliseconds(300)
        options.shedsIdleConnections = false
        options.isTrusted = { $0.headers["X-Trust"] == "yes" }
        try await withServer(options: options, handler: okHandler) { server in
            let port = server.port
            let untrusted = try await Self.holder(port: port)
            // One slot is free, but only for a trusted request.
            let refused = try await Self.timedRequest(port: port)
            #expect(refused.status == nil)
            let trusted = try await onThread {
                let client = try RawClient(port: port)
                client.send("GET / HTTP/1.1\r\nHost: x\r\nX-Trust: yes\r\n\r\n")
                return try client.readResponse()?.status
            }
            #expect(trusted == 200)
            withExtendedLifetime(untrusted) {}
        }
    }

    @Test func invalidSlotOptionsAreRefused() {
        var options = HTTPServer.Options()
        options.slotWait = .milliseconds(-1)
        #expect(throws: HTTPServerError.self) { try HTTPServer(options: options, handler: okHandler).start() }
        options = HTTPServer.Options()
        options.maxWaitingConnections = -1
        #expect(throws: HTTPServerError.self) { try HTTPServer(options: options, handler: okHandler).start() }
        options = HTTPServer.Options()
        options.reservedSlots = options.maxConnections
        #expect(throws: HTTPServerError.self) { try HTTPServer(options: options, handler: okHandler).start() }
    }
}

/// A flag a test sets to let a waiting handler answer.
private final class Released: Sendable {
    let value = Mutex(false)
}
