import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryKit

/// What a download's requests carry, now that the option strings every request
/// sets are made once per process (`OptionString`) and a file's URL, headers and
/// display name once per file (`HTTPDownloadAttempt.Request`): the same on
/// every attempt, a resume adding `Range` and `If-Range`.
@Suite(.serialized)
struct HTTPRequestHeadersTests {
    @Test func everyAttemptSendsTheSameRequestAndAResumeAddsTheRange() async throws {
        let data = Array(TestData.bytes(40_000, seed: 3))
        let seen = Mutex(0)
        // The first answer breaks off after half the body; the second is the rest.
        let server = try ScriptedHTTPServer { request in
            let n = seen.withLock {
                $0 += 1
                return $0
            }
            if n == 1 {
                let head =
                    "HTTP/1.1 200 OK\r\nContent-Length: \(data.count)\r\nETag: \"v1\"\r\nConnection: close\r\n\r\n"
                return .raw(Array(head.utf8) + data[..<20_000])
            }
            return ScriptedResponse(
                status: 206,
                headers: ["Content-Range": "bytes 20000-39999/40000", "ETag": "\"v1\""], body: Array(data[20_000...]))
        }
        defer { server.stop() }
        let out = try TempDir(prefix: "req-headers")
        var options = ConnectionOptions()
        options.httpHeaders = ["X-One": "1", "X-Two": "2"]
        let fs = HTTPFileSystem(url: try RemoteURL(parsing: server.url("/a%20b.bin?k=v")), options: options)
        var download = DownloadOptions()
        download.retryDelay = .milliseconds(20)
        let result = try await fs.download("/a b.bin", to: out.file("a.bin"), options: download).result
        #expect(result.size == 40_000)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: out.file("a.bin")))) == data)
        let requests = server.requests
        #expect(requests.count == 2)
        for r in requests {
            #expect(r.target == "/a%20b.bin?k=v")
            #expect(r.headers["user-agent"] == "ferry/\(Ferry.version)")
            #expect(r.headers["x-one"] == "1" && r.headers["x-two"] == "2")
        }
        #expect(requests.first?.headers["range"] == nil && requests.first?.headers["if-range"] == nil)
        #expect(requests.last?.headers["range"] == "bytes=20000-")
        #expect(requests.last?.headers["if-range"] == "\"v1\"")
    }

    /// The name a download shows and its journal records is `RemoteURL.redacted`,
    /// also when it is taken from the wire URL (the same text without a user name).
    @Test func theDisplayNameIsTheRedactedURL() throws {
        for text in [
            "http://example.test/a.bin", "https://example.test:8443/d%20ir/%C3%A9.jpg?x=1&y=%2F",
            "http://[::1]:8080/a%2Fb.txt", "http://ann:secret@example.test/a.bin", "http://ann@example.test/a",
            "flashair://card/DCIM/100/IMG_0001.JPG",
        ] {
            let url = try RemoteURL(parsing: text)
            let wire: String? = url.scheme == .flashair ? "http" : nil
            let source = HTTPDownloadAttempt.source(url: url, engine: .shared, wireScheme: wire)
            #expect(source.displayName == url.redacted, "\(text)")
            #expect(!source.displayName.contains("secret"))
        }
    }
}
