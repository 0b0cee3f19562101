import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

#if canImport(Glibc)
    import Glibc
#endif

/// The JSON API in process, on a local folder: paths, the access token, the
/// same-origin check, and list / upload / delete / mkdir / rename.
struct APITests {
    let folder: TempDir
    let cache: TempDir
    var root: String { folder.path + "/root" }

    init() async throws {
        let folder = try TempDir(prefix: "ferry-api")
        self.folder = folder
        cache = try TempDir(prefix: "ferry-api-cache")
        let root = folder.path + "/root"
        try FileManager.default.createDirectory(atPath: root + "/DCIM/100FERRY", withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: URL(fileURLWithPath: root + "/DCIM/100FERRY/a.txt"))
        try await onThread {
            try Data(SamplePhotos.jpeg(index: 3, width: 320, height: 240)).write(
                to: URL(fileURLWithPath: root + "/DCIM/100FERRY/IMG_0003.JPG"))
        }
        try Data("secret".utf8).write(to: URL(fileURLWithPath: folder.path + "/outside.txt"))
    }

    func api(host: String = "127.0.0.1", token: String? = nil, source: String? = nil) throws -> WebAPI {
        var configuration = WebConfiguration(source: try RemoteURL(parsing: source ?? root), host: host, port: 0)
        configuration.accessToken = token
        configuration.cacheDirectory = cache.path
        configuration.importDirectory = folder.path + "/imported"
        return try WebAPI(configuration: configuration)
    }

    static func post(
        _ target: String, host: String = "127.0.0.1:8000", origin: String? = "same",
        headers extra: [(String, String)] = [], body: HTTPRequest.Body = .none
    ) -> HTTPRequest {
        request(target, method: "POST", host: host, origin: origin, headers: extra, body: body)
    }

    static func request(
        _ target: String, method: String = "GET", host: String = "127.0.0.1:8000", origin: String? = "same",
        headers extra: [(String, String)] = [], body: HTTPRequest.Body = .none
    ) -> HTTPRequest {
        var headers = HTTPHeaders([("Host", host)] + extra)
        if method != "GET", let origin {
            headers.add(name: "Origin", value: origin == "same" ? "http://\(host)" : origin)
        }
        return HTTPRequest(method: method, target: target, headers: headers, remoteAddress: "127.0.0.1", body: body)
    }

    static func json(_ body: [String: String]) -> HTTPRequest.Body {
        .data(try! JSONSerialization.data(withJSONObject: body))
    }

    static func object(_ response: HTTPResponse) -> [String: Any] {
        guard case .data(let data) = response.body,
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }

    // MARK: Paths

    @Test func pathsAreCleanedAndConfined() {
        #expect(WebPath.clean("/") == "/")
        #expect(WebPath.clean("/DCIM//100FERRY/") == "/DCIM/100FERRY")
        #expect(WebPath.clean("/My Photos/a#1.jpg") == "/My Photos/a#1.jpg")
        #expect(WebPath.clean("/100%.jpg") == "/100%.jpg")
        for bad in [
            "DCIM", "", "/..", "/DCIM/../..", "/DCIM/./x", "/%2e%2e", "/%2E%2e/etc", "/%252e%252e", "/a\0b",
            "/a\\..\\b", "/a\u{1}", "/%2f..", "/x/%2e",
        ] {
            #expect(WebPath.clean(bad) == nil, "\(bad.debugDescription) accepted")
        }
        #expect(WebPath.parent("/a/b") == "/a")
        #expect(WebPath.parent("/a") == "/")
        #expect(RemotePath.join("/", "a") == "/a")
    }

    @Test func escapingPathsAreRefused() async throws {
        let api = try api()
        symlink(folder.path, root + "/escape")
        for target in [
            "/api/list?path=/..", "/api/list?path=%2F..%2F..", "/api/list?path=/%252e%252e",
            "/api/file?path=/DCIM/../../outside.txt", "/api/file?path=/%2e%2e/outside.txt", "/api/list?path=DCIM",
            "/api/file?path=/a%00b", "/api/stat?path=/DCIM/%2E%2E/%2E%2E",
        ] {
            let response = await api.handle(Self.request(target))
            #expect(response.status == 400, "\(target): \(response.status)")
        }
        let viaLink = await api.handle(Self.request("/api/file?path=/escape/outside.txt"))
        #expect(viaLink.status == 403, "symlink out of the root: \(viaLink.status)")
        let listLink = await api.handle(Self.request("/api/list?path=/escape"))
        #expect(listLink.status == 403)
        let mkdirThroughLink = await api.handle(
            Self.post("/api/mkdir", body: Self.json(["path": "/escape/new"])))
        #expect(mkdirThroughLink.status == 403)
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/new"))
    }

    // MARK: Access

    @Test func tokenIsRequiredOffLoopback() async throws {
        let api = try api(host: "0.0.0.0", token: "s3cret")
        let bare = await api.handle(Self.request("/api/list?path=/", host: "192.0.2.7:8000"))
        #expect(bare.status == 401)
        let wrong = await api.handle(
            Self.request("/api/list?path=/", host: "192.0.2.7:8000", headers: [("Cookie", "ferry_token=nope")]))
        #expect(wrong.status == 401)
        let cookie = await api.handle(
            Self.request(
                "/api/list?path=/", host: "192.0.2.7:8000", headers: [("Cookie", "a=b; ferry_token=s3cret")]))
        #expect(cookie.status == 200)
        let header = await api.handle(
            Self.request("/api/list?path=/", host: "192.0.2.7:8000", headers: [("X-Ferry-Token", "s3cret")]))
        #expect(header.status == 200)
        // The printed URL sets the cookie and drops the token from the address.
        let open = await api.handle(Self.request("/?token=s3cret&path=%2FDCIM", host: "192.0.2.7:8000"))
        #expect(open.status == 303)
        #expect(open.headers["Location"] == "/?path=/DCIM")
        let cookieHeader = open.headers["Set-Cookie"] ?? ""
        #expect(cookieHeader.hasPrefix("ferry_token=s3cret;") && cookieHeader.contains("HttpOnly"))
        #expect(cookieHeader.contains("SameSite=Strict"))
        #expect(await api.handle(Self.request("/?token=guess", host: "192.0.2.7:8000")).status == 401)
        // The page itself loads without it (and then explains what is missing).
        #expect(await api.handle(Self.request("/", host: "192.0.2.7:8000")).status == 200)
        // Changes need the token too.
        let mkdir = await api.handle(
            Self.post("/api/mkdir", host: "192.0.2.7:8000", body: Self.json(["path": "/x"])))
        #expect(mkdir.status == 401)
        #expect(!FileManager.default.fileExists(atPath: root + "/x"))
    }

    @Test func loopbackAnswersOnlyToLoopbackNames() async throws {
        let api = try api()
        for host in ["127.0.0.1:8000", "localhost:8000", "[::1]:8000", "127.0.0.1"] {
            #expect(await api.handle(Self.request("/api/list?path=/", host: host)).status == 200, "\(host)")
        }
        // A rebinding attack reaches 127.0.0.1 under another name.
        for host in ["evil.example:8000", "127.0.0.1.evil.example", "192.168.1.2:8000", ""] {
            #expect(await api.handle(Self.request("/api/list?path=/", host: host)).status == 403, "\(host)")
            #expect(await api.handle(Self.request("/", host: host)).status == 403, "\(host)")
        }
    }

    @Test func changesNeedTheSameOrigin() async throws {
        let api = try api()
        let body = Self.json(["path": "/made"])
        let none = await api.handle(Self.post("/api/mkdir", origin: nil, body: body))
        #expect(none.status == 403)
        let foreign = await api.handle(Self.post("/api/mkdir", origin: "http://evil.example", body: body))
        #expect(foreign.status == 403)
        let otherPort = await api.handle(Self.post("/api/mkdir", origin: "http://127.0.0.1:9999", body: body))
        #expect(otherPort.status == 403)
        #expect(!FileManager.default.fileExists(atPath: root + "/made"))
        let referer = await api.handle(
            Self.post(
                "/api/mkdir", origin: nil, headers: [("Referer", "http://127.0.0.1:8000/?path=/")], body: body))
        #expect(referer.status == 201)
        #expect(FileManager.default.fileExists(atPath: root + "/made"))
        let same = await api.handle(Self.post("/api/mkdir", body: Self.json(["path": "/made2"])))
        #expect(same.status == 201)
    }

    // MARK: Operations

    @Test func listsWithHiddenFlagsAndNoLocalPaths() async throws {
        let api = try api()
        try FileManager.default.createDirectory(atPath: root + "/DCIM/100FERRY/zz", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/DCIM/100FERRY/.hidden"))
        let response = await api.handle(Self.request("/api/list?path=/DCIM/100FERRY"))
        #expect(response.status == 200)
        let listing = Self.object(response)
        #expect(listing["path"] as? String == "/DCIM/100FERRY")
        #expect(listing["count"] as? Int == 4)
        // The source's order: the page sorts (sort.js), in one place.
        let entries = (listing["entries"] as? [[String: Any]] ?? []).sorted {
            ($0["name"] as? String ?? "") < ($1["name"] as? String ?? "")
        }
        #expect(entries.map { $0["name"] as? String } == [".hidden", "IMG_0003.JPG", "a.txt", "zz"])
        #expect(entries.map { $0["type"] as? String } == ["file", "file", "file", "directory"])
        #expect(entries.map { $0["hidden"] as? Bool } == [true, false, false, false])
        #expect(entries[1]["path"] as? String == "/DCIM/100FERRY/IMG_0003.JPG")
        #expect(entries[1]["image"] as? Bool == true && entries[2]["image"] as? Bool == false)
        #expect(entries[2]["size"] as? Int == 5)
        // Nothing imported yet (the import folder has no history).
        #expect(entries[1]["imported"] as? Bool == false)
        let missing = await api.handle(Self.request("/api/list?path=/nope"))
        #expect(missing.status == 404)
        let error = Self.object(missing)["error"] as? String ?? ""
        #expect(error.contains("No such file"))
        #expect(!error.contains(folder.path), "the server's folder in a message: \(error)")
    }

    @Test func servesFilesWithTheRightDisposition() async throws {
        let api = try api()
        let image = await api.handle(Self.request("/api/file?path=/DCIM/100FERRY/IMG_0003.JPG"))
        #expect(image.status == 200)
        #expect(image.body == .file(path: root + "/DCIM/100FERRY/IMG_0003.JPG", contentType: "image/jpeg"))
        #expect(image.headers["Content-Disposition"]?.hasPrefix("inline") == true)
        let text = await api.handle(Self.request("/api/file?path=/DCIM/100FERRY/a.txt"))
        #expect(text.body == .file(path: root + "/DCIM/100FERRY/a.txt", contentType: "application/octet-stream"))
        #expect(text.headers["Content-Disposition"]?.hasPrefix("attachment") == true)
        #expect(await api.handle(Self.request("/api/file?path=/DCIM")).status == 404)
    }

    @Test func makesThumbnails() async throws {
        let api = try api()
        let response = await api.handle(Self.request("/api/thumb?path=/DCIM/100FERRY/IMG_0003.JPG"))
        #expect(response.status == 200)
        guard case .data(let data) = response.body else {
            Issue.record("no thumbnail bytes")
            return
        }
        let decoded = try JPEGCodec.decode(data: data)
        #expect(decoded.image.width == 256 && decoded.image.height == 192)
        // Second time from the cache, also after a restart (disk).
        let again = try self.api()
        #expect(await again.handle(Self.request("/api/thumb?path=/DCIM/100FERRY/IMG_0003.JPG")).body == response.body)
        // A broken JPEG is an error answer, not a dead server.
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 1, 2, 3]).write(to: URL(fileURLWithPath: root + "/broken.jpg"))
        let broken = await api.handle(Self.request("/api/thumb?path=/broken.jpg"))
        #expect(broken.status == 422)
        #expect(await api.handle(Self.request("/api/thumb?path=/DCIM/100FERRY/a.txt")).status == 415)
    }

    @Test func makesSharperThumbnailsOnlyInFixedSizes() async throws {
        let api = try api()
        func width(_ query: String) async throws -> Int {
            let response = await api.handle(Self.request("/api/thumb?path=/DCIM/100FERRY/IMG_0003.JPG" + query))
            guard case .data(let data) = response.body else { return -1 }
            return try JPEGCodec.decode(data: data).image.width
        }
        // 512 for a dense screen (this 320 x 240 photo keeps its size), cached apart from the
        // default; any other size is the default.
        #expect(try await width("&s=512") == 320)
        #expect(try await width("") == 256)
        #expect(try await width("&s=512") == 320)
        #expect(try await width("&s=4000") == 256)
        #expect(try await width("&s=x") == 256)
        // A one-connection card keeps its own thumbnails: no full download for a tile.
        #expect(WebAPI.thumbnailSide("512", singleConnection: true) == 256)
        #expect(WebAPI.thumbnailSide("512", singleConnection: false) == 512)
    }

    @Test func uploadsDeletesMakesAndRenames() async throws {
        let api = try api()
        let spool = try TempDir(prefix: "spool")
        func part(_ name: String, _ text: String) throws -> MultipartPart {
            let path = spool.file(UUID().uuidString)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return MultipartPart(
                headers: [:], name: "file", filename: name, contentType: "text/plain",
                content: .file(path: path, size: Int64(text.utf8.count)))
        }
        let upload = await api.handle(
            Self.post(
                "/api/upload?path=/DCIM", body: .multipart([try part("C:\\Users\\me\\new.txt", "new!")])))
        #expect(upload.status == 201)
        #expect(try String(contentsOfFile: root + "/DCIM/new.txt", encoding: .utf8) == "new!")
        let again = await api.handle(
            Self.post("/api/upload?path=/DCIM", body: .multipart([try part("new.txt", "other")])))
        #expect(again.status == 409)
        #expect((Self.object(again)["error"] as? String ?? "").contains("new.txt"))
        let overwrite = await api.handle(
            Self.post("/api/upload?path=/DCIM&overwrite=1", body: .multipart([try part("new.txt", "other")])))
        #expect(overwrite.status == 201)
        #expect(try String(contentsOfFile: root + "/DCIM/new.txt", encoding: .utf8) == "other")
        let badName = await api.handle(
            Self.post("/api/upload?path=/DCIM", body: .multipart([try part("..", "x")])))
        #expect(badName.status == 400)

        let mkdir = await api.handle(Self.post("/api/mkdir", body: Self.json(["path": "/DCIM/Trip"])))
        #expect(mkdir.status == 201)
        #expect(Self.object(mkdir)["type"] as? String == "directory")
        #expect(await api.handle(Self.post("/api/mkdir", body: Self.json(["path": "/DCIM/Trip"]))).status == 409)

        let rename = await api.handle(
            Self.post("/api/rename", body: Self.json(["path": "/DCIM/new.txt", "name": "old.txt"])))
        #expect(rename.status == 200)
        #expect(Self.object(rename)["path"] as? String == "/DCIM/old.txt")
        #expect(FileManager.default.fileExists(atPath: root + "/DCIM/old.txt"))
        let clash = await api.handle(
            Self.post("/api/rename", body: Self.json(["path": "/DCIM/old.txt", "name": "100FERRY"])))
        #expect(clash.status == 409)
        let slash = await api.handle(
            Self.post("/api/rename", body: Self.json(["path": "/DCIM/old.txt", "name": "../x"])))
        #expect(slash.status == 400)

        let notEmpty = await api.handle(Self.post("/api/delete", body: Self.json(["path": "/DCIM/100FERRY"])))
        #expect(notEmpty.status == 409)
        #expect(Self.object(notEmpty)["files"] as? Int == 2)
        #expect((Self.object(notEmpty)["error"] as? String ?? "").contains("holds 2 files"))
        #expect(await api.handle(Self.post("/api/delete", body: Self.json(["path": "/DCIM/old.txt"]))).status == 200)
        #expect(await api.handle(Self.post("/api/delete", body: Self.json(["path": "/DCIM/Trip"]))).status == 200)
        #expect(!FileManager.default.fileExists(atPath: root + "/DCIM/old.txt"))
        #expect(!FileManager.default.fileExists(atPath: root + "/DCIM/Trip"))
        #expect(await api.handle(Self.post("/api/delete", body: Self.json(["path": "/"]))).status == 400)
        #expect(await api.handle(Self.request("/api/delete?path=/DCIM/100FERRY/a.txt")).status == 405)
    }

    @Test func unsupportedOperationsAndPasswordsStayHidden() async throws {
        let port = Loopback.freePort()
        let api = try api(source: "http://walter:hunter2@127.0.0.1:\(port)/files/")
        let source = await api.handle(Self.request("/api/source"))
        let info = Self.object(source)
        #expect(info["url"] as? String == "http://walter:***@127.0.0.1:\(port)/files/")
        let capabilities = info["capabilities"] as? [String: Bool] ?? [:]
        #expect(capabilities["upload"] == false && capabilities["delete"] == false)
        let mkdir = await api.handle(Self.post("/api/mkdir", body: Self.json(["path": "/new"])))
        #expect(mkdir.status == 501)
        #expect((Self.object(mkdir)["error"] as? String ?? "").contains("cannot mkdir"))
        for target in ["/api/list?path=/", "/api/file?path=/a.jpg", "/api/source"] {
            let response = await api.handle(Self.request(target))
            guard case .data(let data) = response.body else { continue }
            #expect(!String(decoding: data, as: UTF8.self).contains("hunter2"), "\(target) shows the password")
        }
    }

    @Test func connectPageOpensASource() async throws {
        var configuration = WebConfiguration()
        configuration.cacheDirectory = cache.path
        let api = try WebAPI(configuration: configuration)
        #expect(Self.object(await api.handle(Self.request("/api/source")))["connected"] as? Bool == false)
        #expect(await api.handle(Self.request("/api/list?path=/")).status == 409)
        let bad = await api.handle(Self.post("/api/connect", body: Self.json(["url": "gopher://x/"])))
        #expect(bad.status == 400)
        let opened = await api.handle(Self.post("/api/connect", body: Self.json(["url": root])))
        #expect(opened.status == 200)
        #expect(Self.object(opened)["connected"] as? Bool == true)
        #expect(Self.object(await api.handle(Self.request("/api/list?path=/DCIM")))["count"] as? Int == 1)
        // Started for one source: no switching. Serving beyond loopback: no local folders from the page.
        let fixed = try self.api()
        #expect(await fixed.handle(Self.post("/api/connect", body: Self.json(["url": root]))).status == 403)
        var open = WebConfiguration(host: "0.0.0.0")
        open.accessToken = "t0ken"
        open.cacheDirectory = cache.path
        let remote = try WebAPI(configuration: open)
        let local = await remote.handle(
            Self.post(
                "/api/connect", host: "192.0.2.7:8000", headers: [("X-Ferry-Token", "t0ken")],
                body: Self.json(["url": root])))
        #expect(local.status == 403)
    }

    @Test(.enabled(if: NginxServer.isAvailable)) func remoteFilesGoThroughTheCache() async throws {
        let www = try TempDir(prefix: "www")
        let photo = try await onThread { try SamplePhotos.jpeg(index: 5, width: 320, height: 240) }
        try Data(photo).write(to: URL(fileURLWithPath: www.file("p.jpg")))
        let nginx = try NginxServer(root: www.path, slowRate: 50_000_000)
        let api = try api(source: nginx.url("/"))
        let file = await api.handle(Self.request("/api/file?path=/p.jpg&v=1"))
        #expect(file.status == 200)
        guard case .file(let local, let type) = file.body else {
            Issue.record("not a file response: \(file.status) \(file.body)")
            return
        }
        #expect(type == "image/jpeg" && local.hasPrefix(cache.path))
        #expect(try Data(contentsOf: URL(fileURLWithPath: local)) == Data(photo))
        // The same version again comes from the copy: nginx sees one request.
        let again = await api.handle(Self.request("/api/file?path=/p.jpg&v=1"))
        #expect(again.body == file.body)
        #expect(nginx.accessLog.filter { $0.contains("/p.jpg") }.count == 1)
        let thumb = await api.handle(Self.request("/api/thumb?path=/p.jpg&v=1"))
        #expect(thumb.status == 200)
        let missing = await api.handle(Self.request("/api/file?path=/none.jpg&v=1"))
        #expect(missing.status == 404)
    }
}
