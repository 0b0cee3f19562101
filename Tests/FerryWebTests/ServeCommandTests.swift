import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ferry serve` as a process, over real HTTP with curl: the printed URL,
/// the page, the API, Range on files, and the token cookie.
@Suite(.serialized)
struct ServeCommandTests {
    static func curl(_ args: String...) async throws -> TestProcess.Output {
        try await onThread { try TestProcess.run(TestProcess.which("curl") ?? "/usr/bin/curl", ["-sS"] + args) }
    }

    static func serve(_ arguments: [String], log: String) async throws -> (ServerProcess, String) {
        try await onThread {
            let server = try ServerProcess(TestProcess.ferryExecutable(), arguments, logPath: log)
            do {
                return (server, try ServeFixture.waitForURL(server))
            } catch {
                server.stop()
                throw error
            }
        }
    }

    @Test func servesThePageTheAPIAndRanges() async throws {
        let dir = try TempDir(prefix: "serve")
        try Data((0..<1000).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: dir.file("data.bin")))
        let (server, url) = try await Self.serve(
            ["serve", dir.path, "--port", "0", "--cache", dir.file(".cache")], log: dir.file("serve.log"))
        defer { server.stop() }
        #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/") && !url.contains("token"))

        let page = try await Self.curl("-i", url)
        #expect(page.stdout.contains("200 OK") && page.stdout.contains("data-testid=\"viewer\""))
        #expect(page.stdout.contains("Content-Security-Policy: default-src 'none'"))
        let script = try await Self.curl("-i", url + "app.js")
        #expect(script.stdout.contains("text/javascript"))

        let list = try await Self.curl(url + "api/list?path=/")
        #expect(list.stdout.contains("\"name\":\"data.bin\""), "\(list.stdout)")
        let range = try await Self.curl("-i", "-H", "Range: bytes=10-19", url + "api/file?path=/data.bin")
        #expect(range.stdout.contains("206 Partial Content"))
        #expect(range.stdout.contains("Content-Range: bytes 10-19/1000"))

        let mkdir = try await Self.curl(
            "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Content-Type: application/json",
            "--data", "{\"path\":\"/made\"}", url + "api/mkdir")
        #expect(mkdir.stdout == "403", "no Origin: \(mkdir.stdout)")
        let upload = try await Self.curl(
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "Origin: \(url.dropLast())", "-F",
            "file=@\(dir.file("data.bin"));filename=copy.bin", url + "api/upload?path=/")
        #expect(upload.stdout == "201")
        #expect(FileManager.default.contentsEqual(atPath: dir.file("copy.bin"), andPath: dir.file("data.bin")))
    }

    /// `kill -9` leaves `files-PID` behind (no cleanup runs); the next `ferry serve`
    /// on the same cache removes it at start.
    @Test func copiesOfAKilledServeGoWhenTheNextStarts() async throws {
        let dir = try TempDir(prefix: "serve-kill")
        let cardFolder = dir.file("card")
        try FileManager.default.createDirectory(atPath: cardFolder, withIntermediateDirectories: true)
        try Data(count: 2_000_000).write(to: URL(fileURLWithPath: cardFolder + "/BIG.JPG"))
        let card = try FerryCardProcess(folder: cardFolder)
        defer { card.stop() }
        let cache = dir.file(".cache")
        let (first, url) = try await Self.serve(
            ["serve", card.url("/"), "--port", "0", "--cache", cache, "--cache-size", "100M"],
            log: dir.file("serve-1.log"))
        defer { first.stop() }
        let fetched = try await Self.curl("-o", "/dev/null", "-w", "%{http_code}", url + "api/file?path=/BIG.JPG")
        #expect(fetched.stdout == "200")
        let left = cache + "/files-\(first.process.processIdentifier)"
        #expect(CacheBoundTests.bytes(left) >= 2_000_000, "the copy is in \(left)")
        first.signal(SIGKILL)
        first.stop()
        #expect(FileManager.default.fileExists(atPath: left), "kill -9 leaves the copies")

        let (second, _) = try await Self.serve(
            ["serve", card.url("/"), "--port", "0", "--cache", cache], log: dir.file("serve-2.log"))
        defer { second.stop() }
        #expect(!FileManager.default.fileExists(atPath: left), "the next start removed the killed one's copies")
        let own = cache + "/files-\(second.process.processIdentifier)"
        #expect(FileManager.default.fileExists(atPath: own + "/.lock"))
        let names = try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasPrefix("files-") }
        #expect(names == ["files-\(second.process.processIdentifier)"], "\(names)")

        let bad = try await onThread {
            try TestProcess.run(TestProcess.ferryExecutable(), ["serve", dir.path, "--cache-size", "lots"])
        }
        #expect(bad.status == 2 && bad.stderr.contains("--cache-size"), "\(bad.status) \(bad.stderr)")
    }

    @Test func tokenTravelsInTheURLThenInACookie() async throws {
        // Bound to loopback, but with a token as on any other address.
        let dir = try TempDir(prefix: "serve-token")
        try Data("hi".utf8).write(to: URL(fileURLWithPath: dir.file("a.txt")))
        let (server, url) = try await Self.serve(
            ["serve", dir.path, "--port", "0", "--cache", dir.file(".cache"), "--token", "t0ken"],
            log: dir.file("serve.log"))
        defer { server.stop() }
        #expect(url.hasSuffix("/?token=t0ken"))
        let base = String(url.prefix { $0 != "?" })
        let denied = try await Self.curl("-o", "/dev/null", "-w", "%{http_code}", base + "api/list?path=/")
        #expect(denied.stdout == "401")
        let jar = dir.file(".jar")
        let opened = try await Self.curl("-c", jar, "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", url)
        #expect(opened.stdout.hasPrefix("303 "), "\(opened.stdout)")
        let listed = try await Self.curl("-b", jar, base + "api/list?path=/")
        #expect(listed.stdout.contains("a.txt"), "\(listed.stdout)")
    }

    /// `ferry serve ezshare://...` over the ez Share emulator: the listing by
    /// long names, the bytes, the Exif thumbnail read by range, a read-only source.
    @Test func servesAnEzShareCard() async throws {
        let dir = try TempDir(prefix: "serve-ez")
        try FileManager.default.createDirectory(atPath: dir.file("card/DCIM/春节"), withIntermediateDirectories: true)
        // Upright: the page gets the card's Exif thumbnail as stored.
        let jpeg = Data(SampleJPEG.withThumbnail(orientation: 1))
        try jpeg.write(to: URL(fileURLWithPath: dir.file("card/DCIM/春节/family dinner.jpg")))
        let card = try FerryCardProcess(folder: dir.file("card"), arguments: ["--kind", "ezshare"])
        defer { card.stop() }
        let (server, url) = try await Self.serve(
            ["serve", card.ezShareURL(), "--port", "0", "--cache", dir.file(".cache")], log: dir.file("serve.log"))
        defer { server.stop() }
        let source = try await Self.curl(url + "api/source")
        #expect(source.stdout.contains("ezshare://127.0.0.1:\(card.port)"), "\(source.stdout)")
        #expect(source.stdout.contains("\"upload\":false"), "\(source.stdout)")
        let list = try await Self.curl(url + "api/list?path=/DCIM/%E6%98%A5%E8%8A%82")
        #expect(list.stdout.contains("\"name\":\"family dinner.jpg\""), "\(list.stdout)")
        let file = dir.file("got.jpg")
        let got = try await Self.curl("-o", file, url + "api/file?path=/DCIM/%E6%98%A5%E8%8A%82/family%20dinner.jpg")
        #expect(got.status == 0)
        #expect(FileManager.default.contents(atPath: file) == jpeg)
        let thumb = try await Self.curl(
            "-o", dir.file("thumb.jpg"), "-w", "%{http_code} %{content_type}",
            url + "api/thumb?path=/DCIM/%E6%98%A5%E8%8A%82/family%20dinner.jpg")
        #expect(thumb.stdout == "200 image/jpeg", "\(thumb.stdout) \(thumb.stderr)")
        #expect(FileManager.default.contents(atPath: dir.file("thumb.jpg")) == Data(SampleJPEG.thumbnail))
    }

    /// Issue 28 item 6: `ferry sync` of a one-connection card beside an idle `ferry serve`
    /// on it gets in. The card keeps an idle connection's slot, as a real card does
    /// (`--keep-idle-connections`): the page's connection has to be let go by `ferry serve`
    /// (the engine closes a card's idle connection after 1.5 s), or the sync is turned away.
    @Test func aSyncBesideAnIdleServeOnAOneConnectionCardGetsIn() async throws {
        let dir = try TempDir(prefix: "serve-neighbour")
        let cardFolder = dir.file("card")
        try FileManager.default.createDirectory(
            atPath: cardFolder + "/DCIM/100FERRY", withIntermediateDirectories: true)
        for i in 1...3 {
            try Data(repeating: UInt8(i), count: 50_000).write(
                to: URL(fileURLWithPath: cardFolder + "/DCIM/100FERRY/IMG_000\(i).JPG"))
        }
        let card = try FerryCardProcess(
            folder: cardFolder, arguments: ["--max-connections", "1", "--keep-idle-connections"])
        defer { card.stop() }
        let (server, url) = try await Self.serve(
            ["serve", card.url("/"), "--port", "0", "--cache", dir.file(".cache")], log: dir.file("serve.log"))
        defer { server.stop() }
        // The page lists a folder: `ferry serve` now has the card's connection.
        let list = try await Self.curl(url + "api/list?path=/DCIM/100FERRY")
        #expect(list.stdout.contains("IMG_0001.JPG"), "\(list.stdout)")
        // The page has nothing more to ask; a moment later another client syncs the card.
        try await Task.sleep(for: .seconds(2))
        let started = ContinuousClock.now
        let sync = try await onThread {
            try TestProcess.run(
                TestProcess.ferryExecutable(), ["sync", card.url("/DCIM"), dir.file("out"), "--quiet"])
        }
        let took = ContinuousClock.now - started
        #expect(sync.status == 0, "ferry sync failed: \(sync.stderr)")
        #expect(!sync.stderr.contains("not answering"), "\(sync.stderr)")
        // Got in at once: no wait for a busy card (its 2 s slot wait) on the way.
        #expect(took < .seconds(10), "took \(took)")
        let copied = (try? FileManager.default.subpathsOfDirectory(atPath: dir.file("out"))) ?? []
        #expect(copied.filter { $0.hasSuffix(".JPG") }.count == 3, "\(copied)")
        // And the page still works afterwards (it opens a new connection).
        let again = try await Self.curl(url + "api/list?path=/DCIM/100FERRY")
        #expect(again.stdout.contains("IMG_0003.JPG"), "\(again.stdout)")
    }
}
