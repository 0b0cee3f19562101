import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Hostile clients against the real `ferry card` process: escapes that need two
/// decodings or an overlong UTF-8 dot, oversized and malformed requests, oversized
/// uploads, slow clients. Every one is refused or bounded, nothing outside the
/// card's folder is touched, spooled uploads are cleaned up, and the card keeps
/// answering. (Single-decoding escapes and symbolic links are in
/// `FerryCLITests/CardEscapeTests`.)
@Suite(.serialized)
struct HostileCardClientTests {
    let base: TempDir
    let rootPath: String
    let spool: String
    let card: FerryCardProcess
    static let secret = "HOSTILE-OUTSIDE-SECRET"

    init() throws {
        base = try TempDir(prefix: "hostile")
        rootPath = base.file("card")
        spool = base.file("spool")
        let fm = FileManager.default
        try fm.createDirectory(atPath: rootPath + "/DCIM/100__TSB", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: spool, withIntermediateDirectories: true)
        try Self.secret.write(toFile: base.file("secret.txt"), atomically: true, encoding: .utf8)
        try Data(SampleJPEG.withThumbnail()).write(to: URL(fileURLWithPath: base.file("secret.jpg")))
        try "inside".write(toFile: rootPath + "/DCIM/100__TSB/A.JPG", atomically: true, encoding: .utf8)
        symlink("..", rootPath + "/link-out")
        card = try FerryCardProcess(folder: rootPath, environment: ["TMPDIR": spool])
    }

    func get(_ target: String, headers: [String: String] = [:]) throws -> RawHTTP.Response {
        try RawHTTP.request(port: card.port, target: target, headers: headers)
    }

    /// The card still answers, nothing outside changed, no spooled upload is left.
    func expectHealthy(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(card.isRunning, "card died after \(what)", sourceLocation: sourceLocation)
        #expect(try get("/command.cgi?op=108").status == 200, "no answer after \(what)", sourceLocation: sourceLocation)
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: base.path))
        #expect(
            names == ["card", "spool", "secret.txt", "secret.jpg"], "\(what): \(names)", sourceLocation: sourceLocation)
        #expect(try String(contentsOfFile: base.file("secret.txt"), encoding: .utf8) == Self.secret)
        let spooled = try FileManager.default.contentsOfDirectory(atPath: spool)
        #expect(spooled.isEmpty, "\(what) left \(spooled)", sourceLocation: sourceLocation)
    }

    func expectRefused(_ r: RawHTTP.Response, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            r.status != 200 || r.text == "WLANSD_FILELIST\r\n" || r.text == "0" || r.text == "ERROR",
            "\(what) answered \(r.status): \(r.text.prefix(200))", sourceLocation: sourceLocation)
        #expect(
            !r.text.contains(Self.secret) && !r.text.contains("secret.txt"), "\(what) leaked",
            sourceLocation: sourceLocation)
        #expect(
            r.body != SampleJPEG.thumbnail, "\(what) leaked a thumbnail",
            sourceLocation: sourceLocation)
    }

    // MARK: Paths

    /// `%252e` decodes once to the text `%2e`, a plain (missing) name; an overlong
    /// `%c0%ae` is not UTF-8 for `.`; encoded separators are separators once decoded
    /// and are then checked like any other.
    static let escapes = [
        "/%252e%252e/secret.txt", "/%252e%252e%252fsecret.txt", "/DCIM/%252e%252e/%252e%252e/secret.txt",
        "/%25252e%25252e/secret.txt", "/%c0%ae%c0%ae/secret.txt", "/%c0%ae%c0%ae%c0%afsecret.txt",
        "/%e0%80%ae%e0%80%ae/secret.txt", "/%2E%2e/secret.txt", "/.%2e/secret.txt", "/%2e./secret.txt",
        "/DCIM/..%2f..%2fsecret.txt", "/DCIM%2f..%2f..%2fsecret.txt", "/%2fsecret.txt", "//secret.txt",
        "/..;/secret.txt", "/...//secret.txt", "/..../secret.txt", "/link-out%2fsecret.txt", "/link-out/./secret.txt",
        "/DCIM/100__TSB/../../../secret.txt", "/%5c..%5csecret.txt", "/\\..\\secret.txt", "/..\\secret.txt",
        "/%u002e%u002e/secret.txt", "/" + String(repeating: "%2e%2e/", count: 64) + "etc/passwd",
        "http://flashair/%2e%2e/secret.txt", "http://flashair:80/..%2fsecret.txt", "HTTP://x/../secret.txt",
    ]

    @Test func doubleEncodedAndOverlongEscapes() async throws {
        try await onThread { try self.doubleEncodedAndOverlongEscapesBody() }
    }

    func doubleEncodedAndOverlongEscapesBody() throws {
        for target in Self.escapes {
            expectRefused(try get(target), "GET \(target)")
            expectRefused(try get("/thumbnail.cgi?" + target), "thumbnail \(target)")
            let query = target.replacingOccurrences(of: "%", with: "%25")
            for op in ["100", "101"] {
                expectRefused(try get("/command.cgi?op=\(op)&DIR=\(query)"), "op=\(op) DIR=\(target)")
                expectRefused(try get("/command.cgi?op=\(op)&DIR=\(target)"), "op=\(op) DIR=\(target) raw")
            }
            expectRefused(try get("/upload.cgi?DEL=\(query)"), "DEL \(target)")
            let updir = try get("/upload.cgi?UPDIR=\(query)")
            #expect(updir.status != 200 || updir.text == "SUCCESS", "UPDIR \(target)")
        }
        // What the card calls the root is its folder, so absolute local paths name nothing there.
        for target in ["/" + base.file("secret.txt"), base.file("secret.txt"), "/etc/passwd", "/proc/self/environ"] {
            expectRefused(try get(target), "GET \(target)")
            expectRefused(try get("/thumbnail.cgi?" + target), "thumbnail \(target)")
        }
        // NUL anywhere in a path or a path-bearing query value.
        for target in [
            "/DCIM/100__TSB/A.JPG%00", "/%00/../secret.txt", "/command.cgi?op=100&DIR=/DCIM%00/../..",
            "/thumbnail.cgi?/DCIM/100__TSB/A.JPG%00.txt", "/upload.cgi?DEL=/DCIM%00", "/upload.cgi?UPDIR=/%00",
        ] {
            let r = try get(target)
            expectRefused(r, "NUL \(target)")
        }
        // A path far beyond PATH_MAX.
        expectRefused(try get("/" + String(repeating: "a/", count: 3000) + "x"), "long path")
        expectRefused(try get("/command.cgi?op=100&DIR=/" + String(repeating: "DCIM/", count: 2000)), "long DIR")
        // Inside, the same tricks only reach inside files.
        let inside = try get("/DCIM/%31%30%30__TSB/A.JPG")
        #expect(inside.status == 200)
        try expectHealthy("path escapes")
    }

    // MARK: Oversized and malformed requests

    @Test func oversizedHeadersAreRefused() async throws {
        try await onThread { try self.oversizedHeadersAreRefusedBody() }
    }

    func oversizedHeadersAreRefusedBody() throws {
        for (what, head) in [
            ("one 1 MiB header", "X-Big: " + String(repeating: "a", count: 1 << 20) + "\r\n"),
            ("20,000 small headers", String(repeating: "X-a: b\r\n", count: 20_000)),
            ("a 100 KiB request target", ""),
        ] {
            guard let socket = RawSocket(port: card.port) else {
                Issue.record("connect failed")
                continue
            }
            let target = head.isEmpty ? "/" + String(repeating: "x", count: 100_000) : "/command.cgi?op=108"
            socket.send("GET \(target) HTTP/1.1\r\nHost: x\r\n\(head)\r\n")
            let (bytes, _) = socket.read(timeout: 10)
            let status = RawSocket.status(bytes)
            // 431 or 414 from Ferry or libmicrohttpd, or the connection closed without an answer.
            #expect([0, 400, 413, 414, 431].contains(status), "\(what): \(status)")
        }
        try expectHealthy("oversized headers")
    }

    @Test func malformedRequestsDoNotCrash() async throws {
        try await onThread { try self.malformedRequestsDoNotCrashBody() }
    }

    func malformedRequestsDoNotCrashBody() throws {
        let requests = [
            "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            "POST /upload.cgi HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            "POST /upload.cgi HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n",
            "POST /upload.cgi HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\nab\r\n",
            "POST /upload.cgi HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=\r\nContent-Length: 4\r\n\r\nabcd",
            "POST /upload.cgi HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=\""
                + String(repeating: "b", count: 300)
                + "\"\r\nContent-Length: 4\r\n\r\nabcd",
            "GET /\r\n\r\n", "GET\r\n\r\n", "\r\n\r\n\r\n", "G\u{0}ET / HTTP/1.1\r\n\r\n",
            "GET / HTTP/9.9\r\nHost: x\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
            "GET / HTTP/1.1\r\n: no name\r\nNoColon\r\n\r\n", "GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
            String(repeating: "A", count: 70_000) + " / HTTP/1.1\r\n\r\n",
            "GET /command.cgi?op=100&DIR=" + String(repeating: "%", count: 5000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /DCIM/100__TSB/A.JPG HTTP/1.1\r\nHost: x\r\nRange: bytes=99999999999999999999-\r\n\r\n",
            "GET /DCIM/100__TSB/A.JPG HTTP/1.1\r\nHost: x\r\nRange: bytes=-99999999999999999999\r\n\r\n",
            "GET /DCIM/100__TSB/A.JPG HTTP/1.1\r\nHost: x\r\nRange: bytes=" + String(repeating: "0-0,", count: 5000)
                + "\r\n\r\n",
        ]
        for request in requests {
            guard let socket = RawSocket(port: card.port) else {
                Issue.record("connect failed before \(request.prefix(40))")
                continue
            }
            socket.send(request)
            _ = socket.read(timeout: 1.5)
        }
        // Random bytes.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            guard let socket = RawSocket(port: card.port) else { continue }
            socket.send((0..<Int.random(in: 1...4096, using: &generator)).map { _ in UInt8.random(in: 0...255) })
            _ = socket.read(timeout: 0.2)
        }
        try expectHealthy("malformed requests")
    }

    // MARK: Oversized uploads

    func upload(_ body: [UInt8], boundary: String = "B", headers: [String: String] = [:]) throws -> RawHTTP.Response {
        var all = ["Content-Type": "multipart/form-data; boundary=\(boundary)"]
        all.merge(headers) { $1 }
        return try RawHTTP.request(port: card.port, method: "POST", target: "/upload.cgi", headers: all, body: body)
    }

    @Test func oversizedUploadsAreRefusedAndLeaveNothing() async throws {
        try await onThread { try self.oversizedUploadsAreRefusedAndLeaveNothingBody() }
    }

    func oversizedUploadsAreRefusedAndLeaveNothingBody() throws {
        // Declared beyond the 4 GiB limit: refused from the headers, before any body.
        guard let socket = RawSocket(port: card.port) else { throw TestServerError.didNotStart("card") }
        socket.send(
            "POST /upload.cgi HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"
                + "Content-Length: 5368709120\r\n\r\n--B\r\n")
        #expect(RawSocket.status(socket.read(timeout: 5).bytes) == 413)
        socket.close()

        // A form field (no filename) over 1 MiB: 413, kept in memory no longer than that.
        let field = Array("--B\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n".utf8)
        let big = field + [UInt8](repeating: 0x61, count: 2 << 20) + Array("\r\n--B--\r\n".utf8)
        #expect(try upload(big).status == 413)

        // A part header block over 8 KiB.
        let longHeader = Array(
            "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"\(String(repeating: "n", count: 9000))\"\r\n\r\nx\r\n--B--\r\n"
                .utf8)
        #expect([400, 413, 431].contains(try upload(longHeader).status))

        // More than 1000 parts, each a file: refused, and every spooled file deleted.
        var many: [UInt8] = []
        for i in 0..<1100 {
            many += Array("--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f\(i).txt\"\r\n\r\nx\r\n".utf8)
        }
        many += Array("--B--\r\n".utf8)
        #expect(try upload(many).status == 413)

        // A file part cut off in the middle (the client goes away).
        if let cut = RawSocket(port: card.port) {
            cut.send(
                "POST /upload.cgi HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"
                    + "Content-Length: 10000000\r\n\r\n--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"cut.jpg\"\r\n\r\n"
            )
            cut.send([UInt8](repeating: 0x62, count: 1 << 20))
            cut.close()
        }
        usleep(300_000)
        #expect(!FileManager.default.fileExists(atPath: rootPath + "/cut.jpg"))
        try expectHealthy("oversized uploads")
    }

    /// A request line that starts with NUL: 400 and closed in about a second,
    /// not silence for the idle timeout.
    @Test func aRequestLineStartingWithNULIsAnsweredAtOnce() async throws {
        let port = card.port
        let answer = try await onThread { RawSocket.nulRequestLine(port: port) }
        #expect(answer.status == 400, "\(answer)")
        #expect(answer.closed, "\(answer)")
        #expect(answer.seconds < 2, "\(answer)")
    }

    // MARK: Slow clients

    /// Slowloris: more connections than the card allows, each trickling a request
    /// header a byte at a time. Up to `waiting` extra ones may wait for a slot
    /// (FerryServer's slot wait), the rest are closed at once; the card's threads and
    /// descriptors stay bounded by its connection limit plus that queue; the card
    /// still answers a polite client (it closes the slow ones that only wait),
    /// and once the slow clients go, it answers again.
    @Test func slowClientsAreBounded() async throws { try await onThread { try self.slowClientsAreBoundedBody() } }

    func slowClientsAreBoundedBody() throws {
        let folder = try TempDir(prefix: "slow")
        let limit = 4
        // HTTPServer.Options.maxWaitingConnections' default: connections that may wait for a slot.
        let waiting = 16
        let slowCard = try FerryCardProcess(folder: folder.path, arguments: ["--max-connections", "\(limit)"])
        let before = ProcessStats(pid: slowCard.pid)
        let request = Array("GET /command.cgi?op=108 HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8)
        var sockets = (0..<(limit * 10)).compactMap { _ in RawSocket(port: slowCard.port) }
        usleep(200_000)
        var during = ProcessStats(pid: slowCard.pid)
        // Three seconds of one byte per connection every 100 ms.
        for i in 0..<30 {
            for socket in sockets { _ = socket.send([request[i % request.count]]) }
            usleep(100_000)
            let now = ProcessStats(pid: slowCard.pid)
            during.threads = max(during.threads, now.threads)
            during.descriptors = max(during.descriptors, now.descriptors)
            during.residentKiB = max(during.residentKiB, now.residentKiB)
        }
        #expect(slowCard.isRunning)
        // No more than `limit` + `waiting` connection threads and sockets beyond the idle card.
        #expect(during.threads <= before.threads + limit + waiting + 2, "before \(before), during \(during)")
        #expect(during.descriptors <= before.descriptors + limit + waiting + 2, "before \(before), during \(during)")
        #expect(during.residentKiB <= before.residentKiB + 64 * 1024, "before \(before), during \(during)")
        // The card makes room: the slow clients that only wait give way, and a
        // polite client is answered at once (CrowdingTests measures it).
        let start = Date()
        let polite = RawSocket(port: slowCard.port)
        polite?.send("GET /command.cgi?op=108 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let answer = polite?.read(timeout: 3)
        #expect(answer.map { RawSocket.status($0.bytes) == 200 } ?? false, "the crowded card did not answer")
        #expect(Date().timeIntervalSince(start) < 1)
        // Slow clients gone: service again.
        for socket in sockets { socket.close() }
        sockets = []
        var served = false
        for _ in 0..<40 where !served {
            usleep(100_000)
            served = (try? RawHTTP.request(port: slowCard.port, target: "/command.cgi?op=108").status) == 200
        }
        #expect(served)
        // Back to the idle card's threads and descriptors once the last
        // connections are cleaned up (slower under ThreadSanitizer: up to 3 s).
        var after = ProcessStats(pid: slowCard.pid)
        for _ in 0..<30 where after.threads > before.threads + 1 || after.descriptors > before.descriptors + 1 {
            usleep(100_000)
            after = ProcessStats(pid: slowCard.pid)
        }
        #expect(after.threads <= before.threads + 1, "before \(before), after \(after)")
        #expect(after.descriptors <= before.descriptors + 1, "before \(before), after \(after)")
    }
}
