import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Anyone who can connect tries to lock the others out of `ferry serve` and
/// `ferry card` (issue 25, item 4): idle keep-alive connections in every slot,
/// request heads trickled a byte at a time (slowloris), a crowd answered 401.
/// While the attack holds its connections, a fresh client must be answered
/// within a second. Loopback only; at most 100 attack connections; each test a
/// few seconds. (On the code before the fix, every probe went unanswered: it
/// waited the 2 s slot wait and was closed, or found libmicrohttpd's connection
/// limit reached and was closed at once.)
@Suite(.serialized)
struct CrowdingTests {
    /// A `ferry serve` process over an empty folder.
    final class Serve: Sendable {
        let base: TempDir
        let server: ServerProcess
        let port: Int

        init(arguments: [String] = []) throws {
            base = try TempDir(prefix: "crowd-serve")
            let root = base.file("root")
            try FileManager.default.createDirectory(atPath: root + "/DCIM", withIntermediateDirectories: true)
            server = try ServerProcess(
                TestProcess.ferryExecutable(),
                ["serve", root, "--port", "0", "--cache", base.file("cache")] + arguments,
                logPath: base.file("serve.log"))
            var found: Int?
            let deadline = Date().addingTimeInterval(20)
            while found == nil, Date() < deadline, server.process.isRunning {
                if let r = server.log.range(of: "ferry serve: open http://127.0.0.1:") {
                    found = Int(server.log[r.upperBound...].prefix { $0.isNumber })
                } else {
                    usleep(20_000)
                }
            }
            guard let found else {
                server.stop()
                throw TestServerError.didNotStart("ferry serve: " + server.log)
            }
            port = found
        }

        deinit { server.stop() }
    }

    /// One request on a fresh connection: its status (0 for none) and the seconds
    /// until the whole answer was in.
    static func probe(port: Int, target: String, headers: String = "") -> (status: Int, seconds: Double) {
        let start = Date()
        guard let socket = RawSocket(port: port) else { return (0, Date().timeIntervalSince(start)) }
        socket.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\(headers)\r\n")
        let answer = socket.read(timeout: 3)
        return (RawSocket.status(answer.bytes), Date().timeIntervalSince(start))
    }

    /// Opens `count` connections that each make one request and then idle.
    static func idlers(_ count: Int, port: Int, request: String) -> [RawSocket] {
        (0..<count).compactMap { _ in
            guard let socket = RawSocket(port: port) else { return nil }
            socket.send(request)
            // Wait for the answer's head (the bodies are small), keep the connection open.
            var bytes: [UInt8] = []
            let deadline = Date().addingTimeInterval(1)
            while Date() < deadline, !String(decoding: bytes, as: UTF8.self).contains("\r\n\r\n") {
                let part = socket.read(timeout: 0.02)
                bytes += part.bytes
                if part.closed { break }
            }
            return socket
        }
    }

    /// What the probes got during an attack.
    struct Probes: Sendable, CustomStringConvertible {
        var what: String
        var results: [(status: Int, seconds: Double)] = []
        /// How many attack connections were in place.
        var attackers = 0
        var serverRunning = true

        /// Whether every probe got `status` within a second.
        func allAnswered(_ status: Int = 200) -> Bool {
            !results.isEmpty && results.allSatisfy { $0.status == status && $0.seconds < 1 }
        }

        var description: String {
            "\(what): probes got "
                + results.map { "\($0.status) in \(String(format: "%.3f", $0.seconds)) s" }.joined(separator: ", ")
        }
    }

    /// Five probes 200 ms apart while `between` keeps the attack going.
    static func probes(
        port: Int, target: String, headers: String = "", what: String, between: () -> Void = {}
    ) -> Probes {
        var probes = Probes(what: what)
        for _ in 0..<5 {
            probes.results.append(probe(port: port, target: target, headers: headers))
            for _ in 0..<2 {
                between()
                usleep(100_000)
            }
        }
        return probes
    }

    /// The checks, made in the test's own task (an `#expect` on another thread
    /// is not counted against the test).
    static func expectAnswered(
        _ probes: Probes, attackers: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        print(probes)
        #expect(probes.attackers == attackers, "\(probes.what): attack incomplete", sourceLocation: sourceLocation)
        #expect(probes.allAnswered(), "\(probes)", sourceLocation: sourceLocation)
        #expect(probes.serverRunning, "\(probes.what): the server died", sourceLocation: sourceLocation)
    }

    // MARK: ferry serve

    /// 64 keep-alive connections (every slot) that made one request and idle.
    @Test func serveAnswersDuringAnIdleKeepAliveFlood() async throws {
        let probes = try await onThread {
            let serve = try Serve()
            let port = serve.port
            let attack = Self.idlers(
                64, port: port, request: "GET /api/source HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            var probes = Self.probes(port: port, target: "/api/source", what: "serve, 64 idle keep-alive")
            probes.attackers = attack.count
            probes.serverRunning = serve.server.process.isRunning
            return probes
        }
        Self.expectAnswered(probes, attackers: 64)
    }

    /// 100 connections (more than the 64 slots and 16 waiting) trickling a
    /// request head, one byte each every 200 ms; each one the server closes is
    /// opened again at once, so the attack keeps 100 going.
    @Test func serveAnswersDuringSlowloris() async throws {
        let probes = try await onThread {
            let serve = try Serve()
            let port = serve.port
            let head = Array("GET /api/source HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)
            var attack = (0..<100).compactMap { _ in RawSocket(port: port) }
            var step = 0
            var reopened = 0
            // A byte on each connection; one the server closed is opened again at once.
            let trickle = {
                for i in attack.indices where !attack[i].send([head[step % head.count]]) {
                    attack[i].close()
                    if let socket = RawSocket(port: port) {
                        attack[i] = socket
                        reopened += 1
                    }
                }
                step += 1
            }
            // 1.6 s of trickling before the first probe: the attack is in place.
            for _ in 0..<8 {
                trickle()
                usleep(200_000)
            }
            var probes = Self.probes(
                port: port, target: "/api/source", what: "serve, 100 slowloris", between: trickle)
            probes.what += " (\(reopened) reopened)"
            probes.attackers = attack.count
            probes.serverRunning = serve.server.process.isRunning
            attack.removeAll()
            return probes
        }
        Self.expectAnswered(probes, attackers: 100)
    }

    /// With a token required: 80 connections (every slot and every waiting
    /// place) that ask without it, get 401 and keep their connections open.
    @Test func serveAnswersDuringAnUnauthenticatedFlood() async throws {
        let (probes, refusal) = try await onThread {
            let token = "crowd-token-1234"
            let serve = try Serve(arguments: ["--token", token])
            let port = serve.port
            // A refusal closes its connection.
            let refused = try #require(RawSocket(port: port))
            refused.send("GET /api/source HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            let answer = refused.read(timeout: 3)
            let refusal = (
                status: RawSocket.status(answer.bytes), closed: answer.closed,
                text: String(decoding: answer.bytes, as: UTF8.self)
            )
            let attack = Self.idlers(
                80, port: port, request: "GET /api/source HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            var probes = Self.probes(
                port: port, target: "/api/source", headers: "X-Ferry-Token: \(token)\r\n",
                what: "serve, 80 unauthenticated")
            probes.attackers = attack.count
            probes.serverRunning = serve.server.process.isRunning
            return (probes, refusal)
        }
        // A refusal closes its connection.
        #expect(refusal.status == 401)
        #expect(refusal.closed, "a 401 connection stays open")
        #expect(refusal.text.lowercased().contains("connection: close"), "\(refusal.text)")
        Self.expectAnswered(probes, attackers: 80)
    }

    // MARK: ferry card

    /// The card's 8 slots held by idle keep-alive connections.
    @Test func cardAnswersDuringAnIdleKeepAliveFlood() async throws {
        let probes = try await onThread {
            let folder = try TempDir(prefix: "crowd-card")
            let card = try FerryCardProcess(folder: folder.path)
            let attack = Self.idlers(
                8, port: card.port, request: "GET /command.cgi?op=108 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            var probes = Self.probes(port: card.port, target: "/command.cgi?op=108", what: "card, 8 idle keep-alive")
            probes.attackers = attack.count
            probes.serverRunning = card.isRunning
            return probes
        }
        Self.expectAnswered(probes, attackers: 8)
    }

    /// 40 connections trickling request heads at a card with 8 slots and 16 waiting places.
    @Test func cardAnswersDuringSlowloris() async throws {
        let probes = try await onThread {
            let folder = try TempDir(prefix: "crowd-card")
            let card = try FerryCardProcess(folder: folder.path)
            let head = Array("GET /command.cgi?op=108 HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8)
            var attack = (0..<40).compactMap { _ in RawSocket(port: card.port) }
            var step = 0
            let trickle = {
                for socket in attack { socket.send([head[step % head.count]]) }
                step += 1
            }
            for _ in 0..<7 {
                trickle()
                usleep(200_000)
            }
            var probes = Self.probes(
                port: card.port, target: "/command.cgi?op=108", what: "card, 40 slowloris", between: trickle)
            probes.attackers = attack.count
            probes.serverRunning = card.isRunning
            attack.removeAll()
            return probes
        }
        Self.expectAnswered(probes, attackers: 40)
    }
}
