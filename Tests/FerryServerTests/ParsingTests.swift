import Foundation
import Testing

@testable import FerryServer

@Suite struct ByteRangeTests {
    @Test(
        arguments: [
            (nil, ByteRangeDecision.full),
            ("bytes=0-9", .partial(lower: 0, upper: 9)),
            ("bytes=5-", .partial(lower: 5, upper: 99)),
            ("bytes=-10", .partial(lower: 90, upper: 99)),
            ("bytes=-1000", .partial(lower: 0, upper: 99)),
            ("bytes=90-1000", .partial(lower: 90, upper: 99)),
            ("bytes = 1-2", .full),
            ("BYTES=1-2", .partial(lower: 1, upper: 2)),
            ("bytes=100-", .unsatisfiable),
            ("bytes=100-200", .unsatisfiable),
            ("bytes=-0", .unsatisfiable),
            ("bytes=5-4", .full),
            ("bytes=0-1,3-4", .full),
            ("bytes=x-", .full),
            ("bytes=-", .full),
            ("bytes=+1-2", .full),
            ("pages=1-2", .full),
            ("bytes=99999999999999999999-", .full),
        ] as [(String?, ByteRangeDecision)])
    func decide(range: String?, expected: ByteRangeDecision) {
        #expect(ByteRange.decide(range: range, size: 100) == expected)
    }

    @Test func emptyRepresentation() {
        #expect(ByteRange.decide(range: "bytes=0-", size: 0) == .unsatisfiable)
        #expect(ByteRange.decide(range: "bytes=-5", size: 0) == .unsatisfiable)
    }

    @Test func ifRange() {
        let etag = "\"abc\""
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        #expect(ByteRange.ifRangeMatches(nil, etag: etag, lastModified: date))
        #expect(ByteRange.ifRangeMatches("\"abc\"", etag: etag, lastModified: date))
        #expect(!ByteRange.ifRangeMatches("\"abd\"", etag: etag, lastModified: date))
        #expect(!ByteRange.ifRangeMatches("W/\"abc\"", etag: etag, lastModified: date))
        #expect(ByteRange.ifRangeMatches(date, etag: etag, lastModified: date))
        #expect(!ByteRange.ifRangeMatches("Mon, 07 Nov 1994 08:49:37 GMT", etag: etag, lastModified: date))
    }
}

@Suite struct TargetParsingTests {
    @Test func requestTargetParts() {
        let request = HTTPRequest(
            method: "GET", target: "/DCIM/100%5F_TSB/A+B%20C.JPG?op=100&DIR=%2FDCIM&x=a+b&y&z=1=2")
        #expect(request.rawPath == "/DCIM/100%5F_TSB/A+B%20C.JPG")
        #expect(request.path == "/DCIM/100__TSB/A+B C.JPG")
        #expect(request.rawQuery == "op=100&DIR=%2FDCIM&x=a+b&y&z=1=2")
        #expect(request.queryItems.map(\.name) == ["op", "DIR", "x", "y", "z"])
        #expect(request.queryItems.map(\.value) == ["100", "/DCIM", "a b", nil, "1=2"])
        #expect(request.query("DIR") == "/DCIM")
        #expect(request.query("y") == "")
        #expect(request.query("missing") == nil)
    }

    @Test func noQueryAndEmptyQuery() {
        #expect(HTTPRequest(method: "GET", target: "/a").rawQuery == nil)
        #expect(HTTPRequest(method: "GET", target: "/a?").rawQuery == "")
        #expect(HTTPRequest(method: "GET", target: "/a?").queryItems.isEmpty)
    }

    @Test func badEscapesAreKeptAndBadUTF8IsReplaced() {
        #expect(URLTarget.percentDecode("/a%2/b%zz%", plusAsSpace: false) == "/a%2/b%zz%")
        #expect(URLTarget.percentDecode("/%E6%97%A5%E6%9C%AC", plusAsSpace: false) == "/日本")
        #expect(URLTarget.percentDecode("/%FF", plusAsSpace: false) == "/\u{FFFD}")
    }

    @Test func headersAreCaseInsensitiveAndOrdered() {
        var headers: HTTPHeaders = ["Set-Cookie": "a=1", "Content-Type": "text/plain"]
        headers.add(name: "set-cookie", value: "b=2")
        #expect(headers["SET-COOKIE"] == "a=1")
        #expect(headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
        headers.replaceOrAdd(name: "SET-cookie", value: "c=3")
        #expect(headers.values(for: "set-cookie") == ["c=3"])
        #expect(headers.fields.map(\.name) == ["Content-Type", "SET-cookie"])
        headers.remove(name: "content-type")
        #expect(!headers.contains("Content-Type"))
    }

    @Test func httpDate() {
        #expect(HTTPDate.format(secondsSince1970: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(secondsSince1970: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }
}
