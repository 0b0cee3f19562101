import FerryServer
import Foundation
import Testing

/// Serves files of a scratch folder at `/NAME`; `/norange/NAME` without Range support.
private func fileHandler(_ root: String) -> @Sendable (HTTPRequest) async -> HTTPResponse {
    { request in
        if request.path.hasPrefix("/norange/") {
            return .file(root + "/" + request.path.dropFirst("/norange/".count), supportsRanges: false)
        }
        return .file(root + request.path, contentType: "image/jpeg")
    }
}

@Suite struct FileResponseTests {
    let scratch: ScratchDirectory
    let size = 1_000_003

    init() throws {
        scratch = try ScratchDirectory()
        try scratch.makeFile("a.jpg", size: size, seed: 7)
        try scratch.makeFile("empty.bin", size: 0)
    }

    private func bytes(_ range: ClosedRange<Int>) throws -> Data {
        let data = try Data(contentsOf: URL(fileURLWithPath: scratch.file("a.jpg")))
        return data[range]
    }

    @Test func downloadIsByteIdenticalWithValidators() async throws {
        defer { scratch.remove() }
        try await withServer(handler: fileHandler(scratch.path)) { server in
            let out = scratch.file("out.jpg")
            let result = try await curl(["-D", "-", "-o", out, "\(server.baseURL)/a.jpg"])
            #expect(result.exitCode == 0)
            #expect(try filesEqual(out, scratch.file("a.jpg")))
            let head = result.stdoutText
            #expect(head.hasPrefix("HTTP/1.1 200"))
            #expect(head.contains("Content-Length: \(size)\r\n"))
            #expect(head.contains("Content-Type: image/jpeg\r\n"))
            #expect(head.contains("Accept-Ranges: bytes\r\n"))
            #expect(head.contains("ETag: \""))
            #expect(head.contains("Last-Modified: "))
            #expect(head.contains(" GMT\r\n"))
        }
    }

    @Test func rangesGive206WithContentRange() async throws {
        defer { scratch.remove() }
        try await withServer(handler: fileHandler(scratch.path)) { server in
            let url = "\(server.baseURL)/a.jpg"
            let middle = try await curl(["-D", scratch.file("h1"), "-r", "10-19", url])
            #expect(middle.stdout == (try bytes(10...19)))
            let h1 = try String(contentsOfFile: scratch.file("h1"), encoding: .utf8)
            #expect(h1.hasPrefix("HTTP/1.1 206"))
            #expect(h1.contains("Content-Range: bytes 10-19/\(size)\r\n"))
            #expect(h1.contains("Content-Length: 10\r\n"))

            let open = try await curl(["-D", scratch.file("h2"), "-H", "Range: bytes=999990-", url])
            #expect(open.stdout == (try bytes(999_990...(size - 1))))
            #expect(
                try String(contentsOfFile: scratch.file("h2"), encoding: .utf8).contains(
                    "Content-Range: bytes 999990-\(size - 1)/\(size)\r\n"))

            let suffix = try await curl(["-D", scratch.file("h3"), "-H", "Range: bytes=-5", url])
            #expect(suffix.stdout == (try bytes((size - 5)...(size - 1))))
            #expect(
                try String(contentsOfFile: scratch.file("h3"), encoding: .utf8).contains(
                    "Content-Range: bytes \(size - 5)-\(size - 1)/\(size)\r\n"))

            // A suffix longer than the file is the whole file, still as 206.
            let long = try await curl(["-D", scratch.file("h4"), "-H", "Range: bytes=-99999999", url])
            #expect(long.stdout.count == size)
            #expect(try String(contentsOfFile: scratch.file("h4"), encoding: .utf8).hasPrefix("HTTP/1.1 206"))

            // An end past the file is clamped.
            let clamped = try await curl(["-H", "Range: bytes=\(size - 3)-\(size + 100)", url])
            #expect(clamped.stdout == (try bytes((size - 3)...(size - 1))))
        }
    }

    @Test func unsatisfiableRangeGives416() async throws {
        defer { scratch.remove() }
        try await withServer(handler: fileHandler(scratch.path)) { server in
            for range in ["bytes=\(size)-", "bytes=\(size + 5)-\(size + 10)", "bytes=-0"] {
                let result = try await curl(["-i", "-H", "Range: \(range)", "\(server.baseURL)/a.jpg"])
                #expect(result.stdoutText.hasPrefix("HTTP/1.1 416"), "\(range)")
                #expect(result.stdoutText.contains("Content-Range: bytes */\(size)\r\n"), "\(range)")
            }
            let empty = try await curl(["-i", "-H", "Range: bytes=0-", "\(server.baseURL)/empty.bin"])
            #expect(empty.stdoutText.hasPrefix("HTTP/1.1 416"))
            #expect(empty.stdoutText.contains("Content-Range: bytes */0\r\n"))
        }
    }

    @Test func multipleOrInvalidRangesGiveTheWholeFile() async throws {
        defer { scratch.remove() }
        try await withServer(handler: fileHandler(scratch.path)) { server in
            for range in ["bytes=0-1,5-6", "bytes=5-2", "items=0-1", "bytes=a-b"] {
                let result = try await curl([
                    "-D", scratch.file("h"), "-H", "Range: \(range)", "\(server.baseURL)/a.jpg",
                ])
                #expect(result.stdout.count == size, "\(range)")
                #expect(try String(contentsOfFile: scratch.file("h"), encoding: .utf8).hasPrefix("HTTP/1.1 200"))
            }
        }
    }

    @Test func ifRangeMatchesOnlyTheCurrentValidator() async throws {
        defer { scratch.remove() }
        try await withServer(handler: fileHandler(scratch.path)) { server in
            let url = "\(server.baseURL)/a.jpg"
            let head = try await curl(["-I", url]).stdoutText
            func header(_ name: String) -> String {
                head.components(separatedBy: "\r\n").first { $0.hasPrefix("\(name): ") }!.dropFirst(name.count + 2)
                    .description
            }
            let etag = header("ETag")
            let lastModified = header("Last-Modified")

            let sameTag = try await curl(["-w", "\n%{http_code}", "-r", "0-3", "-H", "If-Range: \(etag)", url])
            #expect(sameTag.stdoutText.hasSuffix("\n206"))
            let sameDate = try await curl(["-w", "\n%{http_code}", "-r", "0-3", "-H", "If-Range: \(lastModified)", url])
            #expect(sameDate.stdoutText.hasSuffix("\n206"))

            let otherTag = try await curl([
                "-o", "/dev/null", "-w", "%{http_code} %{size_download}", "-r", "0-3", "-H", "If-Range: \"other\"", url,
            ])
            #expect(otherTag.stdoutText == "200 \(size)")
            let weakTag = try await curl([
                "-o", "/dev/null", "-w", "%{http_code}", "-r", "0-3", "-H", "If-Range: W/\(etag)", url,
            ])
            #expect(weakTag.stdoutText == "200")
            let otherDate = try await curl([
                "-o", "/dev/null", "-w", "%{http_code}", "-r", "0-3", "-H", "If-Range: Thu, 01 Jan 1970 00:00:00 GMT",
                url,
            ])
            #expect(otherDate.stdoutText == "200")
        }
    }

    @Test func rangeSupportCanBeTurnedOff() async throws {
        defer { scratch.remove() }
        try await withServer(handler: fileHandler(scratch.path)) { server in
            let result = try await curl(["-D", scratch.file("h"), "-r", "10-19", "\(server.baseURL)/norange/a.jpg"])
            #expect(result.stdout.count == size)
            let head = try String(contentsOfFile: scratch.file("h"), encoding: .utf8)
            #expect(head.hasPrefix("HTTP/1.1 200"))
            #expect(!head.contains("Accept-Ranges"))
            #expect(!head.contains("Content-Range"))
        }
    }

    @Test func headOfAFileAndOfARange() async throws {
        defer { scratch.remove() }
        try await withServer(handler: fileHandler(scratch.path)) { server in
            let full = try await curl(["-I", "\(server.baseURL)/a.jpg"])
            #expect(full.stdoutText.hasPrefix("HTTP/1.1 200"))
            #expect(full.stdoutText.contains("Content-Length: \(size)\r\n"))
            #expect(full.stdoutText.hasSuffix("\r\n\r\n"))
            let part = try await curl(["-I", "-r", "0-99", "\(server.baseURL)/a.jpg"])
            #expect(part.stdoutText.hasPrefix("HTTP/1.1 206"))
            #expect(part.stdoutText.contains("Content-Length: 100\r\n"))
        }
    }

    @Test func missingFileOrFolderGives404() async throws {
        defer { scratch.remove() }
        try await withServer(handler: fileHandler(scratch.path)) { server in
            for path in ["/nothing.jpg", "/", "/a.jpg/x"] {
                let result = try await curl(["-o", "/dev/null", "-w", "%{http_code}", "\(server.baseURL)\(path)"])
                #expect(result.stdoutText == "404", "\(path)")
            }
        }
    }

    @Test func emptyFileDownloads() async throws {
        defer { scratch.remove() }
        try await withServer(handler: fileHandler(scratch.path)) { server in
            let result = try await curl(["-i", "\(server.baseURL)/empty.bin"])
            #expect(result.stdoutText.hasPrefix("HTTP/1.1 200"))
            #expect(result.stdoutText.contains("Content-Length: 0\r\n"))
        }
    }
}
