import FerryTestSupport
import Foundation
import Testing

/// A FAT card cannot hold `IMG_0003.JPG` and `img_0003.jpg` in one folder:
/// `ferry card` refuses the second upload with an error a client can read.
@Suite(.serialized)
struct CardCaseTests {
    static func post(_ card: FerryCardProcess, filename: String, content: String) throws -> RawHTTP.Response {
        let boundary = "ferryboundary"
        var body = Array(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(filename)\"\r\n".utf8)
        body += Array("Content-Type: application/octet-stream\r\n\r\n\(content)\r\n--\(boundary)--\r\n".utf8)
        return try RawHTTP.request(
            port: card.port, method: "POST", target: "/upload.cgi",
            headers: ["Content-Type": "multipart/form-data; boundary=\(boundary)"], body: body)
    }

    @Test func anUploadWhoseNameDiffersOnlyInCaseIsRefused() throws {
        let dir = try TempDir(prefix: "card-case")
        try FileManager.default.createDirectory(atPath: dir.file("DCIM"), withIntermediateDirectories: true)
        let card = try FerryCardProcess(folder: dir.path)
        defer { card.stop() }
        #expect(try RawHTTP.request(port: card.port, target: "/upload.cgi?UPDIR=/DCIM").text == "SUCCESS")
        #expect(try Self.post(card, filename: "IMG_0003.JPG", content: "first").text == "SUCCESS")
        let twin = try Self.post(card, filename: "img_0003.jpg", content: "second")
        #expect(twin.text.hasPrefix("ERROR") && twin.text.contains("IMG_0003.JPG"), "\(twin.status) \(twin.text)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("DCIM")) == ["IMG_0003.JPG"])
        #expect(try String(contentsOfFile: dir.file("DCIM/IMG_0003.JPG"), encoding: .utf8) == "first")
        // The same name replaces, as on a card.
        #expect(try Self.post(card, filename: "IMG_0003.JPG", content: "third").text == "SUCCESS")
        #expect(try String(contentsOfFile: dir.file("DCIM/IMG_0003.JPG"), encoding: .utf8) == "third")
    }

    @Test func ferryPutReportsTheCardsRefusal() throws {
        let dir = try TempDir(prefix: "card-case-put")
        try FileManager.default.createDirectory(atPath: dir.file("DCIM"), withIntermediateDirectories: true)
        try Data("on the card".utf8).write(to: URL(fileURLWithPath: dir.file("DCIM/IMG_0003.JPG")))
        let card = try FerryCardProcess(folder: dir.path)
        defer { card.stop() }
        let local = try TempDir(prefix: "card-case-local")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: local.file("img_0003.jpg")))
        let put = try TestProcess.run(
            TestProcess.ferryExecutable(), ["put", local.file("img_0003.jpg"), card.url("/DCIM/")])
        // The client sees the card's name as the same file.
        #expect(put.status != 0 && put.stderr.contains("exists"), "\(put.stdout) \(put.stderr)")
        #expect(try String(contentsOfFile: dir.file("DCIM/IMG_0003.JPG"), encoding: .utf8) == "on the card")
        // Told to replace it, the client replaces that file: still one name in the folder.
        let replace = try TestProcess.run(
            TestProcess.ferryExecutable(), ["put", local.file("img_0003.jpg"), card.url("/DCIM/"), "--overwrite"])
        #expect(replace.status == 0, "\(replace.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("DCIM")) == ["IMG_0003.JPG"])
        #expect(try String(contentsOfFile: dir.file("DCIM/IMG_0003.JPG"), encoding: .utf8) == "mine")
    }
}
