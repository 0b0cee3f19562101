import FerryServer
import Foundation
import Synchronization
import Testing

@Suite struct ServerRequestTests {
    @Test func getTextAndParsedTarget() async throws {
        try await withServer(handler: echoHandler) { server in
            let result = try await curl(["-H", "X-Test: yes", "\(server.baseURL)/a%20b/c%2Fd?x=1&y=%2F+z&flag&=v"])
            #expect(result.exitCode == 0, "\(result.stderr)")
            let text = result.stdoutText
            #expect(text.contains("method=GET\n"))
            #expect(text.contains("target=/a%20b/c%2Fd?x=1&y=%2F+z&flag&=v\n"))
            #expect(text.contains("rawPath=/a%20b/c%2Fd\n"))
            #expect(text.contains("path=/a b/c/d\n"))
            #expect(text.contains("rawQuery=x=1&y=%2F+z&flag&=v\n"))
            #expect(text.contains("item=x|1\nitem=y|/ z\nitem=flag|<nil>\nitem=|v\n"))
            #expect(text.contains("remote=127.0.0.1\n"))
            #expect(text.contains("x-test=yes\n"))
            #expect(text.contains("body=none\n"))
        }
    }

    @Test func flashAirThumbnailQueryHasNoEquals() async throws {
        try await withServer(handler: echoHandler) { server in
            let result = try await curl(["\(server.baseURL)/thumbnail.cgi?/DCIM/100__TSB/A%20B.JPG"])
            let text = result.stdoutText
            #expect(text.contains("path=/thumbnail.cgi\n"))
            #expect(text.contains("rawQuery=/DCIM/100__TSB/A%20B.JPG\n"))
            #expect(text.contains("item=/DCIM/100__TSB/A B.JPG|<nil>\n"))
        }
    }

    @Test func statusHeadersAndTextContentType() async throws {
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { _ in
            var response = HTTPResponse.text("nope", status: 404)
            response.headers.add(name: "X-Card", value: "FlashAir")
            return response
        }
        try await withServer(handler: handler) { server in
            let result = try await curl(["-i", "\(server.baseURL)/missing"])
            let text = result.stdoutText
            #expect(text.hasPrefix("HTTP/1.1 404"))
            #expect(text.contains("X-Card: FlashAir\r\n"))
            #expect(text.contains("Content-Type: text/plain; charset=utf-8\r\n"))
            #expect(text.contains("Content-Length: 4\r\n"))
            #expect(text.hasSuffix("\r\n\r\nnope"))
        }
    }

    @Test func keepAliveReusesOneConnection() async throws {
        try await withServer(handler: echoHandler) { server in
            let result = try await curl([
                "-v", "\(server.baseURL)/one", "\(server.baseURL)/two", "\(server.baseURL)/three",
            ])
            #expect(result.exitCode == 0)
            #expect(
                result.stderr.components(separatedBy: "Re-using existing connection").count - 1 == 2, "\(result.stderr)"
            )
            #expect(result.stdoutText.contains("path=/three\n"))
        }
    }

    @Test func smallBodyStaysInMemory() async throws {
        try await withServer(handler: echoHandler) { server in
            let result = try await curl(["--data-binary", "hello=world", "\(server.baseURL)/post"])
            #expect(result.stdoutText.contains("method=POST\n"))
            #expect(result.stdoutText.contains("body=data:11\n"))
        }
    }

    @Test func largeAndChunkedBodiesGoToTemporaryFilesThatAreDeletedAfterwards() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let spool = scratch.file("spool")
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        let source = try scratch.makeFile("body.bin", size: 3 << 20)
        let copy = scratch.file("copy.bin")
        var options = HTTPServer.Options()
        options.memoryBodyLimit = 64 * 1024
        options.temporaryDirectory = spool
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
            guard case .file(let path, let size) = request.body else { return .text("not a file", status: 500) }
            try? FileManager.default.removeItem(atPath: copy)
            try? FileManager.default.copyItem(atPath: path, toPath: copy)
            return .text("file \(size)")
        }
        try await withServer(options: options, handler: handler) { server in
            let plain = try await curl(["--data-binary", "@\(source)", "\(server.baseURL)/up"])
            #expect(plain.stdoutText == "file \(3 << 20)")
            #expect(try filesEqual(source, copy))
            let chunked = try await curl([
                "-H", "Transfer-Encoding: chunked", "--data-binary", "@\(source)", "\(server.baseURL)/up",
            ])
            #expect(chunked.stdoutText == "file \(3 << 20)")
            #expect(try filesEqual(source, copy))
            // Completion runs right after the response is sent; give it a moment.
            try await Task.sleep(for: .milliseconds(200))
            #expect(try FileManager.default.contentsOfDirectory(atPath: spool).isEmpty)
        }
    }

    @Test func handlersOnSeveralConnectionsRunAtTheSameTime() async throws {
        // Each handler waits until all four are inside at once: served one
        // after the other, the first would give up and answer "alone".
        let inside = Mutex(0)
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { _ in
            inside.withLock { $0 += 1 }
            for _ in 0..<200 {
                if inside.withLock({ $0 }) >= 4 { return .text("together") }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return .text("alone")
        }
        try await withServer(handler: handler) { server in
            let results = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<4 {
                    group.addTask { try await curl(["\(server.baseURL)/\(index)"]).stdoutText }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results == Array(repeating: "together", count: 4))
        }
    }

    @Test func encodedNulInPathIsRefused() async throws {
        try await withServer(handler: echoHandler) { server in
            let result = try await curl(["-o", "/dev/null", "-w", "%{http_code}", "\(server.baseURL)/a%00b"])
            #expect(result.stdoutText == "400")
        }
    }

    @Test func headRequestOfTextHasLengthButNoBody() async throws {
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { _ in .text("0123456789") }
        try await withServer(handler: handler) { server in
            let result = try await curl(["-I", "\(server.baseURL)/x"])
            #expect(result.stdoutText.contains("Content-Length: 10\r\n"))
            #expect(result.stdoutText.hasSuffix("\r\n\r\n"))
        }
    }

    @Test func servesIPv6Loopback() async throws {
        let server = HTTPServer(host: "::1", port: 0, handler: echoHandler)
        do {
            try server.start()
        } catch {
            return  // no IPv6 on this machine
        }
        defer { server.stop() }
        #expect(server.baseURL == "http://[::1]:\(server.port)")
        let result = try await curl(["-g", "\(server.baseURL)/six"])
        #expect(result.stdoutText.contains("path=/six\n"))
        #expect(result.stdoutText.contains("remote=::1\n"))
    }

    @Test func bindingAPortInUseFailsWithTheReason() async throws {
        try await withServer(handler: echoHandler) { server in
            let second = HTTPServer(port: server.port, handler: echoHandler)
            #expect {
                try second.start()
            } throws: { error in
                guard let error = error as? HTTPServerError else { return false }
                return error.code == .startFailed && error.description.contains("in use")
            }
        }
    }

    @Test func startTwiceIsAnError() async throws {
        try await withServer(handler: echoHandler) { server in
            #expect(throws: HTTPServerError.self) { try server.start() }
        }
    }

    @Test func stopCancelsAWaitingHandlerAndReturnsPromptly() async throws {
        let server = HTTPServer(handler: { _ in
            try? await Task.sleep(for: .seconds(60))
            return .text(Task.isCancelled ? "cancelled" : "slept")
        })
        try server.start()
        let url = "\(server.baseURL)/slow"
        async let request = curl([url])
        try await Task.sleep(for: .milliseconds(300))
        let clock = ContinuousClock()
        let elapsed = clock.measure { server.stop() }
        #expect(elapsed < .seconds(5))
        let result = try await request
        #expect(result.exitCode != 0)  // closed without an answer
    }
}
