import FerryTestSupport
import Foundation
import Testing

/// `ferry serve` as a process, over real HTTP with curl: the printed URL,
/// the page, the API, Range on files, and the token cookie.
@Suite(.serialized)
struct ServeCommandTests {
    static func curl(_ args: String...) throws -> TestProcess.Output {
        try TestProcess.run(TestProcess.which("curl") ?? "/usr/bin/curl", ["-sS"] + args)
    }

    @Test func servesThePageTheAPIAndRanges() throws {
        let dir = try TempDir(prefix: "serve")
        try Data((0..<1000).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: dir.file("data.bin")))
        let server = try ServerProcess(
            TestProcess.ferryExecutable(), ["serve", dir.path, "--port", "0", "--cache", dir.file(".cache")],
            logPath: NSTemporaryDirectory() + "/ferry-serve-\(getpid()).log")
        defer { server.stop() }
        let url = try ServeFixture.waitForURL(server)
        #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/") && !url.contains("token"))

        let page = try Self.curl("-i", url)
        #expect(page.stdout.contains("200 OK") && page.stdout.contains("data-testid=\"viewer\""))
        #expect(page.stdout.contains("Content-Security-Policy: default-src 'none'"))
        let script = try Self.curl("-i", url + "app.js")
        #expect(script.stdout.contains("text/javascript"))

        let list = try Self.curl(url + "api/list?path=/")
        #expect(list.stdout.contains("\"name\":\"data.bin\""), "\(list.stdout)")
        let range = try Self.curl("-i", "-H", "Range: bytes=10-19", url + "api/file?path=/data.bin")
        #expect(range.stdout.contains("206 Partial Content"))
        #expect(range.stdout.contains("Content-Range: bytes 10-19/1000"))

        let mkdir = try Self.curl(
            "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Content-Type: application/json",
            "--data", "{\"path\":\"/made\"}", url + "api/mkdir")
        #expect(mkdir.stdout == "403", "no Origin: \(mkdir.stdout)")
        let upload = try Self.curl(
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "Origin: \(url.dropLast())", "-F",
            "file=@\(dir.file("data.bin"));filename=copy.bin", url + "api/upload?path=/")
        #expect(upload.stdout == "201")
        #expect(FileManager.default.contentsEqual(atPath: dir.file("copy.bin"), andPath: dir.file("data.bin")))
    }

    @Test func tokenTravelsInTheURLThenInACookie() throws {
        // Bound to loopback, but with a token as on any other address.
        let dir = try TempDir(prefix: "serve-token")
        try Data("hi".utf8).write(to: URL(fileURLWithPath: dir.file("a.txt")))
        let server = try ServerProcess(
            TestProcess.ferryExecutable(),
            ["serve", dir.path, "--port", "0", "--cache", dir.file(".cache"), "--token", "t0ken"],
            logPath: NSTemporaryDirectory() + "/ferry-serve-token-\(getpid()).log")
        defer { server.stop() }
        let url = try ServeFixture.waitForURL(server)
        #expect(url.hasSuffix("/?token=t0ken"))
        let base = String(url.prefix { $0 != "?" })
        let denied = try Self.curl("-o", "/dev/null", "-w", "%{http_code}", base + "api/list?path=/")
        #expect(denied.stdout == "401")
        let jar = dir.file(".jar")
        let opened = try Self.curl("-c", jar, "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", url)
        #expect(opened.stdout.hasPrefix("303 "), "\(opened.stdout)")
        let listed = try Self.curl("-b", jar, base + "api/list?path=/")
        #expect(listed.stdout.contains("a.txt"), "\(listed.stdout)")
    }
}
