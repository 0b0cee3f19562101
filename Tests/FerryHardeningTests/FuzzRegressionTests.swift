import CJPEG
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCard
@testable import FerryKit
@testable import FerryServer
@testable import FerryWeb

/// Bugs found while fuzzing and hardening, one test each, so they stay fixed.
/// The inputs are also kept in `Fuzz/corpus/<target>/crash-*`.
struct FuzzRegressionTests {
    // MARK: ferry card: shared memory arithmetic

    /// `command.cgi?op=130&ADDR=9223372036854775807&LEN=1` computed `ADDR + LEN`,
    /// overflowed and trapped: one request killed `ferry card`.
    @Test(arguments: [
        "/command.cgi?op=130&ADDR=9223372036854775807&LEN=1",
        "/command.cgi?op=130&ADDR=1&LEN=9223372036854775807",
        "/command.cgi?op=130&ADDR=-1&LEN=2",
        "/command.cgi?op=130&ADDR=512&LEN=1",
        "/command.cgi?op=131&ADDR=9223372036854775800&LEN=9&DATA=x",
        "/command.cgi?op=131&ADDR=0&LEN=9223372036854775807&DATA=x",
    ])
    func sharedMemoryRangesThatOverflowAreRefused(target: String) throws {
        let dir = try TempDir(prefix: "shm")
        let handler = CardHandler(root: try CardRoot(dir.path), configuration: FlashAirCardConfiguration())
        #expect(handler.handle(HTTPRequest(method: "GET", target: target)).status == 400)
    }

    @Test func sharedMemoryEdgesStillWork() throws {
        let dir = try TempDir(prefix: "shm")
        let handler = CardHandler(root: try CardRoot(dir.path), configuration: FlashAirCardConfiguration())
        let write = handler.handle(HTTPRequest(method: "GET", target: "/command.cgi?op=131&ADDR=508&LEN=4&DATA=abcdef"))
        #expect(write.status == 200)
        let read = handler.handle(HTTPRequest(method: "GET", target: "/command.cgi?op=130&ADDR=508&LEN=4"))
        #expect(read.body == .data(Data("abcd".utf8)))
        let empty = handler.handle(HTTPRequest(method: "GET", target: "/command.cgi?op=130&ADDR=512&LEN=0"))
        #expect(empty.status == 200)
    }

    /// The same request against the real `ferry card` process: answered, and the card lives on.
    @Test func cardSurvivesOverflowingSharedMemoryRequests() async throws {
        try await onThread { try Self.cardSurvivesOverflowingSharedMemoryRequestsBody() }
    }

    static func cardSurvivesOverflowingSharedMemoryRequestsBody() throws {
        let dir = try TempDir(prefix: "shm-card")
        let card = try FerryCardProcess(folder: dir.path)
        let r = try RawHTTP.request(port: card.port, target: "/command.cgi?op=130&ADDR=9223372036854775807&LEN=1")
        #expect(r.status == 400)
        #expect(try RawHTTP.request(port: card.port, target: "/command.cgi?op=108").status == 200)
    }

    // MARK: FerryServer: multipart header limit and chunk boundaries

    /// A part header block of exactly `maxPartHeaderSize` bytes was accepted when
    /// the whole body came at once but refused as too large when a read ended
    /// inside its closing CRLFCRLF: the bound left no room for 3 of its 4 bytes.
    @Test func partHeadersAtTheLimitDoNotDependOnChunking() throws {
        let dir = try TempDir(prefix: "multipart")
        let header = "Content-Disposition: form-data; name=\"field\""
        let limits = MultipartParser.Limits(maxPartHeaderSize: header.utf8.count)
        let body = Array("--B\r\n\(header)\r\n\r\nvalue\r\n--B--\r\n".utf8)
        for piece in 1...body.count {
            let parser = try MultipartParser(boundary: "B", directory: dir.path, limits: limits)
            var offset = 0
            while offset < body.count {
                let end = min(offset + piece, body.count)
                try parser.feed(Data(body[offset..<end]))
                offset = end
            }
            let parts = try parser.finish()
            #expect(parts.map(\.text) == ["value"], "pieces of \(piece)")
        }
        // One byte more is still refused, whole or in pieces.
        let tight = MultipartParser.Limits(maxPartHeaderSize: header.utf8.count - 1)
        for piece in [1, 2, 3, body.count] {
            let parser = try MultipartParser(boundary: "B", directory: dir.path, limits: tight)
            var refused: MultipartError?
            var offset = 0
            while offset < body.count, refused == nil {
                let end = min(offset + piece, body.count)
                do throws(MultipartError) { try parser.feed(Data(body[offset..<end])) } catch { refused = error }
                offset = end
            }
            #expect(refused?.code == .headersTooLarge, "pieces of \(piece)")
        }
    }

    /// The input the fuzzer found, replayed in every piece size.
    @Test func fuzzerMultipartInputIsChunkingIndependent() throws {
        let path = TestProcess.packageRoot() + "/Fuzz/corpus/ServerMultipart/crash-header-limit-chunking"
        let input = try #require(FileManager.default.contents(atPath: path))
        let body = Array(input.dropFirst())
        let dir = try TempDir(prefix: "multipart")
        let limits = MultipartParser.Limits(maxPartHeaderSize: 64, maxFieldSize: 128, maxParts: 6)
        func outcome(_ piece: Int) throws -> String {
            let parser = try MultipartParser(boundary: "b0undary", directory: dir.path, limits: limits)
            do throws(MultipartError) {
                var offset = 0
                while offset < body.count {
                    let end = min(offset + piece, body.count)
                    try parser.feed(Data(body[offset..<end]))
                    offset = end
                }
                return try parser.finish().map { $0.name ?? "-" }.joined(separator: ",")
            } catch {
                return "\(error.code)"
            }
        }
        let whole = try outcome(body.count)
        for piece in 1...40 { #expect(try outcome(piece) == whole, "pieces of \(piece)") }
    }

    // MARK: URLs: passwords with unescaped separators

    /// A password typed with an unescaped `/`, `?`, `#` or `@` makes a malformed
    /// URL; the error message showed the URL unredacted (`redact` stopped at the
    /// first `/`) and echoed part of the password as a "bad port". (A password
    /// whose text before an unescaped `/` is a valid port number, `user:12345/678@host`,
    /// is a well-formed URL for host `user` by RFC 3986; it cannot be told apart.)
    @Test(arguments: [
        ("ftp://user:pa/ss@host/pub", "pa/ss"),
        ("ftp://user:pa/ss/x@host/pub", "pa/ss/x"),
        ("http://user:p?ss@host/", "p?ss"),
        ("http://user:p#ss@host/", "p#ss"),
        ("ftps://user:p@ss/w0rd@host:990/", "p@ss/w0rd"),
    ])
    func malformedURLsNeverShowThePassword(url: String, password: String) {
        #expect(!RemoteURL.redact(url).contains(password), "\(RemoteURL.redact(url))")
        do {
            let parsed = try RemoteURL(parsing: url)
            #expect(!parsed.redacted.contains(password))
            #expect(!"\(parsed)".contains(password))
        } catch {
            #expect(!"\(error)".contains(password), "\(error)")
            // Not even the first piece of it.
            let head = String(password.prefix { $0 != "/" && $0 != "?" && $0 != "#" && $0 != "@" })
            #expect(!"\(error)".contains(":" + head) && !"\(error)".contains("\"" + head), "\(error)")
        }
    }

    /// `ftp://name::1` was taken as host `name:` and port 1, a host that cannot be
    /// written back out (RemoteURL fuzzer: the redacted form did not parse).
    /// Colons belong in a host only inside brackets, and brackets hold only an
    /// IPv6 literal.
    @Test func ipv6HostsNeedBracketsAndBracketsNeedIPv6() throws {
        for bad in [
            "ftp://ab::1/", "ftp://\u{659}tpsftppes-x.::1", "http://fe80::1/", "ftp://[host]/", "ftp://[a b:]/",
        ] {
            #expect(throws: FerryError.self, "\(bad)") { try RemoteURL(parsing: bad) }
        }
        for good in [
            "ftp://[::1]:2121/pub", "http://[fe80::1%25eth0]/", "ftp://[::ffff:127.0.0.1]/", "ftp://127.0.0.1:21/",
        ] {
            let url = try RemoteURL(parsing: good)
            let again = try RemoteURL(parsing: url.redacted)
            #expect(again.host == url.host && again.port == url.port, "\(good)")
        }
    }

    @Test func redactionStillShowsEverythingElse() {
        #expect(RemoteURL.redact("ftp://user:secret@host/pub/a@b") == "ftp://user:***@host/pub/a@b")
        #expect(RemoteURL.redact("ftp://user@host/pub") == "ftp://user@host/pub")
        #expect(RemoteURL.redact("http://host/a@b") == "http://host/a@b")
        #expect(RemoteURL.redact("/local/a:b@c") == "/local/a:b@c")
        let message = "\((try? RemoteURL(parsing: "http://127.0.0.1:99999/a.bin")) == nil)"
        #expect(message == "true")
        do {
            _ = try RemoteURL(parsing: "http://127.0.0.1:99999/a.bin")
        } catch {
            #expect("\(error)".contains("bad port \"99999\""))
        }
    }

    // MARK: ferry serve: decompression bombs

    static let bombs = TestProcess.packageRoot() + "/Fuzz/corpus/JPEGDecode/crash-"

    /// A 655-byte baseline JPEG claiming 65500 x 65500 pixels: a thumbnail decode
    /// (1/8 scale) allocated and filled 8188 x 8188 x 3 bytes (200 MB), then copied them.
    @Test func oversizedBaselineJPEGIsRefusedBeforeDecoding() throws {
        let data = try #require(FileManager.default.contents(atPath: Self.bombs + "baseline-65500x65500"))
        #expect(throws: JPEGError.self) { _ = try JPEGCodec.decode(data: data, minSide: 256) }
        do {
            _ = try JPEGCodec.decode(data: data, minSide: 256)
        } catch {
            #expect(error.code == .outOfMemory, "\(error)")
        }
    }

    /// A 530-byte progressive JPEG claiming 65500 x 65500 pixels: libjpeg set out to
    /// zero about 13 GB of coefficient buffers. The shim's memory budget
    /// (FERRY_JPEG_MAX_MEMORY, which must exist for this test to compile, so a
    /// removed budget cannot turn this test into a 13 GB allocation) stops it.
    @Test func oversizedProgressiveJPEGStopsAtTheMemoryBudget() throws {
        #expect(FERRY_JPEG_MAX_MEMORY <= 1 << 30)
        let data = try #require(FileManager.default.contents(atPath: Self.bombs + "progressive-65500x65500"))
        let start = ContinuousClock.now
        #expect(throws: JPEGError.self) { _ = try JPEGCodec.decode(data: data, minSide: 256) }
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    /// Real photos still decode: 8000 x 8000 progressive is 64 MP.
    @Test func largeRealPhotosStillDecode() throws {
        let pixels = [UInt8](repeating: 0x70, count: 2000 * 1500 * 3)
        let jpeg = try JPEGCodec.encode(RGBImage(width: 2000, height: 1500, pixels: pixels))
        let decoded = try JPEGCodec.decode(data: jpeg, minSide: 256)
        #expect(decoded.sourceWidth == 2000 && decoded.image.width == 500)
    }

    // MARK: ferry serve: where the token link lands

    /// `GET //evil.example/?token=T` answered `Location: //evil.example/`: after
    /// storing the token, the browser went to another site.
    @Test(arguments: ["//evil.example/", "/\\evil.example/", "http://evil.example/", "evil.example"])
    func tokenRedirectStaysOnThisSite(path: String) {
        let token = "0123456789abcdef0123456789abcdef"
        let guardian = AccessGuard(token: token)
        let request = HTTPRequest(method: "GET", target: path + "?token=" + token + "&path=/DCIM")
        let redirect = guardian.tokenRedirect(request)
        #expect(redirect?.status == 303)
        let location = redirect?.headers["Location"] ?? ""
        #expect(location == "/?path=/DCIM", "\(location)")
        let fine = guardian.tokenRedirect(HTTPRequest(method: "GET", target: "/app?token=" + token))
        #expect(fine?.headers["Location"] == "/app")
    }

    // MARK: Path confinement compares bytes

    /// A root named `café` (NFC) and a sibling `café` spelled `cafe` + U+0301 (NFD)
    /// are two folders on Linux, but Swift's `hasPrefix` and `==` treat them as
    /// equal text: a link to the sibling passed the "inside the root" check, and
    /// `ferry card` and `ferry serve` served and listed what it held.
    struct EquivalentSibling {
        let dir: TempDir
        let root: String
        let sibling: String

        init() throws {
            dir = try TempDir(prefix: "nfc")
            root = dir.file("caf\u{E9}")
            sibling = dir.file("cafe\u{301}")
            precondition(root != sibling || !root.utf8.elementsEqual(sibling.utf8))
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: sibling, withIntermediateDirectories: true)
            try "SIBLING SECRET".write(toFile: sibling + "/secret.txt", atomically: true, encoding: .utf8)
            // The sibling's name, written as bytes, so Foundation cannot renormalize it.
            let target = Array("../cafe\u{301}".utf8)
            _ = target.withUnsafeBufferPointer { bytes in
                (Array(bytes) + [0]).withUnsafeBufferPointer { p in
                    symlink(UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self), root + "/link")
                }
            }
        }
    }

    @Test func cardConfinementComparesBytes() throws {
        let fixture = try EquivalentSibling()
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.dir.path)
        #expect(names.count == 2, "the file system keeps both spellings: \(names)")
        let card = try CardRoot(fixture.root)
        #expect(throws: CardRefusal.forbidden) { _ = try card.existing("/link/secret.txt") }
        #expect(throws: CardRefusal.forbidden) { _ = try card.existing("/link") }
        let handler = CardHandler(root: card, configuration: FlashAirCardConfiguration())
        #expect(handler.handle(HTTPRequest(method: "GET", target: "/link/secret.txt")).status == 403)
        let listing = handler.handle(HTTPRequest(method: "GET", target: "/command.cgi?op=100&DIR=/"))
        #expect(listing.body == .text("WLANSD_FILELIST\r\n"), "the link out is not listed")
    }

    @Test func cardProcessRefusesTheEquivalentSibling() async throws {
        try await onThread { try Self.cardProcessRefusesTheEquivalentSiblingBody() }
    }

    static func cardProcessRefusesTheEquivalentSiblingBody() throws {
        let fixture = try EquivalentSibling()
        let card = try FerryCardProcess(folder: fixture.root)
        let r = try RawHTTP.request(port: card.port, target: "/link/secret.txt")
        #expect(r.status == 403 && !r.text.contains("SIBLING SECRET"), "\(r.status) \(r.text)")
    }

    @Test func serveConfinementComparesBytes() throws {
        let fixture = try EquivalentSibling()
        let source = WebSource(fs: try Ferry.fileSystem(for: try RemoteURL(parsing: "file://" + fixture.root)))
        #expect(throws: (any Error).self) { _ = try source.backendPath("/link/secret.txt") }
        #expect(throws: (any Error).self) { _ = try source.backendPath("/link") }
        #expect(try source.backendPath("/new.txt") == fixture.root + "/new.txt")
    }
}
