import FerryTestSupport
import Foundation
import Testing

@testable import FerryServer

@Suite struct MultipartParserTests {
    let directory: ScratchDirectory

    init() throws {
        directory = try ScratchDirectory()
    }

    /// A body whose file part contains near-misses of the delimiter.
    static let boundary = "----FerryBoundary7MA4YWxk"
    static let fileBytes: [UInt8] =
        Array("JPEG\r\n--\r\n------FerryBoundary7MA4YWx\r\n--".utf8) + (0...255).map { UInt8($0) }
        + Array("\r\n------FerryBoundary7MA4YWx!".utf8) + Array("\r".utf8)
    static var body: [UInt8] {
        var body = Array("This is the preamble; ignore it.\r\n".utf8)
        body += Array("--\(boundary)\r\n".utf8)
        body += Array("Content-Disposition: form-data; name=\"note\"\r\n\r\n".utf8)
        body += Array("hello\r\nworld".utf8)
        body += Array("\r\n--\(boundary)  \t\r\n".utf8)  // transport padding
        body += Array("Content-Disposition: form-data; name=\"file\"; filename=\"C:\\dir\\IMG 1.jpg\"\r\n".utf8)
        body += Array("Content-Type: image/jpeg\r\n\r\n".utf8)
        body += fileBytes
        body += Array("\r\n--\(boundary)\r\n".utf8)
        body += Array("\r\n".utf8)  // a part with no headers at all
        body += Array("anonymous".utf8)
        body += Array("\r\n--\(boundary)--\r\nepilogue, also ignored\r\n".utf8)
        return body
    }

    private func parse(_ body: [UInt8], chunks: [Int], limits: MultipartParser.Limits = .init()) throws
        -> [MultipartPart]
    {
        let parser = try MultipartParser(boundary: Self.boundary, directory: directory.path, limits: limits)
        var offset = 0
        for size in chunks where offset < body.count {
            let end = min(body.count, offset + size)
            try body[offset..<end].withUnsafeBytes { try parser.feed($0) }
            offset = end
        }
        if offset < body.count { try body[offset...].withUnsafeBytes { try parser.feed($0) } }
        return try parser.finish()
    }

    private func check(_ parts: [MultipartPart]) throws {
        #expect(parts.count == 3)
        #expect(parts[0].name == "note")
        #expect(parts[0].filename == nil)
        #expect(parts[0].text == "hello\r\nworld")
        #expect(parts[1].name == "file")
        #expect(parts[1].filename == "C:\\dir\\IMG 1.jpg")
        #expect(parts[1].filenameLastComponent == "IMG 1.jpg")
        #expect(parts[1].contentType == "image/jpeg")
        guard case .file(let path, let size) = parts[1].content else {
            Issue.record("file part not on disk")
            return
        }
        #expect(size == Int64(Self.fileBytes.count))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(Self.fileBytes))
        #expect(parts[2].name == nil)
        #expect(parts[2].headers.count == 0)
        #expect(parts[2].text == "anonymous")
        try FileManager.default.removeItem(atPath: path)
    }

    @Test func feedByteByByte() throws {
        defer { directory.remove() }
        try check(try parse(Self.body, chunks: Array(repeating: 1, count: Self.body.count)))
    }

    @Test func everyChunkSize() throws {
        defer { directory.remove() }
        for size in 1...Self.body.count {
            try check(try parse(Self.body, chunks: Array(repeating: size, count: Self.body.count / size + 1)))
        }
    }

    @Test func splitAtEveryPosition() throws {
        defer { directory.remove() }
        for split in 0...Self.body.count {
            try check(try parse(Self.body, chunks: [split]))
        }
    }

    @Test func largeFilePartInOddChunks() async throws {
        defer { directory.remove() }
        try await TestGate.run { try largeFilePart() }
    }

    private func largeFilePart() throws {
        var generator = SeededRandom(seed: 9)
        let content = (0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        var body = Array(
            "--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"big\"\r\n\r\n".utf8)
        body += content
        body += Array("\r\n--\(Self.boundary)--".utf8)
        let parts = try parse(body, chunks: Array(repeating: 4093, count: body.count / 4093 + 1))
        guard case .file(let path, let size) = parts.first?.content else {
            Issue.record("no file part")
            return
        }
        #expect(size == Int64(content.count))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(content))
    }

    @Test func bodyWithoutClosingBoundaryFailsAndDeletesFiles() throws {
        defer { directory.remove() }
        let truncated = Array(Self.body.prefix(Self.body.count - 40))
        #expect {
            _ = try parse(truncated, chunks: [100])
        } throws: { error in
            (error as? MultipartError)?.code == .malformed
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(throws: MultipartError.self) { _ = try parse(Array("no boundary here".utf8), chunks: [3]) }
        #expect(throws: MultipartError.self) { _ = try parse([], chunks: []) }
    }

    @Test func droppingAParserDeletesItsFiles() throws {
        defer { directory.remove() }
        do {
            let parser = try MultipartParser(boundary: Self.boundary, directory: directory.path)
            try Self.body.prefix(400).withUnsafeBytes { try parser.feed($0) }
            #expect(try !FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func garbageAfterBoundaryIsMalformed() throws {
        defer { directory.remove() }
        let body = Array("--\(Self.boundary)junk\r\n\r\nx\r\n--\(Self.boundary)--".utf8)
        #expect(throws: MultipartError.self) { _ = try parse(body, chunks: [1, 1, 1]) }
    }

    @Test func limitsAreEnforced() throws {
        defer { directory.remove() }
        let longHeader = Array(
            "--\(Self.boundary)\r\nX-Pad: \(String(repeating: "a", count: 2000))\r\n\r\nv\r\n--\(Self.boundary)--".utf8)
        #expect {
            _ = try parse(
                longHeader, chunks: Array(repeating: 1, count: longHeader.count), limits: .init(maxPartHeaderSize: 1000)
            )
        } throws: { error in
            (error as? MultipartError)?.code == .headersTooLarge
        }
        // The same header fits a larger limit.
        #expect(try parse(longHeader, chunks: [7], limits: .init(maxPartHeaderSize: 3000)).count == 1)

        let bigField = Array(
            "--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n\(String(repeating: "v", count: 500))\r\n--\(Self.boundary)--"
                .utf8)
        #expect {
            _ = try parse(bigField, chunks: [10], limits: .init(maxFieldSize: 100))
        } throws: { error in
            (error as? MultipartError)?.code == .fieldTooLarge
        }

        var manyParts: [UInt8] = []
        for _ in 0..<5 { manyParts += Array("--\(Self.boundary)\r\n\r\nx\r\n".utf8) }
        manyParts += Array("--\(Self.boundary)--".utf8)
        #expect {
            _ = try parse(manyParts, chunks: [1000], limits: .init(maxParts: 4))
        } throws: { error in
            (error as? MultipartError)?.code == .tooManyParts
        }
        #expect(try parse(manyParts, chunks: [1000], limits: .init(maxParts: 5)).count == 5)
    }

    @Test func boundaryFromContentType() {
        #expect(MultipartParser.boundary(fromContentType: "multipart/form-data; boundary=abc") == "abc")
        #expect(MultipartParser.boundary(fromContentType: "Multipart/Form-Data;boundary=\"a b;c\"") == "a b;c")
        #expect(MultipartParser.boundary(fromContentType: "multipart/form-data") == nil)
        #expect(MultipartParser.boundary(fromContentType: "text/plain; boundary=abc") == nil)
        #expect(throws: MultipartError.self) { _ = try MultipartParser(boundary: "", directory: "/tmp") }
    }

    @Test func contentDispositionParameters() {
        func disposition(_ text: String) -> HeaderParameters { HeaderParameters(parsing: text) }
        let windows = disposition(#"form-data; name="file"; filename="C:\dir\a.jpg""#)
        #expect(windows.value == "form-data")
        #expect(windows["name"] == "file")
        #expect(windows["filename"] == #"C:\dir\a.jpg"#)
        #expect(disposition(#"form-data; filename="a \"q\" \\ b.jpg""#)["filename"] == #"a "q" \ b.jpg"#)
        #expect(disposition(#"form-data; filename="x;y=z.jpg"; name=f"#)["filename"] == "x;y=z.jpg")
        #expect(disposition(#"form-data; filename="x;y=z.jpg"; name=f"#)["name"] == "f")
        #expect(disposition("form-data; NAME=token; FileName=plain.jpg")["filename"] == "plain.jpg")
        #expect(disposition("form-data; filename*=UTF-8''a%20b.jpg")["filename"] == nil)
        #expect(disposition(#"form-data; filename="unterminated.jpg"#)["filename"] == "unterminated.jpg")
        #expect(disposition(#"form-data; name="""#)["name"] == "")
    }

    @Test func partHeadersParsing() {
        let headers = MultipartParser.parseHeaders(
            Array("Content-Disposition: form-data;\r\n name=\"a\"\r\ncontent-type:  text/plain \r\nnocolon\r\n".utf8))
        #expect(headers["content-disposition"] == "form-data; name=\"a\"")
        #expect(headers["Content-Type"] == "text/plain")
        #expect(headers.count == 2)
        // ISO 8859-1 fallback for bytes that are not UTF-8.
        let latin = MultipartParser.parseHeaders([0x58, 0x3A, 0x20, 0xE9])
        #expect(latin["x"] == "é")
    }
}
