import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// What a WebDAV server says when it refuses, as Nextcloud and others word it,
/// from a scripted server: each status with what to do next, the server's own
/// words, a `207` DELETE that failed for some files, and a redirect followed.
@Suite(.serialized)
struct WebDAVErrorTests {
    static let folderReply = """
        <?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response><d:href>/new/</d:href>
        <d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop>
        <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
        <d:response><d:href>/new/a.jpg</d:href><d:propstat><d:prop><d:resourcetype/><d:getcontentlength>3</d:getcontentlength>
        </d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>
        """

    static func sabre(_ message: String) -> [UInt8] {
        Array(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns"><s:exception>X</s:exception><s:message>\(message)</s:message></d:error>
            """.utf8)
    }

    static func xml(_ status: Int, _ body: [UInt8]) -> ScriptedResponse {
        ScriptedResponse(status: status, headers: ["Content-Type": "application/xml; charset=utf-8"], body: body)
    }

    @Test func statusesInTheServersWords() async throws {
        let server = try ScriptedHTTPServer { request in
            switch (request.method, request.path) {
            case ("PROPFIND", "/old"): return .init(status: 301, headers: ["Location": "/new/"])
            case ("PROPFIND", "/new/"): return WebDAVErrorTests.xml(207, Array(WebDAVErrorTests.folderReply.utf8))
            case ("PROPFIND", "/new/a.jpg"):
                return WebDAVErrorTests.xml(
                    207,
                    Array(
                        """
                        <d:multistatus xmlns:d="DAV:"><d:response><d:href>/new/a.jpg</d:href><d:propstat><d:prop>
                        <d:resourcetype/></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>
                        """.utf8))
            case ("PROPFIND", "/plain/"): return .text("<html>It works</html>")
            case ("PROPFIND", "/nodav/"): return .text("Method Not Allowed", status: 405)
            case ("PROPFIND", "/locked.jpg"), ("PROPFIND", "/full.jpg"), ("PROPFIND", "/nested/deep/x.jpg"):
                return .text("", status: 404)
            case ("DELETE", "/locked.jpg"), ("PROPFIND", "/locked-dir/"):
                return WebDAVErrorTests.xml(423, WebDAVErrorTests.sabre("\"locked.jpg\" is locked"))
            case ("MOVE", _):
                return WebDAVErrorTests.xml(412, WebDAVErrorTests.sabre("Destination exists"))
            case ("MKCOL", "/x/"):
                return WebDAVErrorTests.xml(409, WebDAVErrorTests.sabre("Parent node does not exist"))
            case ("PUT", _):
                return WebDAVErrorTests.xml(
                    507, WebDAVErrorTests.sabre("Insufficient space in /anna/files, 1024 required, 0 available"))
            case ("PROPFIND", "/denied/"):
                return .text("Forbidden", status: 403)
            default:
                return .text("", status: 404)
            }
        }
        defer { server.stop() }
        let fs = WebDAVFileSystem(url: try RemoteURL(parsing: "dav://127.0.0.1:\(server.port)/"))

        // A redirect is followed with its method and body.
        #expect(try await fs.stat("/old").isDirectory)
        #expect(try await fs.list("/new").map(\.name) == ["a.jpg"])

        func failure(_ step: () async throws(FerryError) -> Void) async -> FerryError? {
            do {
                try await step()
                return nil
            } catch {
                return error
            }
        }
        let plain = await failure { () async throws(FerryError) in _ = try await fs.list("/plain") }
        #expect(
            plain?.code == .unsupportedOperation && plain?.detail?.contains("no WebDAV") == true,
            "\(String(describing: plain))")
        let nodav = await failure { () async throws(FerryError) in _ = try await fs.list("/nodav") }
        #expect(nodav?.code == .unsupportedOperation && nodav?.serverCode == 405, "\(String(describing: nodav))")
        #expect(nodav?.detail?.contains("/remote.php/dav/files/USER/") == true)
        let denied = await failure { () async throws(FerryError) in _ = try await fs.list("/denied") }
        #expect(denied?.code == .permissionDenied && denied?.serverCode == 403)
        let exists = await failure { () async throws(FerryError) in try await fs.rename("/new/a.jpg", to: "/new/b.jpg")
        }
        #expect(exists?.code == .destinationExists && exists?.recovery == .replace, "\(String(describing: exists))")
        #expect(exists?.serverText?.contains("Destination exists") == true)
        let parent = await failure { () async throws(FerryError) in
            try await fs.makeDirectory("/x", createParents: false)
        }
        #expect(
            parent?.code == .notFound && parent?.detail?.contains("mkdir -p") == true, "\(String(describing: parent))")
        #expect(parent?.serverText?.contains("Parent node does not exist") == true)

        let work = try TempDir(prefix: "dav-err")
        try TestData.file(work.file("a.bin"), size: 2000)
        do {
            _ = try await fs.upload(work.file("a.bin"), to: "/full.jpg", options: .init()).result
            Issue.record("an upload to a full server succeeded")
        } catch {
            #expect(error.code == .diskFull && !error.isTransient, "\(error)")
            #expect(error.description.contains("1024 required, 0 available"), "\(error)")
            // The user's file is named, and the temporary it was writing only as a note.
            #expect(error.target?.hasSuffix("/full.jpg") == true, "\(error)")
            #expect(error.detail?.contains("writing the temporary .full.jpg.ferry-part") == true, "\(error)")
        }
        // Never tried again: a full disk does not empty itself.
        #expect(server.requests.filter { $0.method == "PUT" }.count == 1)
    }

    @Test func aDeleteThatFailedForSomeFilesNamesEach() async throws {
        let server = try ScriptedHTTPServer { request in
            switch request.method {
            case "PROPFIND":
                return WebDAVErrorTests.xml(
                    207,
                    Array(
                        """
                        <D:multistatus xmlns:D="DAV:"><D:response><D:href>/f.jpg</D:href><D:propstat><D:prop><D:resourcetype/>
                        </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>
                        """.utf8))
            default:
                return WebDAVErrorTests.xml(
                    207,
                    Array(
                        """
                        <D:multistatus xmlns:D="DAV:">
                        <D:response><D:href>/f.jpg</D:href><D:status>HTTP/1.1 423 Locked</D:status></D:response>
                        </D:multistatus>
                        """.utf8))
            }
        }
        defer { server.stop() }
        let fs = WebDAVFileSystem(url: try RemoteURL(parsing: "dav://127.0.0.1:\(server.port)/"))
        do {
            try await fs.delete("/f.jpg")
            Issue.record("a 207 with a 423 inside was taken for success")
        } catch {
            #expect(error.serverCode == 423 && error.code == .permissionDenied, "\(error)")
            #expect(error.detail?.contains("/f.jpg: 423 Locked") == true, "\(error)")
        }
        // rm sent Depth: 0: a folder's contents are never the target.
        #expect(
            server.requests.first { $0.method == "DELETE" }?.headers.first { $0.key.lowercased() == "depth" }?.value
                == "0")
    }
}
