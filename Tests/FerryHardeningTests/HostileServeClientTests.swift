import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Hostile clients against the real `ferry serve` process over a local folder:
/// path escapes through every API that takes a path, changes aimed outside the
/// root, photos built to exhaust memory when thumbnailed, oversized and
/// malformed requests, a foreign `Host`, slow clients. Refused or bounded,
/// never outside the root, never a crash.
@Suite(.serialized)
struct HostileServeClientTests {
    let base: TempDir
    let root: String
    let server: ServerProcess
    let port: Int
    static let secret = "SERVE-OUTSIDE-SECRET"

    init() throws {
        base = try TempDir(prefix: "hostile-serve")
        root = base.file("root")
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/DCIM/100FERRY", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: base.file("victims"), withIntermediateDirectories: true)
        try Self.secret.write(toFile: base.file("secret.txt"), atomically: true, encoding: .utf8)
        try "inside".write(toFile: root + "/DCIM/100FERRY/A.TXT", atomically: true, encoding: .utf8)
        symlink("..", root + "/link-out")
        symlink("../secret.txt", root + "/link-file.txt")
        symlink(base.path, root + "/DCIM/abs-out")
        symlink("100FERRY", root + "/DCIM/inside")
        // Photos that claim 65500 x 65500 pixels in a few hundred bytes (Fuzz/corpus/JPEGDecode).
        let corpus = TestProcess.packageRoot() + "/Fuzz/corpus/JPEGDecode/"
        for kind in ["progressive", "baseline"] {
            try fm.copyItem(atPath: corpus + "crash-\(kind)-65500x65500", toPath: root + "/bomb-\(kind).jpg")
        }
        server = try ServerProcess(
            TestProcess.ferryExecutable(), ["serve", root, "--port", "0", "--cache", base.file("cache")],
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

    func get(_ target: String, headers: [String: String] = [:]) throws -> RawHTTP.Response {
        try RawHTTP.request(port: port, target: target, headers: headers)
    }

    func post(_ target: String, json: String) throws -> RawHTTP.Response {
        try RawHTTP.request(
            port: port, method: "POST", target: target,
            headers: ["Origin": "http://127.0.0.1:\(port)", "Content-Type": "application/json"],
            body: Array(json.utf8))
    }

    func expectHealthy(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(server.process.isRunning, "ferry serve died after \(what)", sourceLocation: sourceLocation)
        #expect(try get("/api/source").status == 200, "no answer after \(what)", sourceLocation: sourceLocation)
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: base.path))
        #expect(
            names.isSubset(of: ["root", "victims", "secret.txt", "cache", "serve.log"]), "\(what): \(names)",
            sourceLocation: sourceLocation)
        #expect(try String(contentsOfFile: base.file("secret.txt"), encoding: .utf8) == Self.secret)
        #expect(try FileManager.default.contentsOfDirectory(atPath: base.file("victims")).isEmpty)
    }

    func expectRefused(_ r: RawHTTP.Response, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!r.text.contains(Self.secret), "\(what) leaked the secret", sourceLocation: sourceLocation)
        if r.status == 200 {
            // Only an empty or inside listing may come back (a path that names nothing outside).
            #expect(
                !r.text.contains("secret.txt") && !r.text.contains("victims"), "\(what): \(r.text.prefix(300))",
                sourceLocation: sourceLocation)
        } else {
            #expect((400..<500).contains(r.status), "\(what) answered \(r.status)", sourceLocation: sourceLocation)
        }
    }

    static let escapes = [
        "/..", "/../secret.txt", "/%2e%2e/secret.txt", "/%252e%252e/secret.txt", "/%25252e%25252e/secret.txt",
        "/%c0%ae%c0%ae/secret.txt", "/.%2e/secret.txt", "/DCIM/..%2f..%2fsecret.txt", "/DCIM%2f..%2f..%2fsecret.txt",
        "/link-out/secret.txt", "/link-file.txt", "/link-out", "/DCIM/abs-out", "/DCIM/abs-out/secret.txt",
        "/link-out/root/link-file.txt", "/..%5csecret.txt", "/%5c..%5csecret.txt", "/a%00/../../secret.txt",
        "/DCIM%00", "%2F..%2Fsecret.txt", "secret.txt", "..", "//secret.txt",
        "/" + String(repeating: "%2e%2e/", count: 40) + "etc/passwd",
    ]

    @Test func pathEscapesThroughEveryAPI() async throws {
        try await onThread { try self.pathEscapesThroughEveryAPIBody() }
    }

    func pathEscapesThroughEveryAPIBody() throws {
        for path in Self.escapes + [base.file("secret.txt"), "/etc/passwd"] {
            let query = path.replacingOccurrences(of: "%", with: "%25")
            for api in ["list", "stat", "file", "thumb"] {
                expectRefused(try get("/api/\(api)?path=\(query)"), "\(api) \(path)")
                expectRefused(try get("/api/\(api)?path=\(path)"), "\(api) \(path) (raw)")
            }
            expectRefused(try get(path.hasPrefix("/") ? path : "/" + path), "page file \(path)")
        }
        // Inside the root, through a link that stays inside, files are served.
        #expect(try get("/api/file?path=/DCIM/inside/A.TXT").text == "inside")
        try expectHealthy("path escapes")
    }

    @Test func changesAimedOutsideAreRefused() async throws {
        try await onThread { try self.changesAimedOutsideAreRefusedBody() }
    }

    func changesAimedOutsideAreRefusedBody() throws {
        for path in Self.escapes {
            let escaped = path.replacingOccurrences(of: "\\", with: "\\\\")
            expectRefused(try post("/api/mkdir", json: "{\"path\":\"\(escaped)/new\"}"), "mkdir \(path)")
            expectRefused(try post("/api/delete", json: "{\"path\":\"\(escaped)\"}"), "delete \(path)")
            expectRefused(
                try post("/api/rename", json: "{\"path\":\"\(escaped)\",\"name\":\"renamed\"}"), "rename \(path)")
        }
        for name in ["..", "../victims/x", "/abs", "a/b", "%2e%2e", "%252e%252e", "a\\u0000b", "a\\\\..\\\\b"] {
            expectRefused(
                try post("/api/rename", json: "{\"path\":\"/DCIM/100FERRY/A.TXT\",\"name\":\"\(name)\"}"),
                "rename to \(name)")
        }
        let boundary = "B"
        for filename in ["..", "../../victims/x.txt", "a\u{1}b"] {
            let body =
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"\(filename)\"\r\n\r\nEVIL\r\n--\(boundary)--\r\n"
            let r = try RawHTTP.request(
                port: port, method: "POST", target: "/api/upload?path=/link-out",
                headers: [
                    "Origin": "http://127.0.0.1:\(port)", "Content-Type": "multipart/form-data; boundary=\(boundary)",
                ], body: Array(body.utf8))
            expectRefused(r, "upload \(filename) into /link-out")
        }
        #expect(FileManager.default.fileExists(atPath: root + "/DCIM/100FERRY/A.TXT"))
        try expectHealthy("changes aimed outside")
    }

    /// A 530-byte progressive JPEG claiming 65500 x 65500 pixels made libjpeg zero
    /// about 13 GB of coefficients when its thumbnail was asked for; the baseline
    /// one made a 200 MB pixel buffer. Both are refused now, quickly, in little memory.
    @Test func thumbnailsOfDecompressionBombsAreRefused() async throws {
        try await onThread { try self.thumbnailsOfDecompressionBombsAreRefusedBody() }
    }

    func thumbnailsOfDecompressionBombsAreRefusedBody() throws {
        let before = Self.peakResidentKiB(server.process.processIdentifier)
        for kind in ["progressive", "baseline"] {
            let start = Date()
            let r = try get("/api/thumb?path=/bomb-\(kind).jpg")
            #expect(r.status == 422, "\(kind): \(r.status) \(r.text)")
            #expect(Date().timeIntervalSince(start) < 10, "\(kind) took too long")
        }
        let after = Self.peakResidentKiB(server.process.processIdentifier)
        #expect(after - before < 100 * 1024, "peak memory grew from \(before) KiB to \(after) KiB")
        try expectHealthy("decompression bombs")
    }

    @Test func foreignHostsOversizedAndMalformedRequests() async throws {
        try await onThread { try self.foreignHostsOversizedAndMalformedRequestsBody() }
    }

    func foreignHostsOversizedAndMalformedRequestsBody() throws {
        // DNS rebinding: a page served as evil.example that resolves to 127.0.0.1.
        let rebound = try #require(RawSocket(port: port))
        rebound.send("GET /api/list?path=/ HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
        #expect(RawSocket.status(rebound.read(timeout: 5).bytes) == 403)
        for request in [
            "GET /api/list?path=/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + String(repeating: "a", count: 1 << 20)
                + "\r\n\r\n",
            "GET /api/list?path=/ HTTP/1.1\r\nHost: 127.0.0.1\r\n" + String(repeating: "X-a: b\r\n", count: 20_000)
                + "\r\n",
            "POST /api/mkdir HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://127.0.0.1\r\nContent-Length: 99999999999\r\n\r\n{",
            "POST /api/connect HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://127.0.0.1\r\nContent-Length: 5\r\n\r\n{\"url",
            "GET /api/file?path=/DCIM/100FERRY/A.TXT HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=-99999999999999999999\r\n\r\n",
            "\u{0}\u{1}\u{2}garbage\r\n\r\n",
        ] {
            guard let socket = RawSocket(port: port) else { continue }
            socket.send(request)
            _ = socket.read(timeout: 2)
        }
        try expectHealthy("malformed requests")
    }

    /// libmicrohttpd skips a line that starts with NUL as if it were empty: such
    /// a request got no answer and held its connection for the idle timeout
    /// (30-45 s). Now: 400 and closed, in about a second.
    @Test func aRequestLineStartingWithNULIsAnsweredAtOnce() async throws {
        let port = self.port
        let answer = try await onThread { RawSocket.nulRequestLine(port: port) }
        #expect(answer.status == 400, "\(answer)")
        #expect(answer.closed, "\(answer)")
        #expect(answer.seconds < 2, "\(answer)")
        let healthy = try await onThread { try self.get("/api/source").status }
        #expect(healthy == 200)
    }

    /// A path no file system holds: 414 (it was 500 from list), never a 5xx.
    @Test func pathsPastPathMaxAreRefusedAs414() async throws {
        let statuses = try await onThread {
            var statuses: [String: Int] = [:]
            for bytes in [6000, 4090] {
                let path = String(String(repeating: "/aaaaaaaa", count: bytes / 9 + 1).prefix(bytes))
                for api in ["list", "stat", "file", "thumb", "preview", "info"] {
                    statuses["\(api) \(bytes)"] = try self.get("/api/\(api)?path=\(path)").status
                }
            }
            return statuses
        }
        #expect(statuses["list 6000"] == 414, "\(statuses)")
        #expect(statuses["list 4090"] == 414, "\(statuses)")
        for (what, status) in statuses {
            #expect((400..<500).contains(status), "\(what) answered \(status)")
        }
    }

    /// `/api/info` of nothing answered 200 with only the name.
    @Test func infoOfAMissingFileIs404() async throws {
        let (missing, folder, present) = try await onThread {
            (
                try self.get("/api/info?path=/DCIM/100FERRY/NOPE.JPG"), try self.get("/api/info?path=/DCIM"),
                try self.get("/api/info?path=/DCIM/100FERRY/A.TXT")
            )
        }
        #expect(missing.status == 404, "\(missing.status) \(missing.text)")
        #expect(missing.text.contains("no such file"), "\(missing.text)")
        #expect(folder.status == 404, "\(folder.status) \(folder.text)")
        #expect(present.status == 200, "\(present.status) \(present.text)")
    }

    static func peakResidentKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ")[0]) ?? 0
        }
        return 0
    }
}
