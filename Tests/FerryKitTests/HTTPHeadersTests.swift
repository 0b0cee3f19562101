import Foundation
import Testing

@testable import FerryKit

/// `HTTPHeaders` keeps a response's lines as bytes and makes a value's `String`
/// only when asked: it must read every line as the parser that made two
/// `String`s per line did (kept here as `LineByLine`), whatever the bytes.
struct HTTPHeadersTests {
    /// The parser before the bytes were kept (e720ab2), word for word.
    struct LineByLine {
        var fields: [HTTPHeaders.Field] = []
        var reason = ""
        var status = 0

        subscript(_ name: String) -> String? {
            let key = name.lowercased()
            return fields.first { $0.name == key }?.value
        }

        mutating func consume(line raw: UnsafeRawBufferPointer) {
            var bytes = raw[...]
            while let last = bytes.last, last == 0x0D || last == 0x0A { bytes = bytes.dropLast() }
            if bytes.starts(with: "HTTP/".utf8) {
                fields = []
                let parts = bytes.split(separator: 0x20, maxSplits: 2, omittingEmptySubsequences: true)
                status = parts.count > 1 ? Int(String(decoding: parts[1], as: UTF8.self)) ?? 0 : 0
                let printable = parts.count > 2 ? Self.trim(parts[2]).filter { $0 >= 0x20 && $0 != 0x7F } : []
                reason = String(decoding: printable, as: UTF8.self)
                return
            }
            if let first = bytes.first, first == 0x20 || first == 0x09 {
                let more = Self.trim(bytes)
                guard !fields.isEmpty, !more.isEmpty else { return }
                let value = fields[fields.count - 1].value
                fields[fields.count - 1].value =
                    (value.isEmpty ? "" : value + " ") + String(decoding: more, as: UTF8.self)
                return
            }
            guard let colon = bytes.firstIndex(of: 0x3A) else { return }
            let name = Self.trim(bytes[..<colon])
            guard !name.isEmpty else { return }
            let value = Self.trim(bytes[(colon + 1)...])
            fields.append(
                HTTPHeaders.Field(
                    name: String(decoding: name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self),
                    value: String(decoding: value, as: UTF8.self)))
        }

        static func trim(_ s: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
            var t = s
            while let f = t.first, f == 0x20 || f == 0x09 { t = t.dropFirst() }
            while let l = t.last, l == 0x20 || l == 0x09 { t = t.dropLast() }
            return t
        }
    }

    /// Names asked for: Ferry's own, other cases, and names whose `String`
    /// comparison is not a byte comparison (`;` has a canonical twin, U+037E).
    static let keys = [
        "etag", "ETag", "Last-Modified", "content-length", "Content-Range", "content-type", "location", "x", "k",
        "a;b", "a\u{37E}b", "ké", "K", "", "x-1",
    ]

    /// Lines of what servers send, broken in every way the pieces allow.
    static let pieces: [[UInt8]] = [
        Array("HTTP/1.1".utf8), Array("HTTP/".utf8), Array(" ".utf8), Array("  ".utf8), Array("\t".utf8),
        Array(":".utf8), Array("200".utf8), Array("206".utf8), Array("+20".utf8), Array("OK".utf8),
        Array("ETag".utf8), Array("etag".utf8), Array("Content-Length".utf8), Array("Last-Modified".utf8),
        Array("X".utf8), Array("x".utf8), Array("K".utf8), Array("k".utf8), Array("a;b".utf8),
        Array("a\u{37E}b".utf8), Array("ké".utf8), Array("e\u{301}".utf8), Array("\u{212A}".utf8), [0xFF],
        [0xE2, 0x82], [0xC3], [0x7F], [0x1B], [0x00], Array("\r".utf8), Array("\n".utf8), Array("-1".utf8),
        Array("\"v1\"".utf8),
    ]

    static func randomLines(count: Int, using rng: inout some RandomNumberGenerator) -> [[UInt8]] {
        (0..<count).map { _ in
            var line: [UInt8] = []
            for _ in 0..<Int.random(in: 0...6, using: &rng) { line += pieces.randomElement(using: &rng)! }
            return line + (Bool.random(using: &rng) ? Array("\r\n".utf8) : [])
        }
    }

    static func expectSame(_ lines: [[UInt8]], _ comment: Comment? = nil) {
        var new = HTTPHeaders()
        var old = LineByLine()
        for line in lines {
            line.withUnsafeBytes {
                new.consume(line: $0)
                old.consume(line: $0)
            }
            #expect(new.status == old.status, comment)
            #expect(new.reason == old.reason, comment)
            #expect(new.fields == old.fields, comment)
            for key in keys { #expect(new[key] == old[key], "\(key): \(comment?.description ?? "")") }
        }
    }

    @Test func readsWhatServersSendAsBefore() {
        Self.expectSame(
            [
                "HTTP/1.1 301 Moved Permanently\r\n", "Location: /b\r\n", "\r\n",
                "HTTP/1.1  206   Partial  Content \r\n",
                "Server: nginx\r\n", "Content-Range: bytes 10-19/20\r\n", "ETag:  \"v1\"\t\r\n", "X-Empty:\r\n",
                " folded\r\n", "\t  more \r\n", "Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT\r\n", "ETag: \"v2\"\r\n",
                "no colon\r\n", ": no name\r\n", "\r\n",
            ].map { Array($0.utf8) })
        var h = HTTPHeaders()
        for line in ["HTTP/1.1 200 OK\r\n", "ETag: \"a\"\r\n", "X-Empty:\r\n", " b\r\n", "ETAG: \"c\"\r\n"] {
            h.consume(line: line)
        }
        #expect(h["etag"] == "\"a\"" && h["X-EMPTY"] == "b" && h.status == 200 && h.reason == "OK")
        #expect(h.fields.map(\.name) == ["etag", "x-empty", "etag"])
    }

    @Test func readsRandomLinesAsBefore() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<400 {
            let lines = Self.randomLines(count: Int.random(in: 1...8, using: &rng), using: &rng)
            Self.expectSame(lines, "\(lines.map { String(decoding: $0, as: UTF8.self).debugDescription })")
        }
    }

    @Test func equalAndHashedAsTheFieldsAre() {
        var a = HTTPHeaders()
        var b = HTTPHeaders()
        for line in ["HTTP/1.1 200 OK", "ETag: \"v\"", "X:", " y"] { a.consume(line: line) }
        // Other bytes, the same fields: a folded value, a status line that was forgotten.
        for line in ["HTTP/1.1 100 Continue", "Z: z", "HTTP/1.1 200 OK", "etag: \"v\"", "x: y"] {
            b.consume(line: line)
        }
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        b.consume(line: "x: y")
        #expect(a != b)
    }

    @Test func statusCodesAreReadAsIntReadsThem() {
        for text in [
            "200", "+200", "-1", "0200", "", "+", "-", "2a", " 200", "99999999999999999999", "9223372036854775807",
            "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "\u{663}",
        ] {
            var copy = text
            let read = copy.withUTF8 { HTTPHeaders.integer(UnsafeRawBufferPointer($0)) }
            #expect(read == Int(text), "\(text)")
        }
    }

    @Test func longAndUnusualNamesAreLookedUpAsStrings() {
        var h = HTTPHeaders()
        let long = String(repeating: "x-long", count: 10)
        for line in ["HTTP/1.1 200 OK", "\(long): 1", "a;b: 2", "caf\u{E9}: 3", "CONTENT-LENGTH: 4"] {
            h.consume(line: line)
        }
        #expect(h[long.uppercased()] == "1" && h["A;B"] == "2" && h["CAF\u{C9}"] == "3" && h["Content-Length"] == "4")
        #expect(h["caf\u{65}\u{301}"] == "3")
    }
}
