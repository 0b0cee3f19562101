import FerryServer
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCard

/// The ez Share emulator's own rules, in process: 8.3 aliases as FAT makes
/// them, paths confined to the folder, links that name only a plain `Host`.
struct EzShareEmulatorTests {
    @Test func aliasesAreUniqueAndPlainNamesKeepTheirs() {
        let names = [
            "IMG_0001.JPG", "img_0002.jpg", "Holiday photo 1.jpg", "Holiday photo 2.jpg", "HOLIDA~1.JPG",
            "旅行照片.jpg", "长城.jpg", "a.b.c.jpeg", ".hidden", "noext",
        ]
        let aliases = ShortNames.aliases(names)
        #expect(aliases["IMG_0001.JPG"] == "IMG_0001.JPG")
        #expect(aliases["img_0002.jpg"] == "IMG_0002.JPG")
        // A real short name keeps it; the long names go around it.
        #expect(aliases["HOLIDA~1.JPG"] == "HOLIDA~1.JPG")
        #expect(aliases["Holiday photo 1.jpg"] == "HOLIDA~2.JPG")
        #expect(aliases["Holiday photo 2.jpg"] == "HOLIDA~3.JPG")
        #expect(aliases["a.b.c.jpeg"] == "ABC~1.JPE")
        #expect(aliases["noext"] == "NOEXT")
        let cjk = aliases["旅行照片.jpg"] ?? ""
        #expect(cjk.count == 10 && cjk.hasSuffix("~1.JPG") && cjk.allSatisfy { $0.isASCII }, "\(cjk)")
        #expect(Set(aliases.values).count == names.count)
        #expect(aliases.values.allSatisfy { ShortNames.plain($0) != nil })
        // The same names give the same aliases.
        #expect(ShortNames.aliases(names) == aliases)
        let many = (0..<120).map { "Holiday photo \($0).jpg" }
        #expect(Set(ShortNames.aliases(many).values).count == 120)
    }

    @Test func pathsAreConfinedAndHostsArePlain() throws {
        let dir = try TempDir(prefix: "ez-emu")
        try FileManager.default.createDirectory(atPath: dir.file("card/DCIM"), withIntermediateDirectories: true)
        try "secret".write(toFile: dir.file("secret.txt"), atomically: true, encoding: .utf8)
        try "a".write(toFile: dir.file("card/DCIM/A.JPG"), atomically: true, encoding: .utf8)
        symlink("../..", dir.file("card/DCIM/OUT"))
        let handler = EzShareHandler(root: try CardRoot(dir.file("card")), firmware: "X")
        func get(_ target: String, host: String = "127.0.0.1:1") -> HTTPResponse {
            handler.handle(HTTPRequest(method: "GET", target: target, headers: ["Host": host]))
        }
        for target in [
            "/dir?dir=A:%5C..", "/dir?dir=A:\\DCIM\\..\\..", "/download?file=..%5Csecret.txt",
            "/download?file=DCIM%5C%00A.JPG",
        ] {
            #expect(get(target).status == 403, "\(target)")
        }
        // The link out is not listed and cannot be followed.
        #expect(get("/download?file=DCIM%5COUT%5Csecret.txt").status == 404)
        #expect(get("/dir?dir=A:%5CDCIM%5COUT").status == 404)
        #expect(get("/download?file=DCIM%5CA.JPG").status == 200)
        #expect(get("/download?file=DCIM%5CA.JPG", host: "x").status == 200)
        func page(_ host: String) -> String {
            guard case .data(let bytes) = get("/dir?dir=A:%5CDCIM", host: host).body else { return "" }
            return String(decoding: bytes, as: UTF8.self)
        }
        #expect(!page("127.0.0.1:1").contains("OUT"))
        #expect(page("[::1]:8080").contains("href=\"http://[::1]:8080/download?file=DCIM%5CA.JPG\""))
        // A Host that is no plain host and port is not written into the page.
        let hostile = page("evil\"><script>")
        #expect(!hostile.contains("evil") && hostile.contains("href=\"http://127.0.0.1/download?file=DCIM%5CA.JPG\""))
        #expect(get("/upload?file=x").status == 404)
        #expect(handler.handle(HTTPRequest(method: "POST", target: "/dir?dir=A:")).status == 405)
    }
}
