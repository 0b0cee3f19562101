import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// The connect page's probe of a bare host (`HOST:PORT` here, as the servers listen on free
/// ports): a FlashAir card by `command.cgi?op=108`, then FTP, then a web server's folder page,
/// against real servers, and a port where nothing listens.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ConnectProbeTests {
    let cache: TempDir

    init() throws {
        cache = try TempDir(prefix: "ferry-probe-cache")
    }

    /// `POST /api/connect {"url": host}` on a server started without a source: status and JSON.
    func connect(_ host: String) async throws -> (status: Int, body: [String: Any], took: Duration) {
        var configuration = WebConfiguration()
        configuration.cacheDirectory = cache.path
        let api = try WebAPI(configuration: configuration)
        let started = ContinuousClock.now
        let response = await api.handle(APITests.post("/api/connect", body: APITests.json(["url": host])))
        return (response.status, APITests.object(response), ContinuousClock.now - started)
    }

    @Test func bareHostFindsTheCardAndNothingIsSaidPlainly() async throws {
        let folder = try TempDir(prefix: "ferry-probe")
        try FileManager.default.createDirectory(atPath: folder.path + "/DCIM", withIntermediateDirectories: true)
        let card = try ServerProcess(
            TestProcess.ferryExecutable(), ["card", folder.path, "--port", "0"], logPath: folder.path + "/card.log")
        defer { card.stop() }
        let url = try ServeFixture.cardURL(card)
        let port = try #require(url.split(separator: ":").last.map { $0.filter(\.isNumber) })
        var configuration = WebConfiguration()
        configuration.cacheDirectory = folder.path + "/cache"
        let api = try WebAPI(configuration: configuration)
        #expect(SourceProbe.isBareHost("192.168.0.1") && SourceProbe.isBareHost("flashair"))
        #expect(!SourceProbe.isBareHost("/srv/photos") && !SourceProbe.isBareHost("ftp://host/"))
        let opened = await api.handle(APITests.post("/api/connect", body: APITests.json(["url": "127.0.0.1:\(port)"])))
        #expect(opened.status == 200)
        #expect(APITests.object(opened)["scheme"] as? String == "flashair")
        let listing = APITests.object(await api.handle(APITests.request("/api/list?path=/")))
        #expect((listing["entries"] as? [[String: Any]])?.first?["name"] as? String == "DCIM")

        let other = try WebAPI(configuration: configuration)
        let nobody = await other.handle(
            APITests.post("/api/connect", body: APITests.json(["url": "127.0.0.1:\(Loopback.freePort())"])))
        #expect(nobody.status >= 400)
        let text = APITests.object(nobody)["error"] as? String ?? ""
        #expect(text.contains("nothing answered") && text.contains("FTP server"), "\(text)")
        #expect(!text.contains(FileManager.default.currentDirectoryPath + "/"), "\(text)")
    }

    /// A bare host where an ez Share card answers opens as `ezshare://` (after
    /// command.cgi answered 404); a plain web server is asked too and is no card.
    @Test func anEzShareCardIsFoundByItsVersion() async throws {
        let folder = try TempDir(prefix: "ferry-probe-ez")
        try FileManager.default.createDirectory(atPath: folder.file("card/DCIM"), withIntermediateDirectories: true)
        let card = try FerryCardProcess(folder: folder.file("card"), arguments: ["--kind", "ezshare"])
        defer { card.stop() }
        let (status, body, _) = try await connect("127.0.0.1:\(card.port)")
        #expect(status == 200, "\(body)")
        #expect(body["scheme"] as? String == "ezshare", "\(body)")
        #expect(!SourceProbe.isEzShareVersion("<html>404</html>"))
    }

    @Test func firmwareVersionsAreRecognised() {
        for yes in ["F19BAW3AW2.00.00", "FERRYCARD4.00.03", "F24A6W3AW1.00.03\r\n"] {
            #expect(SourceProbe.isFirmwareVersion(yes), "\(yes)")
        }
        for no in ["", "<html>", "1.00.00", "not found", "FERRYCARD", "a.b.c", "<p>F19BAW3AW2.00.00</p>"] {
            #expect(!SourceProbe.isFirmwareVersion(no), "\(no)")
        }
    }

    @Test func aCardIsFoundByItsFirmwareVersion() async throws {
        let folder = try TempDir(prefix: "ferry-probe-card")
        try FileManager.default.createDirectory(atPath: folder.path + "/DCIM", withIntermediateDirectories: true)
        let card = try FerryCardProcess(folder: folder.path, arguments: ["--max-connections", "1"])
        let (status, body, _) = try await connect("127.0.0.1:\(card.port)")
        #expect(status == 200, "\(body)")
        #expect(body["scheme"] as? String == "flashair", "\(body)")
        #expect(body["singleConnection"] as? Bool == true)
    }

    @Test func theCardQuestionIsOp108AndItsAnswerMustBeAFirmwareVersion() async throws {
        // A web server that answers every path with a page is no card; one whose op=108 names a
        // firmware is (and nothing else is asked before deciding).
        let page = try ScriptedHTTPServer { _ in .text("<html><body>index</body></html>") }
        let pageAnswer = try await connect("127.0.0.1:\(page.port)")
        #expect(pageAnswer.body["scheme"] as? String != "flashair", "\(pageAnswer.body)")
        #expect(page.requests.first?.target == "/command.cgi?op=108", "\(page.requests.map(\.target))")
        let card = try ScriptedHTTPServer { r in
            r.path == "/command.cgi" && r.query == "op=108" ? .text("F19BAW3AW2.00.00\r\n") : .text("", status: 404)
        }
        let cardAnswer = try await connect("127.0.0.1:\(card.port)")
        #expect(cardAnswer.body["scheme"] as? String == "flashair", "\(cardAnswer.body)")
        #expect(card.requests.map(\.target) == ["/command.cgi?op=108"], "\(card.requests.map(\.target))")
    }

    @Test func anAnonymousFTPServerOpens() async throws {
        let ftp = try await FTPTestServer(.vsftpd)
        let (status, body, _) = try await connect("127.0.0.1:\(ftp.port)")
        #expect(status == 200, "\(body)")
        #expect(body["scheme"] as? String == "ftp", "\(body)")
    }

    @Test func anFTPServerThatWantsALoginIsNamed() async throws {
        let ftp = try await FTPTestServer(.pyftpdlib)
        let (status, body, _) = try await connect("127.0.0.1:\(ftp.port)")
        let error = body["error"] as? String ?? ""
        #expect(status >= 400 && body["code"] as? String == "login failed", "\(status) \(body)")
        #expect(
            error.contains("an FTP server answers") && error.contains("ftp://USER@127.0.0.1:\(ftp.port)/"), "\(error)")
        #expect(error.contains("530"), "the server's own code: \(error)")
    }

    @Test(.enabled(if: ApacheServer.isAvailable)) func aWebServerWithAFolderPageOpens() async throws {
        let www = try TempDir(prefix: "ferry-probe-www")
        try Data("x".utf8).write(to: URL(fileURLWithPath: www.file("a.txt")))
        let apache = try ApacheServer(root: www.path)
        let (status, body, took) = try await connect("127.0.0.1:\(apache.port)")
        #expect(status == 200, "\(body)")
        #expect(body["scheme"] as? String == "http", "\(body)")
        // The FTP question waits for a greeting a web server never sends: no more than that.
        #expect(took < .seconds(8), "\(took)")
    }

    @Test(.enabled(if: NginxServer.isAvailable)) func aWebServerWithoutAFolderPageIsNamed() async throws {
        let www = try TempDir(prefix: "ferry-probe-nginx")
        let nginx = try NginxServer(root: www.path)
        let (status, body, _) = try await connect("127.0.0.1:\(nginx.port)")
        let error = body["error"] as? String ?? ""
        #expect(status == 404, "\(status) \(body)")
        #expect(error.contains("a web server answers") && error.contains("403"), "\(error)")
        #expect(!error.contains(www.path), "a local path in the message: \(error)")
    }

    @Test func aClosedPortSaysNothingAnswered() async throws {
        let port = Loopback.freePort()
        let (status, body, took) = try await connect("127.0.0.1:\(port)")
        let error = body["error"] as? String ?? ""
        #expect(status >= 400, "\(status) \(body)")
        #expect(error.contains("nothing answered at 127.0.0.1:\(port)"), "\(error)")
        #expect(error.contains("FlashAir") && error.contains("FTP") && error.contains("web server"), "\(error)")
        #expect(took < .seconds(10), "\(took)")
    }
}
