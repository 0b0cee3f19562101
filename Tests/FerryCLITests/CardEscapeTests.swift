import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Path escape attempts against `ferry card`, request by request, with the exact
/// bytes a hostile client would send: `..`, encoded dots, backslashes, NUL,
/// absolute paths, symbolic links leading out of the card's folder. Every one is
/// refused (403/404; 400 where the HTTP layer rejects a NUL first), nothing
/// outside is read, listed, written or deleted.
@Suite(.serialized)
struct CardEscapeTests {
    let outside: TempDir
    let rootPath: String
    let card: FerryCardProcess
    static let secret = "TOP SECRET outside the card"

    init() throws {
        outside = try TempDir(prefix: "escape")
        rootPath = outside.file("card")
        let fm = FileManager.default
        try fm.createDirectory(atPath: rootPath + "/DCIM/100__TSB", withIntermediateDirectories: true)
        try CardEscapeTests.secret.write(toFile: outside.file("secret.txt"), atomically: true, encoding: .utf8)
        try Data(SampleJPEG.withThumbnail()).write(to: URL(fileURLWithPath: outside.file("secret.jpg")))
        try "victim".write(toFile: outside.file("victim.txt"), atomically: true, encoding: .utf8)
        try fm.createDirectory(atPath: outside.file("victims"), withIntermediateDirectories: true)
        try TestData.file(rootPath + "/DCIM/100__TSB/OK.JPG", size: 10)
        symlink("..", rootPath + "/link-out")
        symlink("../secret.txt", rootPath + "/link-file")
        symlink("../victims", rootPath + "/link-victims")
        symlink("100__TSB", rootPath + "/DCIM/inside-link")
        card = try FerryCardProcess(folder: rootPath)
    }

    func get(_ target: String) throws -> RawHTTP.Response {
        try RawHTTP.request(port: card.port, target: target)
    }

    func expectRefused(_ r: RawHTTP.Response, _ what: String, allow400: Bool = false) {
        let allowed: Set<Int> = allow400 ? [400, 403, 404] : [403, 404]
        #expect(allowed.contains(r.status), "\(what) answered \(r.status)")
        #expect(!r.text.contains("TOP SECRET"), "\(what) leaked the secret")
        #expect(!r.text.contains("secret.txt"), "\(what) listed outside")
        #expect(r.body != SampleJPEG.thumbnail, "\(what) leaked a thumbnail")
    }

    /// Everything outside the card is as it was.
    func expectOutsideUntouched() throws {
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: outside.path))
        #expect(names == ["card", "secret.txt", "secret.jpg", "victim.txt", "victims"])
        #expect(try String(contentsOfFile: outside.file("victim.txt"), encoding: .utf8) == "victim")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.file("victims")).isEmpty)
    }

    static let escapes = [
        "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/DCIM/../../secret.txt",
        "/DCIM/%2e%2e/%2e%2e/secret.txt", "/..%2fsecret.txt", "/%2e%2e%2fsecret.txt", "/..%5csecret.txt",
        "/DCIM/..%5c..%5csecret.txt", "/link-out/secret.txt", "/link-file", "/link-out/card/link-file",
        "/./../secret.txt", "http://flashair/../secret.txt", "/" + String(repeating: "../", count: 20) + "etc/passwd",
    ]

    @Test func plainDownloads() throws {
        for target in CardEscapeTests.escapes {
            expectRefused(try get(target), "GET \(target)")
        }
        // An absolute local path is a path inside the card, where nothing is.
        expectRefused(try get("/" + outside.file("secret.txt")), "absolute path")
        expectRefused(try get("/DCIM/100__TSB/OK.JPG%00.txt"), "NUL", allow400: true)
        // Inside the card, links that stay inside work.
        #expect(try get("/DCIM/inside-link/OK.JPG").status == 200)
        #expect(try get("/DCIM/100__TSB/OK.JPG").status == 200)
    }

    @Test func commandCGI() throws {
        let dirs = [
            "/..", "/../", "%2F..", "/%2e%2e", "/DCIM/../..", "..", "../card", "/link-out", "/link-out/",
            "/link-out/card/..", "/DCIM/%00", "/DCIM%5c..%5c..", outside.path,
        ]
        for dir in dirs {
            let encoded = dir.addingPercentEncoding(
                withAllowedCharacters: .urlQueryAllowed.subtracting(.init(charactersIn: "&+")))!
            for op in ["100", "101"] {
                let r = try get("/command.cgi?op=\(op)&DIR=\(encoded)")
                if r.status == 200 {
                    // A path the card treats as a missing folder inside itself: an empty answer.
                    #expect(r.text == "WLANSD_FILELIST\r\n" || r.text == "0", "op=\(op) DIR=\(dir): \(r.text)")
                } else {
                    expectRefused(r, "op=\(op) DIR=\(dir)")
                }
            }
        }
        // Links out are not even listed.
        let root = try get("/command.cgi?op=100&DIR=/")
        #expect(root.status == 200)
        #expect(!root.text.contains("link-out") && !root.text.contains("link-file"))
        #expect(!root.text.contains("link-victims"))
        #expect(root.text.contains(",DCIM,"))
    }

    @Test func thumbnailCGI() throws {
        for path in [
            "/../secret.jpg", "/%2e%2e/secret.jpg", "/DCIM/../../secret.jpg", "/link-out/secret.jpg", "..%2fsecret.jpg",
            "secret.jpg", "/..%5csecret.jpg", outside.file("secret.jpg"),
        ] {
            expectRefused(try get("/thumbnail.cgi?" + path), "thumbnail \(path)")
        }
    }

    @Test func uploadCGIDeleteAndFolders() throws {
        for target in [
            "/../victim.txt", "/%2e%2e/victim.txt", "/link-out/victim.txt", "/DCIM/../../victim.txt",
            "/link-out/card/../victim.txt", "..%5cvictim.txt", outside.file("victim.txt"),
        ] {
            let encoded = target.addingPercentEncoding(
                withAllowedCharacters: .urlQueryAllowed.subtracting(.init(charactersIn: "&+")))!
            let r = try get("/upload.cgi?DEL=\(encoded)")
            #expect(r.status != 200 || r.text == "ERROR", "DEL \(target): \(r.status) \(r.text)")
        }
        // DEL of a link leading out is refused, and neither it nor its target goes.
        #expect(try get("/upload.cgi?DEL=/link-file").status == 403)
        #expect(FileManager.default.fileExists(atPath: outside.file("secret.txt")))
        for dir in ["/..", "/../escaped", "/link-out", "/link-victims", "/link-victims/new", "/%2e%2e/x"] {
            let r = try get("/upload.cgi?UPDIR=\(dir)")
            #expect([403, 404].contains(r.status), "UPDIR \(dir): \(r.status) \(r.text)")
        }
        try expectOutsideUntouched()
    }

    func post(filename: String, field: String = "file") throws -> RawHTTP.Response {
        let boundary = "ferryboundary"
        var body = Array(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field)\"; filename=\"\(filename)\"\r\n".utf8)
        body += Array("Content-Type: application/octet-stream\r\n\r\nEVIL\r\n--\(boundary)--\r\n".utf8)
        return try RawHTTP.request(
            port: card.port, method: "POST", target: "/upload.cgi",
            headers: ["Content-Type": "multipart/form-data; boundary=\(boundary)"], body: body)
    }

    @Test func uploadCGIPostNamesStayInside() throws {
        #expect(try get("/upload.cgi?UPDIR=/DCIM").text == "SUCCESS")
        for name in ["../../evil1.txt", "..\\..\\evil2.txt", "/tmp/evil3.txt", outside.file("evil4.txt")] {
            #expect(try post(filename: name).text == "SUCCESS", "\(name)")
        }
        for name in ["..", ".", "../..", "a/"] {
            #expect(try post(filename: name).text == "ERROR", "\(name)")
        }
        let stored = Set(try FileManager.default.contentsOfDirectory(atPath: rootPath + "/DCIM"))
        #expect(stored.isSuperset(of: ["evil1.txt", "evil2.txt", "evil3.txt", "evil4.txt"]))

        // The upload folder swapped for a link out between UPDIR and POST.
        #expect(try get("/upload.cgi?UPDIR=/swap").text == "SUCCESS")
        try FileManager.default.removeItem(atPath: rootPath + "/swap")
        symlink("../victims", rootPath + "/swap")
        let swapped = try post(filename: "evil5.txt")
        #expect(swapped.status == 403 || swapped.text == "ERROR")
        try expectOutsideUntouched()
    }
}
