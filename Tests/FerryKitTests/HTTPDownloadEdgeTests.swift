import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryKit

/// Downloads against servers that answer the way real ones sometimes do (RFC 9110
/// allows it, or old and broken servers do it anyway): redirects of every kind,
/// bodies cut short, chunked and HTTP/1.0 bodies, unasked gzip, folded headers,
/// multipart ranges, HEAD refused. Each server is scripted on 127.0.0.1.
@Suite(.serialized)
struct HTTPDownloadEdgeTests {
    let out: TempDir

    init() throws {
        out = try TempDir(prefix: "dl-edge")
    }

    func download(_ url: String, to dest: String) -> Transfer {
        var options = DownloadOptions()
        options.retryDelay = .milliseconds(20)
        return Ferry.download(try! RemoteURL(parsing: url), to: dest, options: options)
    }

    func contents(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func bytes(_ count: Int, seed: UInt64 = 7) -> [UInt8] { Array(TestData.bytes(count, seed: seed)) }

    /// What is in the destination folder, so a test can see nothing else was written.
    func listing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
    }

    // MARK: Redirects

    @Test func everyRedirectStatusWithARelativeLocationIsFollowed() async throws {
        let data = bytes(5000)
        let server = try ScriptedHTTPServer { request in
            switch request.path {
            case "/files/data.bin": ScriptedResponse(body: data)
            case "/r/301": ScriptedResponse(status: 301, headers: ["Location": "/files/data.bin"])
            case "/r/302": ScriptedResponse(status: 302, headers: ["Location": "../files/data.bin"])
            case "/r/303": ScriptedResponse(status: 303, headers: ["Location": "../files/./data.bin"])
            case "/r/307": ScriptedResponse(status: 307, headers: ["Location": "/r/308"])
            case "/r/308": ScriptedResponse(status: 308, headers: ["Location": "data.bin?x=1"])
            case "/r/data.bin": ScriptedResponse(status: 302, headers: ["Location": "/files/data.bin"])
            default: .text("no", status: 404)
            }
        }
        defer { server.stop() }
        for status in [301, 302, 303, 307, 308] {
            let dest = out.file("r\(status).bin")
            let r = try await download(server.url("/r/\(status)"), to: dest).result
            #expect(r.size == 5000)
            #expect(try contents(dest) == data, "\(status)")
        }
    }

    @Test func aRedirectToAnotherSchemeIsRefusedWithAClearError() async throws {
        // Nothing listens on the FTP port: a followed redirect would fail to connect.
        let ftpPort = Loopback.freePort()
        let server = try ScriptedHTTPServer { request in
            switch request.path {
            case "/ftp.bin":
                ScriptedResponse(
                    status: 302, headers: ["Location": "ftp://me:hunter2@127.0.0.1:\(ftpPort)/ftp.bin"])
            case "/file.bin": ScriptedResponse(status: 301, headers: ["Location": "file:///etc/hostname"])
            case "/dict.bin": ScriptedResponse(status: 307, headers: ["Location": "dict://127.0.0.1:\(ftpPort)/x"])
            default: .text("no", status: 404)
            }
        }
        defer { server.stop() }
        for (name, scheme) in [("ftp.bin", "ftp://"), ("file.bin", "file://"), ("dict.bin", "dict://")] {
            let dest = out.file(name)
            if let e = await #expect(
                throws: FerryError.self,
                performing: {
                    _ = try await download(server.url("/" + name), to: dest).result
                })
            {
                let text = e.description
                #expect(
                    e.code == .unsupportedScheme && !e.isTransient && text.contains(name)
                        && text.contains("redirect") && text.contains(scheme) && !text.contains("hunter2"), "\(e)")
            }
            #expect(!FileManager.default.fileExists(atPath: dest))
        }
        #expect(try listing().isEmpty)
    }

    @Test func credentialsAreNotSentToTheHostARedirectPointsAt() async throws {
        let data = bytes(3000)
        let other = try ScriptedHTTPServer { _ in ScriptedResponse(body: data) }
        defer { other.stop() }
        // Credentials go out when the server asks for them (Basic or Digest,
        // whichever its 401 names), then the redirect leads elsewhere.
        let origin = try ScriptedHTTPServer { request in
            guard request.headers["authorization"] != nil else {
                return ScriptedResponse(status: 401, headers: ["WWW-Authenticate": "Basic realm=\"t\""])
            }
            return ScriptedResponse(status: 302, headers: ["Location": other.url("/elsewhere.bin")])
        }
        defer { origin.stop() }
        let url = "http://me:hunter2@127.0.0.1:\(origin.port)/a.bin"
        let dest = out.file("a.bin")
        _ = try await download(url, to: dest).result
        #expect(try contents(dest) == data)
        #expect(origin.requests.contains { $0.headers["authorization"]?.hasPrefix("Basic ") == true })
        #expect(other.requests.count == 1)
        #expect(other.requests.allSatisfy { $0.headers["authorization"] == nil })
    }

    @Test func aResumeThroughARedirectKeepsTheJournalOfTheFinalFile() async throws {
        let data = bytes(4000)
        let server = try ScriptedHTTPServer { request in
            switch request.path {
            case "/latest": return ScriptedResponse(status: 302, headers: ["Location": "/v1.bin"])
            case "/v1.bin":
                guard let range = request.headers["range"] else {
                    // Cut short: 1500 of the 4000 bytes announced.
                    return .raw(
                        Array("HTTP/1.1 200 OK\r\nContent-Length: 4000\r\nETag: \"v1\"\r\n\r\n".utf8)
                            + data[..<1500])
                }
                let start = rangeStart(range)
                return ScriptedResponse(
                    status: 206, headers: ["Content-Range": "bytes \(start)-3999/4000", "ETag": "\"v1\""],
                    body: Array(data[start...]))
            default: return .text("no", status: 404)
            }
        }
        defer { server.stop() }
        let dest = out.file("latest")
        let r = try await download(server.url("/latest"), to: dest).result
        #expect(try contents(dest) == data)
        #expect(r.retries == 1)
        let resumed = server.requests.filter { $0.path == "/v1.bin" && $0.headers["range"] != nil }
        #expect(resumed.map { $0.headers["range"] } == ["bytes=1500-"])
        #expect(resumed.map { $0.headers["if-range"] } == ["\"v1\""])
    }

    @Test func aResumeWithoutValidatorsStartsOverWhenTheRedirectLeadsElsewhere() async throws {
        let v1 = bytes(4000, seed: 1)
        let v2 = bytes(4000, seed: 2)
        let latest = Mutex("/v1.bin")
        let server = try ScriptedHTTPServer { request in
            if request.path == "/latest" {
                return ScriptedResponse(status: 302, headers: ["Location": latest.withLock { $0 }])
            }
            let data = request.path == "/v1.bin" ? v1 : v2
            guard let range = request.headers["range"] else {
                // No ETag, no Last-Modified, cut short; and a new version is out.
                latest.withLock { $0 = "/v2.bin" }
                let head = "HTTP/1.1 200 OK\r\nContent-Length: 4000\r\n\r\n"
                return .raw(Array(head.utf8) + data[..<1500])
            }
            let start = rangeStart(range)
            return ScriptedResponse(
                status: 206, headers: ["Content-Range": "bytes \(start)-3999/4000"], body: Array(data[start...]))
        }
        defer { server.stop() }
        let dest = out.file("latest")
        let r = try await download(server.url("/latest"), to: dest).result
        #expect(try contents(dest) == v2)
        #expect(r.restarts == 1)
    }

    // MARK: Responses

    @Test func aBodyShorterThanItsContentLengthIsResumedNeverSaved() async throws {
        let data = bytes(10_000)
        let server = try ScriptedHTTPServer { request in
            if let range = request.headers["range"] {
                let start = rangeStart(range)
                // The resumed answer is cut short too, once.
                let end = start < 6000 ? 6000 : 10_000
                let head =
                    "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes \(start)-9999/10000\r\n"
                    + "Content-Length: \(10_000 - start)\r\nLast-Modified: Mon, 02 Jan 2023 10:00:00 GMT\r\n\r\n"
                return .raw(Array(head.utf8) + data[start..<end])
            }
            let head =
                "HTTP/1.1 200 OK\r\nContent-Length: 10000\r\nLast-Modified: Mon, 02 Jan 2023 10:00:00 GMT\r\n\r\n"
            return .raw(Array(head.utf8) + data[..<2500])
        }
        defer { server.stop() }
        let dest = out.file("short.bin")
        let r = try await download(server.url("/short.bin"), to: dest).result
        #expect(try contents(dest) == data)
        #expect(r.retries == 2)
        #expect(server.requests.compactMap { $0.headers["range"] } == ["bytes=2500-", "bytes=6000-"])
        #expect(
            server.requests.compactMap { $0.headers["if-range"] }.allSatisfy {
                $0 == "Mon, 02 Jan 2023 10:00:00 GMT"
            })
    }

    @Test func chunkedHTTP10AndCloseDelimitedBodiesArriveWhole() async throws {
        let data = bytes(70_000)
        var body = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for piece in stride(from: 0, to: data.count, by: 30_000) {
            let end = min(piece + 30_000, data.count)
            body += Array("\(String(end - piece, radix: 16))\r\n".utf8) + data[piece..<end] + Array("\r\n".utf8)
        }
        body += Array("0\r\n\r\n".utf8)
        let chunked = body
        let http10 = Array("HTTP/1.0 200 OK\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n".utf8)
        let server = try ScriptedHTTPServer { request in
            request.path == "/chunked.bin" ? .raw(chunked) : .raw(http10 + data)
        }
        defer { server.stop() }
        for name in ["chunked.bin", "old.bin"] {
            let dest = out.file(name)
            let r = try await download(server.url("/" + name), to: dest).result
            #expect(r.size == 70_000)
            #expect(try contents(dest) == data, "\(name)")
        }
    }

    @Test func aChunkedBodyCutBeforeItsLastChunkIsResumed() async throws {
        let data = bytes(50_000)
        let server = try ScriptedHTTPServer { request in
            if let range = request.headers["range"] {
                let start = rangeStart(range)
                return ScriptedResponse(
                    status: 206, headers: ["Content-Range": "bytes \(start)-49999/50000", "ETag": "\"c\""],
                    body: Array(data[start...]))
            }
            // Two chunks of 20,000, then the connection closes: no last chunk.
            var out = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nETag: \"c\"\r\n\r\n".utf8)
            for start in [0, 20_000] {
                out += Array("4e20\r\n".utf8) + data[start..<(start + 20_000)] + Array("\r\n".utf8)
            }
            return .raw(out)
        }
        defer { server.stop() }
        let dest = out.file("cut-chunked.bin")
        let r = try await download(server.url("/cut-chunked.bin"), to: dest).result
        #expect(try contents(dest) == data)
        #expect(r.retries == 1)
        #expect(server.requests.compactMap { $0.headers["range"] } == ["bytes=40000-"])
    }

    @Test func gzipThatWasNotAskedForIsSavedAsSent() async throws {
        // gzip of "ferry " * 50, as a server that compresses regardless would send it.
        let gz: [UInt8] = [
            31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 75, 75, 45, 42, 170, 84, 72, 27, 37, 137, 32, 1, 59, 111, 11, 6, 44, 1, 0,
            0,
        ]
        let server = try ScriptedHTTPServer { _ in
            ScriptedResponse(headers: ["Content-Encoding": "gzip", "Content-Type": "text/plain"], body: gz)
        }
        defer { server.stop() }
        let dest = out.file("page.txt")
        let r = try await download(server.url("/page.txt"), to: dest).result
        #expect(r.size == Int64(gz.count))
        #expect(try contents(dest) == gz)
        #expect(server.requests.first?.headers["accept-encoding"] == nil)
    }

    @Test func noContentGivesAnEmptyFile() async throws {
        let server = try ScriptedHTTPServer { _ in ScriptedResponse(status: 204) }
        defer { server.stop() }
        let dest = out.file("empty")
        let r = try await download(server.url("/empty"), to: dest).result
        #expect(r.size == 0)
        #expect(try contents(dest).isEmpty)
    }

    @Test func foldedHeaderLinesAreJoined() {
        var h = HTTPHeaders()
        for line in [
            "HTTP/1.1 200 OK\r\n", "Last-Modified:\r\n", " Mon, 02 Jan 2023\r\n", "\t 10:00:00 GMT\r\n",
            "ETag: \"a\r\n", "  b\"\r\n", "X-Long: " + String(repeating: "v", count: 20_000) + "\r\n",
        ] {
            h.consume(line: line)
        }
        #expect(h["Last-Modified"] == "Mon, 02 Jan 2023 10:00:00 GMT")
        #expect(h["ETag"] == "\"a b\"")
        #expect(h["X-Long"]?.count == 20_000)
        #expect(h["Mon, 02 Jan 2023 10"] == nil)
        #expect(h.fields.count == 3)
    }

    @Test func longHeaderLinesAreReadAndHugeOnesFailClearly() async throws {
        let data = bytes(1000)
        let server = try ScriptedHTTPServer { request in
            let size = request.path == "/long.bin" ? 60_000 : 400_000
            return ScriptedResponse(headers: ["X-Padding": String(repeating: "p", count: size)], body: data)
        }
        defer { server.stop() }
        let dest = out.file("long.bin")
        _ = try await download(server.url("/long.bin"), to: dest).result
        #expect(try contents(dest) == data)
        let start = ContinuousClock.now
        if let e = await #expect(
            throws: FerryError.self,
            performing: {
                _ = try await download(server.url("/huge.bin"), to: out.file("huge.bin")).result
            })
        {
            #expect(
                e.code == .protocolError && e.description.contains("huge.bin")
                    && e.description.contains("headers too large"), "\(e)")
        }
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(try listing() == ["long.bin"])
    }

    @Test func anEmptyValidatorIsNoValidator() async throws {
        // `ETag:` with nothing after it must not become `If-Range:` with nothing
        // after it (libcurl drops such a header, and the Range goes unguarded).
        let data = bytes(6000)
        let lastModified = "Tue, 03 Jan 2023 11:00:00 GMT"
        let server = try ScriptedHTTPServer { request in
            if let range = request.headers["range"] {
                let start = rangeStart(range)
                return ScriptedResponse(
                    status: 206, headers: ["Content-Range": "bytes \(start)-5999/6000", "Last-Modified": lastModified],
                    body: Array(data[start...]))
            }
            let head = "HTTP/1.1 200 OK\r\nContent-Length: 6000\r\nETag:\r\nLast-Modified: \(lastModified)\r\n\r\n"
            return .raw(Array(head.utf8) + data[..<1000])
        }
        defer { server.stop() }
        let dest = out.file("v.bin")
        _ = try await download(server.url("/v.bin"), to: dest).result
        #expect(try contents(dest) == data)
        let resumed = server.requests.filter { $0.headers["range"] != nil }
        #expect(resumed.map { $0.headers["if-range"] } == [lastModified])
    }

    @Test func multipartRangesAreNeverWrittenIntoTheFile() async throws {
        let data = bytes(3000)
        let server = try ScriptedHTTPServer { request in
            guard let range = request.headers["range"] else {
                return ScriptedResponse(headers: ["ETag": "\"m\""], body: data)
            }
            let start = rangeStart(range)
            guard start < data.count else {
                return ScriptedResponse(status: 416, headers: ["Content-Range": "bytes */3000"])
            }
            // One part wrapped in MIME, and (wrongly) a top-level Content-Range too,
            // without the size: nothing but the Content-Type tells.
            var body = Array("--SEP\r\nContent-Type: application/octet-stream\r\n".utf8)
            body += Array("Content-Range: bytes \(start)-2999/3000\r\n\r\n".utf8) + data[start...]
            body += Array("\r\n--SEP--\r\n".utf8)
            return ScriptedResponse(
                status: 206,
                headers: [
                    "Content-Type": "multipart/byteranges; boundary=SEP", "ETag": "\"m\"",
                    "Content-Range": "bytes \(start)-2999/*",
                ], body: body)
        }
        defer { server.stop() }
        let dest = out.file("m.bin")
        try Data(data[..<1000]).write(to: URL(fileURLWithPath: dest + ".part"))
        var journal = DownloadJournal(source: server.url("/m.bin"), bootID: DownloadJournal.currentBootID)
        journal.etag = "\"m\""
        try journal.save(to: dest + ".part.journal")
        let r = try await download(server.url("/m.bin"), to: dest).result
        #expect(try contents(dest) == data)
        #expect(r.restarts == 1)
        #expect(r.retries == 0)
    }

    // MARK: stat

    @Test func statAsksWithGETWhenHEADIsRefusedOrSaysNoSize() async throws {
        let data = bytes(5000)
        let server = try ScriptedHTTPServer { request in
            if request.method == "HEAD" {
                switch request.path {
                case "/405.bin": return ScriptedResponse(status: 405, headers: ["Allow": "GET"])
                case "/501.bin": return .text("", status: 501)
                // No Content-Length at all.
                default: return .raw("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
                }
            }
            if request.headers["range"] == "bytes=0-0" {
                return ScriptedResponse(
                    status: 206,
                    headers: ["Content-Range": "bytes 0-0/5000", "Last-Modified": "Mon, 02 Jan 2023 10:00:00 GMT"],
                    body: [data[0]])
            }
            return ScriptedResponse(body: data)
        }
        defer { server.stop() }
        let fs = HTTPFileSystem(url: try RemoteURL(parsing: server.url("/")))
        for name in ["405.bin", "501.bin", "nolength.bin"] {
            let e = try await fs.stat("/" + name)
            #expect(e.size == 5000, "\(name)")
            #expect(e.name == name)
            #expect(e.modified != nil)
        }
    }

    @Test func statStillFailsWhenGETIsRefusedToo() async throws {
        let server = try ScriptedHTTPServer { request in
            request.method == "HEAD" ? .text("", status: 405) : .text("gone", status: 404)
        }
        defer { server.stop() }
        let fs = HTTPFileSystem(url: try RemoteURL(parsing: server.url("/")))
        if let e = await #expect(
            throws: FerryError.self,
            performing: {
                _ = try await fs.stat("/x.bin")
            })
        {
            #expect(
                e.code == .notFound && e.description.contains("x.bin") && e.description.contains("404 Not Found"),
                "\(e)")
        }
    }

    // MARK: Names and errors

    @Test func anEscapedSlashStaysInTheRequestAndTheName() async throws {
        let data = bytes(2000)
        let server = try ScriptedHTTPServer { request in
            request.path == "/api/files/docs%2Freadme.txt" ? ScriptedResponse(body: data) : .text("no", status: 404)
        }
        defer { server.stop() }
        let url = try RemoteURL(parsing: server.url("/api/files/docs%2Freadme.txt"))
        #expect(url.lastComponent == "docs%2Freadme.txt")
        #expect(url.redacted == server.url("/api/files/docs%2Freadme.txt"))
        let dest = out.file(url.lastComponent)
        _ = try await Ferry.download(url, to: dest).result
        #expect(try contents(dest) == data)
        #expect(server.requests.map(\.path) == ["/api/files/docs%2Freadme.txt"])
        #expect(try listing() == ["docs%2Freadme.txt"])
        // Changing the path drops the escaped form with it.
        #expect(url.with(path: "/b c").redacted == server.url("/b%20c"))
    }

    @Test func aNameInAnotherEncodingThanUTF8IsFetchedAsWritten() async throws {
        // An old server with Latin-1 names: "café.txt" is caf%E9.txt on the wire.
        let data = bytes(1500)
        let server = try ScriptedHTTPServer { request in
            request.path == "/old/caf%E9.txt" ? ScriptedResponse(body: data) : .text("no", status: 404)
        }
        defer { server.stop() }
        let url = try RemoteURL(parsing: server.url("/old/caf%e9.txt"))
        #expect(url.lastComponent == "caf%E9.txt")
        #expect(url.redacted == server.url("/old/caf%E9.txt"))
        let dest = out.file(url.lastComponent)
        _ = try await Ferry.download(url, to: dest).result
        #expect(try contents(dest) == data)
        #expect(server.requests.map(\.path) == ["/old/caf%E9.txt"])
        // Malformed escapes are still a bad URL.
        #expect(throws: FerryError.self) { try RemoteURL(parsing: server.url("/old/caf%E.txt")) }
        #expect(throws: FerryError.self) { try RemoteURL(parsing: server.url("/old/caf%zz.txt")) }
    }

    @Test func errorsNameTheFileAndTheServersReasonWithoutControlCharacters() async throws {
        let server = try ScriptedHTTPServer { request in
            switch request.path {
            case "/moved.bin": ScriptedResponse(status: 302, headers: ["Location": "/gone.bin"])
            case "/gone.bin": .raw("HTTP/1.1 410 Gone\u{1B}[2J away\r\nContent-Length: 0\r\n\r\n")
            default: .raw("HTTP/1.1 418 \r\nContent-Length: 0\r\n\r\n")
            }
        }
        defer { server.stop() }
        let url = "http://me:hunter2@127.0.0.1:\(server.port)/moved.bin"
        if let e = await #expect(
            throws: FerryError.self,
            performing: {
                _ = try await download(url, to: out.file("moved.bin")).result
            })
        {
            let text = e.description
            #expect(
                e.code == .notFound && text.contains("moved.bin") && text.contains("410 Gone")
                    && !text.contains("hunter2") && !text.unicodeScalars.contains { $0.value < 0x20 }, "\(e)")
        }
        let teapot = await #expect(throws: FerryError.self) {
            _ = try await download(server.url("/teapot.bin"), to: out.file("teapot.bin")).result
        }
        #expect(teapot?.description == "download \(server.url("/teapot.bin")): 418 HTTP error")
    }
}

/// The first byte a `Range: bytes=S-` or `bytes=S-E` header asks for. A header of another form is recorded as a test
/// failure; it was a forced unwrap of `bytes=S-` only, and a `bytes=0-0` took the whole test run down with it.
private func rangeStart(_ header: String) -> Int {
    let spec = header.hasPrefix("bytes=") ? header.dropFirst("bytes=".count) : ""
    guard let dash = spec.firstIndex(of: "-"), let start = Int(spec[..<dash]) else {
        Issue.record("unexpected Range header: \(header)")
        return 0
    }
    return start
}
