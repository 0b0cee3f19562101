import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// Bytes in memory and thumbnails through `RemoteFileSystem` (issue 15, 1) against
/// real servers: nginx, pyftpdlib, vsftpd, `ferry card`, a local folder. What was
/// read is proven from the server's own log, not from Ferry's counters. Here and
/// not in FerryKitTests because the 12 MP photo is drawn with FerryWeb's encoder.
@Suite(.serialized) struct InMemoryReadTests {
    /// A camera-like 12 MP JPEG: 4000 × 3000, Exif with a 160-pixel thumbnail.
    static func photo() async throws -> [UInt8] {
        try await onThread { try SamplePhotos.jpeg(index: 3, width: 4000, height: 3000) }
    }

    /// The same photo with a 65,000-byte comment before its Exif block, so the
    /// thumbnail lies past the first read and the range has to grow.
    static func padded(_ photo: [UInt8]) -> [UInt8] {
        let payload = 65_000
        return [0xFF, 0xD8, 0xFF, 0xFE, UInt8((payload + 2) >> 8), UInt8((payload + 2) & 0xFF)]
            + [UInt8](repeating: 0x20, count: payload) + photo.dropFirst(2)
    }

    /// Body bytes nginx logged for requests of `uri`.
    static func nginxSent(_ nginx: NginxServer, _ uri: String) -> (requests: Int, bytes: Int) {
        let lines = nginx.accessLog.filter { $0.hasPrefix("GET \(uri) ") }
        let bytes = lines.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("sent=") }.flatMap { Int($0.dropFirst(5)) }
        }
        return (lines.count, bytes.reduce(0, +))
    }

    /// Bytes the FTP server logged as sent for downloads of `name`.
    static func ftpSent(_ server: FTPTestServer, _ name: String) -> (transfers: Int, bytes: Int) {
        var counts: [Int] = []
        for line in server.log.split(separator: "\n") where line.contains(name) {
            switch server.kind {
            case .pyftpdlib:
                // "... RETR /photo.jpg completed=0 bytes=65536 seconds=0.001"
                guard line.contains("RETR "), let r = line.range(of: " bytes=") else { continue }
                counts.append(Int(line[r.upperBound...].prefix { $0.isNumber }) ?? -1)
            case .vsftpd:
                // "... FAIL DOWNLOAD: Client "127.0.0.1", "/photo.jpg", 65536 bytes, 9.1Kbyte/sec"
                guard line.contains("DOWNLOAD:"), let r = line.range(of: " bytes,") else { continue }
                let before = line[..<r.lowerBound]
                counts.append(Int(before.split(separator: " ").last ?? "") ?? -1)
            default:
                continue
            }
        }
        return (counts.count, counts.reduce(0, +))
    }

    @Test func thumbnailOverHTTPReadsAtMost256KiB() async throws {
        let photo = try await Self.photo()
        #expect(photo.count > 1_000_000, "a 12 MP photo: \(photo.count) bytes")
        let expected = try #require(EXIFThumbnail.extract(fromJPEG: photo))
        let root = try TempDir(prefix: "mem-http")
        try Data(photo).write(to: URL(fileURLWithPath: root.file("photo.jpg")))
        try Data(Self.padded(photo)).write(to: URL(fileURLWithPath: root.file("padded.jpg")))
        try Data("no photo".utf8).write(to: URL(fileURLWithPath: root.file("notes.txt")))
        let nginx = try NginxServer(root: root.path)
        let fs: any RemoteFileSystem = try Ferry.fileSystem(for: RemoteURL(parsing: nginx.url("/")))

        let t = try #require(try await fs.thumbnail("/photo.jpg"))
        #expect(t.jpeg == expected.jpeg)
        #expect(t.width == 4000 && t.height == 3000)
        let plain = Self.nginxSent(nginx, "/photo.jpg")
        #expect(plain.requests == 1 && plain.bytes <= 256 * 1024, "nginx sent \(plain)")

        // The Exif block lies past the first 64 KiB: the range grows, once.
        let grown = try #require(try await fs.thumbnail("/padded.jpg"))
        #expect(grown.jpeg == expected.jpeg)
        let padded = Self.nginxSent(nginx, "/padded.jpg")
        #expect(padded.requests == 2 && padded.bytes <= 256 * 1024, "nginx sent \(padded)")
        print("thumbnail over HTTP: nginx sent \(plain.bytes) bytes (plain), \(padded.bytes) (grown) of \(photo.count)")
        #expect(try await fs.thumbnail("/notes.txt") == nil)
        await #expect(throws: FerryError.self) { try await fs.thumbnail("/missing.jpg") }
        do {
            _ = try await fs.thumbnail("/missing.jpg")
        } catch let e {
            #expect(e.code == .notFound && e.serverCode == 404, "\(e)")
        }
        // A server that ignores Range: the answer is cut off, the thumbnail still found.
        let cut = try #require(try await fs.thumbnail("/norange/photo.jpg"))
        #expect(cut.jpeg == expected.jpeg)
    }

    /// The browser UI's thumbnail of a photo on an HTTP source is its Exif
    /// thumbnail from the first bytes: nginx's log shows the 12 MP photo was not
    /// sent. A JPEG without one is still downloaded whole and scaled.
    @Test func webThumbnailOfAnHTTPPhotoReadsOnlyItsFirstBytes() async throws {
        let photo = try await Self.photo()
        let expected = try #require(EXIFThumbnail.extract(fromJPEG: photo))
        let root = try TempDir(prefix: "web-thumb")
        try Data(photo).write(to: URL(fileURLWithPath: root.file("photo.jpg")))
        // A JPEG with no Exif block at all: the thumbnail itself.
        try Data(expected.jpeg).write(to: URL(fileURLWithPath: root.file("plain.jpg")))
        let nginx = try NginxServer(root: root.path)
        let cache = try TempDir(prefix: "web-thumb-cache")
        var configuration = WebConfiguration(source: try RemoteURL(parsing: nginx.url("/")), host: "127.0.0.1", port: 0)
        configuration.cacheDirectory = cache.path
        configuration.importDirectory = cache.file("imported")
        let api = try WebAPI(configuration: configuration)

        let thumb = await api.handle(APITests.request("/api/thumb?path=/photo.jpg&v=1"))
        #expect(thumb.status == 200)
        #expect(thumb.body == .data(Data(expected.jpeg)), "the photo's own Exif thumbnail")
        let sent = Self.nginxSent(nginx, "/photo.jpg")
        #expect(sent.requests == 1 && sent.bytes <= 256 * 1024, "nginx sent \(sent) of \(photo.count) bytes")
        print("web thumbnail over HTTP: nginx sent \(sent.bytes) of \(photo.count) bytes")

        let fallback = await api.handle(APITests.request("/api/thumb?path=/plain.jpg&v=1"))
        #expect(fallback.status == 200)
        let plain = Self.nginxSent(nginx, "/plain.jpg")
        // The first bytes (the whole small file) asked for its Exif block, then the download.
        #expect(plain.requests == 2 && plain.bytes == 2 * expected.jpeg.count, "\(plain)")
        guard case .data(let scaled) = fallback.body else {
            Issue.record("no thumbnail bytes: \(fallback.body)")
            return
        }
        #expect(scaled.starts(with: [0xFF, 0xD8]))
    }

    /// The same over FTP (pyftpdlib): the answer is the Exif thumbnail, from one
    /// transfer cut off after the prefix, not a download of the photo to scale.
    @Test func webThumbnailOfAnFTPPhotoIsItsExifThumbnail() async throws {
        let photo = try await Self.photo()
        let expected = try #require(EXIFThumbnail.extract(fromJPEG: photo))
        let server = try await FTPTestServer(.pyftpdlib)
        defer { server.stop() }
        _ = try server.write(Data(photo), at: "/photo.jpg")
        let cache = try TempDir(prefix: "web-thumb-ftp-cache")
        var configuration = WebConfiguration(
            source: try RemoteURL(parsing: server.url("/")), host: "127.0.0.1", port: 0)
        configuration.cacheDirectory = cache.path
        configuration.importDirectory = cache.file("imported")
        let api = try WebAPI(configuration: configuration)
        let thumb = await api.handle(APITests.request("/api/thumb?path=/photo.jpg&v=1"))
        #expect(thumb.status == 200)
        #expect(thumb.body == .data(Data(expected.jpeg)), "the photo's own Exif thumbnail")
        try await Task.sleep(for: .milliseconds(300))
        let sent = Self.ftpSent(server, "photo.jpg")
        #expect(sent.transfers == 1, "one cut-off read, no download: \(sent)")
        let copies = ((try? FileManager.default.contentsOfDirectory(atPath: cache.path + "/files-\(getpid())")) ?? [])
            .filter { $0 != ".lock" }  // the live process's lock (RemoteFileCache)
        #expect(copies.isEmpty, "no copy of the photo: \(copies)")
    }

    @Test(arguments: [FTPServerKind.pyftpdlib, .vsftpd])
    func thumbnailOverFTPReadsOnlyThePrefix(_ kind: FTPServerKind) async throws {
        let photo = try await Self.photo()
        let expected = try #require(EXIFThumbnail.extract(fromJPEG: photo))
        let server = try await FTPTestServer(kind)
        defer { server.stop() }
        _ = try server.write(Data(photo), at: "/photo.jpg")
        _ = try server.write(Data(Self.padded(photo)), at: "/padded.jpg")
        let fs: any RemoteFileSystem = try Ferry.fileSystem(for: RemoteURL(parsing: server.url("/")))

        let clock = ContinuousClock()
        let began = clock.now
        let t = try #require(try await fs.thumbnail("/photo.jpg"))
        #expect(t.jpeg == expected.jpeg && t.width == 4000)
        let between = clock.now
        let grown = try #require(try await fs.thumbnail("/padded.jpg"))
        print("thumbnail over \(kind): \(between - began) plain, \(clock.now - between) grown")
        #expect(grown.jpeg == expected.jpeg)
        // What the server sent, from its log. FTP cannot ask for a range's end: the
        // server sends until ABOR, and what it wrote into its socket buffers by then
        // counts as sent (over loopback up to the whole photo), so the server's byte
        // count proves nothing here; the number of transfers proves the range grew
        // once for the padded photo and not at all for the plain one.
        try await Task.sleep(for: .milliseconds(300))
        let plain = Self.ftpSent(server, "photo.jpg")
        let padded = Self.ftpSent(server, "padded.jpg")
        #expect(plain.transfers == 1 && padded.transfers == 2, "\(kind): \(plain) \(padded)")
        print(
            "thumbnail over \(kind): server sent \(plain.bytes) bytes (plain), \(padded.bytes) (grown) of \(photo.count)"
        )
        let names = try await fs.list("/").map(\.name)
        #expect(names.contains("photo.jpg") && names.contains("padded.jpg"), "\(names)")
    }

    @Test func dataOverTheLimitFailsWithoutReadingTheRest() async throws {
        let root = try TempDir(prefix: "mem-limit")
        let size = 64 << 20
        // Sparse: 64 MB on the wire, nothing on disk.
        _ = FileManager.default.createFile(atPath: root.file("big.bin"), contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: root.file("big.bin")))
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        let small = Data((0..<5000).map { UInt8($0 % 251) })
        try small.write(to: URL(fileURLWithPath: root.file("small.bin")))
        let nginx = try NginxServer(root: root.path)
        let http: any RemoteFileSystem = try Ferry.fileSystem(for: RemoteURL(parsing: nginx.url("/")))

        #expect(try await http.data(at: "/small.bin", limit: 5000) == small)
        #expect(try await http.data(at: "/small.bin", range: 1000..<1010) == small[1000..<1010])
        #expect(try await http.data(at: "/small.bin", range: 4990..<6000) == small[4990...])
        #expect(try await http.data(at: "/small.bin", range: 9000..<9100).isEmpty)
        for path in ["/small.bin", "/big.bin", "/norange/big.bin"] {
            let limit = path == "/small.bin" ? 4999 : 1 << 20
            let error = await Self.error { _ = try await http.data(at: path, limit: limit) }
            #expect(error?.code == .tooLarge, "\(path): \(String(describing: error))")
            #expect(error?.description.contains("\(limit)") == true, "\(String(describing: error))")
        }
        // With Range, nginx sends at most limit + 1; without, it is cut off at once.
        #expect(Self.nginxSent(nginx, "/big.bin").bytes <= (1 << 20) + 1, "\(nginx.accessLog)")
        // nginx logs a request once it stopped sending: wait for the line.
        var ignored = Self.nginxSent(nginx, "/norange/big.bin")
        for _ in 0..<50 where ignored.requests == 0 {
            try await Task.sleep(for: .milliseconds(100))
            ignored = Self.nginxSent(nginx, "/norange/big.bin")
        }
        #expect(ignored.requests == 1 && ignored.bytes < size / 4, "nginx sent \(ignored) of \(size)")

        // FTP: REST/RETR, and the data connection closed after limit + 1 bytes.
        for kind in [FTPServerKind.pyftpdlib, .vsftpd] {
            let ftp = try await FTPTestServer(kind)
            defer { ftp.stop() }
            _ = try ftp.write(small, at: "/small.bin")
            _ = try ftp.write(Data(), at: "/big.bin")
            let big = try #require(FileHandle(forWritingAtPath: ftp.local("/big.bin")))
            try big.truncate(atOffset: UInt64(size))
            try big.close()
            let fs: any RemoteFileSystem = try Ferry.fileSystem(for: RemoteURL(parsing: ftp.url("/")))
            #expect(try await fs.data(at: "/small.bin", limit: 5000) == small)
            #expect(try await fs.data(at: "/small.bin", range: 1000..<1010) == small[1000..<1010])
            #expect(try await fs.data(at: "/small.bin", range: 4990..<6000) == small[4990...])
            let error = await Self.error { _ = try await fs.data(at: "/big.bin", limit: 1 << 20) }
            #expect(error?.code == .tooLarge, "\(kind): \(String(describing: error))")
            try await Task.sleep(for: .milliseconds(300))
            let sent = Self.ftpSent(ftp, "big.bin")
            #expect(sent.transfers == 1 && sent.bytes < size / 4, "\(kind) sent \(sent) of \(size)")
            // The next operation on the same server works.
            #expect(try await fs.data(at: "/small.bin", range: 0..<10) == small[0..<10])
        }
    }

    @Test func readsAreCancellable() async throws {
        let root = try TempDir(prefix: "mem-cancel")
        _ = FileManager.default.createFile(atPath: root.file("big.bin"), contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: root.file("big.bin")))
        try handle.truncate(atOffset: 64 << 20)
        try handle.close()
        // /slow/ sends 200 KB/s: the read would take minutes.
        let nginx = try NginxServer(root: root.path, slowRate: 200_000)
        let fs: any RemoteFileSystem = try Ferry.fileSystem(for: RemoteURL(parsing: nginx.url("/")))
        let task = Task { try await fs.data(at: "/slow/big.bin", limit: 64 << 20) }
        try await Task.sleep(for: .milliseconds(500))
        let began = ContinuousClock.now
        task.cancel()
        let error = await Self.error { _ = try await task.value }
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        #expect(ContinuousClock.now - began < .seconds(2))
    }

    @Test func cardAndLocalFolderThroughTheProtocol() async throws {
        let photo = try await Self.photo()
        let expected = try #require(EXIFThumbnail.extract(fromJPEG: photo))
        let root = try TempDir(prefix: "mem-card")
        try FileManager.default.createDirectory(atPath: root.file("DCIM/100__TSB"), withIntermediateDirectories: true)
        try Data(photo).write(to: URL(fileURLWithPath: root.file("DCIM/100__TSB/IMG_0001.JPG")))
        try Data("notes".utf8).write(to: URL(fileURLWithPath: root.file("DCIM/100__TSB/NOTES.TXT")))
        let card = try FerryCardProcess(folder: root.path)
        defer { card.stop() }
        let sources: [any RemoteFileSystem] = [
            try Ferry.fileSystem(for: RemoteURL(parsing: "flashair://127.0.0.1:\(card.port)/")),
            try Ferry.fileSystem(for: RemoteURL(parsing: "file://" + root.path)),
        ]
        for fs in sources {
            let base = fs.url.scheme == .file ? root.path : ""
            let name = "\(fs.url.scheme)"
            let t = try #require(try await fs.thumbnail(base + "/DCIM/100__TSB/IMG_0001.JPG"), "\(name)")
            #expect(t.jpeg == expected.jpeg, "\(name)")
            #expect(t.width == 4000 && t.height == 3000, "\(name)")
            #expect(try await fs.thumbnail(base + "/DCIM/100__TSB/NOTES.TXT") == nil, "\(name)")
            let missing = await Self.error { _ = try await fs.thumbnail(base + "/DCIM/100__TSB/NONE.JPG") }
            #expect(missing?.code == .notFound, "\(name): \(String(describing: missing))")
            #expect(try await fs.data(at: base + "/DCIM/100__TSB/NOTES.TXT") == Data("notes".utf8), "\(name)")
            let head = try await fs.data(at: base + "/DCIM/100__TSB/IMG_0001.JPG", range: 100..<200)
            #expect(head == Data(photo[100..<200]), "\(name)")
            let over = await Self.error { _ = try await fs.data(at: base + "/DCIM/100__TSB/IMG_0001.JPG", limit: 1000) }
            #expect(over?.code == .tooLarge, "\(name): \(String(describing: over))")
        }
        let cardFS = sources[0]
        #expect(cardFS.capabilities.contains(.sourceThumbnails))
        #expect(!sources[1].capabilities.contains(.sourceThumbnails))
        #expect(cardFS.capabilities.contains(.rangeReads) && sources[1].capabilities.contains(.rangeReads))
    }

    /// The error a call threw, as a `FerryError`.
    static func error(_ body: () async throws -> Void) async -> FerryError? {
        do {
            try await body()
            return nil
        } catch {
            return FerryError.wrap(error)  // the closure is untyped: Swift 6.3 infers no typed throws for it
        }
    }
}
