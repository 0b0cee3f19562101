import FerryServer
import FerryTestSupport
import Foundation
import Testing

@Suite struct LimitsTests {
    @Test func connectionsBeyondTheLimitAreRefused() async throws {
        var options = HTTPServer.Options()
        options.maxConnections = 2
        // A connection beyond the limit waits this long for a slot before it
        // is closed (SlotTests covers the wait itself).
        options.slotWait = .milliseconds(300)
        // Idle holders keep their slots here (SlotTests covers making room).
        options.shedsIdleConnections = false
        try await withServer(options: options, handler: okHandler) { server in
            let port = server.port
            // Two kept-alive connections fill the server.
            let clients = try await onThread {
                try (0..<2).map { _ in
                    let client = try RawClient(port: port)
                    client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                    guard let response = try client.readResponse(), response.status == 200 else {
                        throw RawClientError(description: "no answer")
                    }
                    return client
                }
            }
            #expect(server.connectionCount == 2)
            let refused = try await curl(["\(server.baseURL)/third"])
            #expect(refused.exitCode == 52 || refused.exitCode == 56, "exit \(refused.exitCode): \(refused.stderr)")

            // A third raw connection is closed without an answer once the wait is over.
            let closed = try await onThread {
                let client = try RawClient(port: port)
                let start = Date()
                client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                return (try? client.readResponse()) == nil && Date().timeIntervalSince(start) >= 0.25
            }
            #expect(closed)

            // Freeing a slot lets the next one in.
            try await onThread {
                for client in clients { client.close() }
            }
            var admitted = false
            for _ in 0..<10 where !admitted {
                try await Task.sleep(for: .milliseconds(100))
                admitted = try await curl(["\(server.baseURL)/again"]).stdoutText == "ok"
            }
            #expect(admitted)
        }
    }

    @Test func perAddressLimit() async throws {
        var options = HTTPServer.Options()
        options.maxConnectionsPerIP = 1
        try await withServer(options: options, handler: okHandler) { server in
            let port = server.port
            let client = try await onThread {
                let client = try RawClient(port: port)
                client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                _ = try client.readResponse()
                return client
            }
            let refused = try await curl(["\(server.baseURL)/second"])
            #expect(refused.exitCode != 0)
            withExtendedLifetime(client) {}
        }
    }

    @Test func oversizedHeadersGet431() async throws {
        var options = HTTPServer.Options()
        options.maxHeaderSize = 4096
        try await withServer(options: options, handler: okHandler) { server in
            let port = server.port
            // Just over Ferry's limit (checked in Swift), far over it (refused
            // by libmicrohttpd itself), and just under it.
            let statuses = try await onThread {
                try [4200, 100_000, 3500].map { size -> Int in
                    let client = try RawClient(port: port)
                    client.send("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: size))\r\n\r\n")
                    return try client.readResponse()?.status ?? 0
                }
            }
            #expect(statuses == [431, 431, 200])
        }
    }

    @Test func bodiesOverTheLimitGet413() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let big = try scratch.makeFile("big.bin", size: 300_000)
        var options = HTTPServer.Options()
        options.maxBodySize = 100_000
        try await withServer(options: options, handler: okHandler) { server in
            // Known length: refused from the headers, before the body.
            let declared = try await curl([
                "-o", "/dev/null", "-w", "%{http_code}", "--data-binary", "@\(big)", "\(server.baseURL)/up",
            ])
            #expect(declared.stdoutText == "413")
            // Chunked: refused once the body passes the limit.
            let chunked = try await curl([
                "-o", "/dev/null", "-w", "%{http_code}", "-H", "Transfer-Encoding: chunked", "--data-binary", "@\(big)",
                "\(server.baseURL)/up",
            ])
            #expect(chunked.stdoutText == "413")
            // Multipart too.
            let form = try await curl([
                "-o", "/dev/null", "-w", "%{http_code}", "-F", "file=@\(big)", "\(server.baseURL)/up",
            ])
            #expect(form.stdoutText == "413")
            let small = try await curl(["--data-binary", "12345", "\(server.baseURL)/up"])
            #expect(small.stdoutText == "ok")
        }
    }

    /// A body that fails with most of it still to come (past the 4 MiB that
    /// used to be drained before answering) gets its answer at once, and the
    /// connection closes only after it.
    @Test func aBodyThatFailsEarlyIsAnsweredWhateverIsLeft() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let big = try scratch.makeFile("big.bin", size: 12_000_000)
        var options = HTTPServer.Options()
        options.maxBodySize = 100_000
        try await withServer(options: options, handler: okHandler) { server in
            let start = ContinuousClock.now
            for form in [["-H", "Transfer-Encoding: chunked", "--data-binary", "@\(big)"], ["-F", "file=@\(big)"]] {
                let r = try await curl(["-w", "\n%{http_code}", "-H", "Expect:"] + form + ["\(server.baseURL)/up"])
                #expect(r.stdoutText.hasSuffix("\n413"), "exit \(r.exitCode): \(r.stdoutText.suffix(200)) \(r.stderr)")
                #expect(r.stdoutText.contains("the limit is 100000 bytes"), "\(r.stdoutText.suffix(200))")
            }
            #expect(ContinuousClock.now - start < .seconds(10))
            // The server still serves.
            #expect(try await curl(["\(server.baseURL)/after"]).stdoutText == "ok")
        }
    }

    @Test func latencyDelaysEveryResponse() async throws {
        var options = HTTPServer.Options()
        options.latency = .milliseconds(400)
        try await withServer(options: options, handler: okHandler) { server in
            let clock = ContinuousClock()
            let start = clock.now
            let result = try await curl(["-v", "\(server.baseURL)/a", "\(server.baseURL)/b"])
            let elapsed = start.duration(to: clock.now)
            #expect(result.stdoutText == "okok")
            #expect(result.stderr.contains("Re-using existing connection"))
            #expect(elapsed >= .milliseconds(800))
            #expect(elapsed < .seconds(8))  // generous: other tests may load the machine
        }
    }

    /// The latency runs from the request, so the handler's own time is part of
    /// it rather than added to it: 1 s of handler and 1 s of latency answer
    /// after about 1 s, not 2.
    @Test func latencyCountsFromTheRequest() async throws {
        var options = HTTPServer.Options()
        options.latency = .seconds(1)
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { _ in
            try? await Task.sleep(for: .seconds(1))
            return .text("ok")
        }
        try await withServer(options: options, handler: handler) { server in
            let clock = ContinuousClock()
            let start = clock.now
            let result = try await curl(["\(server.baseURL)/a"])
            let elapsed = start.duration(to: clock.now)
            #expect(result.stdoutText == "ok")
            #expect(elapsed >= .seconds(1))
            #expect(elapsed < .milliseconds(1800), "\(elapsed): the latency came after the handler")
        }
    }

    @Test func rateLimitPacesFileBodies() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = try scratch.makeFile("slow.bin", size: 200_000)
        var options = HTTPServer.Options()
        options.bytesPerSecond = 100_000
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
            request.path == "/data" ? .data(Data(count: 50_000)) : .file(file)
        }
        try await withServer(options: options, handler: handler) { server in
            let out = scratch.file("out.bin")
            let clock = ContinuousClock()
            var start = clock.now
            let result = try await curl(["-o", out, "\(server.baseURL)/slow.bin"])
            var elapsed = start.duration(to: clock.now)
            #expect(result.exitCode == 0)
            #expect(try filesEqual(out, file))
            #expect(elapsed >= .milliseconds(1800), "\(elapsed)")
            #expect(elapsed < .seconds(6), "\(elapsed)")

            // Ranges are paced too: 50 000 bytes take about half a second.
            start = clock.now
            let range = try await curl(["-r", "100000-149999", "\(server.baseURL)/slow.bin"])
            elapsed = start.duration(to: clock.now)
            #expect(range.stdout.count == 50_000)
            #expect(elapsed >= .milliseconds(400), "\(elapsed)")
            #expect(elapsed < .seconds(4), "\(elapsed)")

            // In-memory bodies as well; HEAD is not paced.
            start = clock.now
            let data = try await curl(["\(server.baseURL)/data"])
            #expect(data.stdout.count == 50_000)
            #expect(start.duration(to: clock.now) >= .milliseconds(400))
            start = clock.now
            let head = try await curl(["-I", "\(server.baseURL)/slow.bin"])
            #expect(head.stdoutText.contains("Content-Length: 200000\r\n"))
            #expect(start.duration(to: clock.now) < .milliseconds(1500))  // the paced body would take 2 s
        }
    }

    @Test func idleConnectionsTimeOut() async throws {
        var options = HTTPServer.Options()
        options.connectionTimeout = .seconds(1)
        try await withServer(options: options, handler: okHandler) { server in
            let port = server.port
            let closed = try await onThread {
                let client = try RawClient(port: port)
                client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                _ = try client.readResponse()
                let start = Date()
                let closed = client.isClosedByPeer()
                return closed && Date().timeIntervalSince(start) < 5
            }
            #expect(closed)
        }
    }

    @Test func stopEndsPacedDownloadsAndIdleConnectionsPromptly() async throws {
        var options = HTTPServer.Options()
        options.bytesPerSecond = 1000
        options.latency = .milliseconds(50)
        try await TestGate.run {
            let server = HTTPServer(options: options) { request in
                request.path == "/slow" ? .data(Data(count: 1_000_000)) : .text("ok")
            }
            try server.start()
            let port = server.port
            // One idle kept-alive connection, one slow download in progress.
            let idle = try await onThread {
                let client = try RawClient(port: port)
                client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                _ = try client.readResponse()
                return client
            }
            async let download = curl(["\(server.baseURL)/slow"])
            try await Task.sleep(for: .milliseconds(500))
            let elapsed = ContinuousClock().measure { server.stop() }
            #expect(elapsed < .seconds(5), "\(elapsed)")
            let result = try await download
            #expect(result.exitCode != 0)  // cut short
            #expect(try await onThread { idle.isClosedByPeer() })
        }
    }

    @Test func invalidOptionsAreRefused() {
        var options = HTTPServer.Options()
        options.maxConnections = 0
        let server = HTTPServer(options: options, handler: { _ in HTTPResponse() })
        #expect(throws: HTTPServerError.self) { try server.start() }
    }
}
