import FerryServer
import FerryTestSupport
import Foundation
import Testing

/// Samples this process's resident memory while an upload runs.
final class MemorySampler: @unchecked Sendable {  // `peak` and `running` are guarded by `lock`
    private let lock = NSLock()
    private var peak = 0
    private var running = true
    private let baseline: Int

    init() {
        baseline = Self.residentBytes()
        peak = baseline
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                let now = Self.residentBytes()
                lock.withLock { peak = max(peak, now) }
                usleep(2000)
            }
        }
        thread.start()
    }

    /// Stops sampling; returns the largest growth over the baseline, in bytes.
    func stop() -> Int {
        lock.withLock {
            running = false
            return peak - baseline
        }
    }

    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        return (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// Answers with one line per part: `name|filename|lastComponent|kind:size`,
/// and moves file parts to `keep/<index>` when `keep` is given.
private func formHandler(keep: String? = nil) -> @Sendable (HTTPRequest) async -> HTTPResponse {
    { request in
        guard case .multipart(let parts) = request.body else { return .text("not multipart", status: 400) }
        var lines: [String] = []
        for (index, part) in parts.enumerated() {
            var kind = ""
            switch part.content {
            case .data(let data): kind = "data:\(data.count):\(String(decoding: data, as: UTF8.self))"
            case .file(let path, let size):
                kind = "file:\(size)"
                if let keep { rename(path, "\(keep)/\(index)") }
            }
            lines.append("\(part.name ?? "-")|\(part.filename ?? "-")|\(part.filenameLastComponent ?? "-")|\(kind)")
        }
        return .text(lines.joined(separator: "\n"))
    }
}

@Suite struct UploadTests {
    @Test func twentyMegabyteUploadIsStoredByteIdenticalWithBoundedMemory() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let source = try scratch.makeFile("big.bin", size: 20 << 20, seed: 3)
        let keep = scratch.file("keep")
        try FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
        var options = HTTPServer.Options()
        options.temporaryDirectory = scratch.path  // same file system: the handler renames into place
        // Alone in the gate: other tests' buffers would count as growth.
        try await TestGate.run(exclusive: true) {
            let server = HTTPServer(options: options, handler: formHandler(keep: keep))
            try server.start()
            defer { server.stop() }
            let sampler = MemorySampler()
            let result = try await curl(["-F", "note=hello", "-F", "file=@\(source)", "\(server.baseURL)/upload.cgi"])
            let growth = sampler.stop()
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(result.stdoutText == "note|-|-|data:5:hello\nfile|big.bin|big.bin|file:\(20 << 20)")
            #expect(try filesEqual(source, "\(keep)/1"))
            // Holding the upload in memory would add 20 MiB or more. Other suites run
            // in this process at the same time, so this figure is only printed here;
            // CardUploadMemoryTests bounds it on a server process of its own.
            print("in-process upload: resident memory grew by \(growth) bytes")
        }
    }

    @Test func filenamesWithSpacesQuotesAndNonASCII() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let source = try scratch.makeFile("x.jpg", size: 1000)
        try await withServer(handler: formHandler()) { server in
            let url = "\(server.baseURL)/upload.cgi"
            let spaced = try await curl(["-F", "file=@\(source);filename=\"my holiday photo.jpg\"", url])
            #expect(spaced.stdoutText == "file|my holiday photo.jpg|my holiday photo.jpg|file:1000")

            let unicode = try await curl(["-F", "file=@\(source);filename=\"日本 ü ñ.jpg\"", url])
            #expect(unicode.stdoutText == "file|日本 ü ñ.jpg|日本 ü ñ.jpg|file:1000")

            // Backslash-escaped quotes (curl --form-escape, RFC 2616 quoted-string).
            let escaped = try await curl([
                "--form-escape", "-F", "file=@\(source);filename=\"say \\\"cheese\\\".jpg\"", url,
            ])
            #expect(escaped.stdoutText == "file|say \"cheese\".jpg|say \"cheese\".jpg|file:1000")

            // Browsers and curl's default write a quote as %22; the raw value is kept.
            let percent = try await curl(["-F", "file=@\(source);filename=\"say \\\"cheese\\\".jpg\"", url])
            #expect(percent.stdoutText == "file|say %22cheese%22.jpg|say %22cheese%22.jpg|file:1000")
        }
    }

    @Test func rawFilenamesWithPathsAreKeptWhole() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        try await withServer(handler: formHandler()) { server in
            let port = server.port
            let answers = try await onThread {
                try [#"C:\Users\me\IMG 0001.JPG"#, "/home/u/a.jpg", #"a\"b;c.jpg"#, "plain.jpg"].map { quoted in
                    let body =
                        "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(quoted)\"\r\n"
                        + "Content-Type: image/jpeg\r\n\r\nJPEG\r\n--XyZ--\r\n"
                    let client = try RawClient(port: port)
                    client.send(
                        "POST /upload.cgi HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XyZ\r\n"
                            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
                    return String(decoding: try client.readResponse()?.body ?? Data(), as: UTF8.self)
                }
            }
            #expect(answers[0] == #"file|C:\Users\me\IMG 0001.JPG|IMG 0001.JPG|file:4"#)
            #expect(answers[1] == "file|/home/u/a.jpg|a.jpg|file:4")
            #expect(answers[2] == #"file|a"b;c.jpg|a"b;c.jpg|file:4"#)
            #expect(answers[3] == "file|plain.jpg|plain.jpg|file:4")
        }
    }

    @Test func malformedMultipartGets400AndLeavesNoFiles() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        var options = HTTPServer.Options()
        options.temporaryDirectory = scratch.path
        try await withServer(options: options, handler: formHandler()) { server in
            let port = server.port
            let status = try await onThread {
                let body =
                    "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\n\r\nJPEG without end"
                let client = try RawClient(port: port)
                client.send(
                    "POST /upload.cgi HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XyZ\r\n"
                        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
                return try client.readResponse()?.status
            }
            #expect(status == 400)
            try await Task.sleep(for: .milliseconds(100))
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
        }
    }

    @Test func oversizedPartHeadersGet400() async throws {
        var options = HTTPServer.Options()
        options.multipartLimits.maxPartHeaderSize = 1024
        try await withServer(options: options, handler: formHandler()) { server in
            let port = server.port
            let status = try await onThread {
                let body =
                    "--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\nX-Pad: \(String(repeating: "p", count: 5000))\r\n\r\nv\r\n--XyZ--\r\n"
                let client = try RawClient(port: port)
                client.send(
                    "POST /upload.cgi HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XyZ\r\n"
                        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
                return try client.readResponse()?.status
            }
            #expect(status == 400)
        }
    }
}
