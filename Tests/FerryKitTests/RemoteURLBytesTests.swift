import FerryTestSupport
import Testing

@testable import FerryKit

/// The one-pass reading of common URLs and the one-buffer writing
/// (RemoteURL+Bytes.swift) give what the full reading gave.
@Suite struct RemoteURLBytesTests {
    @Test func commonURLsReadAsBefore() throws {
        let u = try RemoteURL(parsing: "HTTP://Example.COM:8080/Fotos/IMG%200001.JPG?size=1#top")
        #expect(u.scheme == .http && u.host == "Example.COM" && u.port == 8080)
        #expect(u.path == "/Fotos/IMG 0001.JPG" && u.query == "size=1" && u.user == nil)
        #expect(u.hostKey == "http://example.com:8080")
        #expect(u.redacted == "http://Example.COM:8080/Fotos/IMG%200001.JPG?size=1")
        #expect(u.wireURL(scheme: "https") == "https://Example.COM:8080/Fotos/IMG%200001.JPG?size=1")
        #expect(u.lastComponent == "IMG 0001.JPG")

        let ftp = try RemoteURL(parsing: "ftp://10.0.0.1/pub/a?b#c")
        #expect(ftp.path == "/pub/a?b#c" && ftp.query == nil && ftp.port == nil)
        #expect(ftp.hostKey == "ftp://10.0.0.1:21")
        #expect(try RemoteURL(parsing: "sftp://h").path == "/")
        // SMB's query (`?encrypt=required`) read in one pass too: it used to stay in the path,
        // so a share's encryption asked for without a user name was never asked for.
        let smb = try RemoteURL(parsing: "smb://nas/photos/a#1.jpg?encrypt=required")
        #expect(smb.path == "/photos/a#1.jpg" && smb.query == "encrypt=required")
        #expect(try RemoteURL(parsing: "ftp://h:021/").port == 21)
        #expect(try RemoteURL(parsing: "flashair://card/DCIM/").isFolderPath)
        #expect(try RemoteURL(parsing: "flashair:/DCIM").host == RemoteURL.defaultCardHost)
        // An escaped slash is part of a name, on the wire and in the local name.
        let escaped = try RemoteURL(parsing: "http://h/files/docs%2Freadme.txt")
        #expect(escaped.wireURL() == "http://h/files/docs%2Freadme.txt")
        #expect(escaped.lastComponent == "docs%2Freadme.txt")
    }

    @Test func whatTheOnePassReadingLeavesIsReadInFull() throws {
        let user = try RemoteURL(parsing: "ftp://ann:se%40cret@h:2121/x")
        #expect(user.user == "ann" && user.password == "se@cret" && user.port == 2121)
        #expect(user.redacted == "ftp://ann:***@h:2121/x")
        let v6 = try RemoteURL(parsing: "ftp://[::1]:21/x")
        #expect(v6.host == "::1" && v6.redacted == "ftp://[::1]:21/x" && v6.hostKey == "ftp://::1:21")
        let idn = try RemoteURL(parsing: "http://Bücher.DE/ä.jpg")
        #expect(idn.host == "Bücher.DE" && idn.hostKey == "http://bücher.de:80" && idn.lastComponent == "ä.jpg")
        for bad in [
            "http://h:0/", "http://h:65536/", "http://h:+80/", "http://h:/", "http:///x", "http://a:b:c/",
            "gopher://h/", "http://h/%ZZ", "ftp://h/%00", "http://h x/",
        ] {
            #expect(throws: FerryError.self, "\(bad)") { try RemoteURL(parsing: bad) }
        }
        #expect(throws: FerryError.self) { try RemoteURL(parsing: "http://h:99999999999999999999999/") }
    }

    @Test func anyPortIsWritten() {
        #expect(RemoteURL(scheme: .ftp, host: "h", port: 7).wireURL() == "ftp://h:7/")
        #expect(RemoteURL(scheme: .ftp, host: "h", port: -5).redacted == "ftp://h:-5/")
        #expect(RemoteURL(scheme: .ftp, host: "h", port: Int.max).hostKey == "ftp://h:\(Int.max)")
        #expect(RemoteURL(scheme: .ftp, host: "h", port: Int.min).hostKey == "ftp://h:\(Int.min)")
    }

    /// The two readers agree (issue 27 item 5): for URLs built at random from
    /// the pieces real ones are made of (every scheme, hosts by name, number and
    /// bracket, ports good and bad, user information, escapes good and bad,
    /// queries, fragments, spaces, UTF-8), whatever the one-pass reading takes
    /// reads the same through the full reading alone, and what it leaves (or
    /// refuses) the full reading decides: each URL that parses gives the same
    /// value both ways, and each that fails fails both ways.
    @Test func theOnePassReadingAgreesWithTheFullReading() {
        var random = SeededRandom(seed: 0x5EED_0027)
        let schemes = RemoteURL.Scheme.allCases.map(\.rawValue) + ["HTTP", "Ftp", "webdav", "gopher", ""]
        let hosts = [
            "h", "Example.COM", "10.0.0.1", "[::1]", "[fe80::1%25eth0]", "Bücher.de", "a-b.c", "h x", "", "a:b",
            "card", "[h]", "%41",
        ]
        let ports = ["", ":21", ":8080", ":0", ":65535", ":65536", ":+80", ":", ":021", ":x"]
        let users = ["", "ann@", "ann:se%40cret@", "a%ZZ@", "@", "u:@"]
        let segments = [
            "DCIM", "IMG%200001.JPG", "ä.jpg", "a b", "%2F", "%ZZ", "%00", ".", "..", "x?y", "x#y", "", "100CANON",
            "?q=1", "#top", "%3F",
        ]
        var agreed = 0
        var taken = 0
        for _ in 0..<4000 {
            func pick(_ from: [String]) -> String { from[Int(random.next() % UInt64(from.count))] }
            // Half of them as most URLs are (no user, a plain host and port), so
            // the one-pass reading takes many; the rest from every piece.
            let plain = random.next() % 2 == 0
            var text =
                pick(schemes) + "://" + (plain ? "" : pick(users))
                + (plain ? pick(["h", "Example.COM", "10.0.0.1", "card", "a-b.c"]) : pick(hosts))
                + (plain ? pick(["", ":21", ":8080", ":65535"]) : pick(ports))
            for _ in 0..<Int(random.next() % 4) { text += "/" + pick(segments) }
            if random.next() % 3 == 0 { text += "?" + pick(["size=1", "a=b&c", "", "x#y"]) }
            if random.next() % 5 == 0 { text += "#" + pick(["top", ""]) }
            if RemoteURL.commonParts(text) != nil { taken += 1 }
            let fast = Result { () throws(FerryError) in try RemoteURL(parsing: text, onePass: true) }
            let full = Result { () throws(FerryError) in try RemoteURL(parsing: text, onePass: false) }
            switch (fast, full) {
            case (.success(let a), .success(let b)):
                #expect(a == b, "\(text): one pass \(a.redacted), full \(b.redacted)")
                #expect(a.redacted == b.redacted && a.hostKey == b.hostKey, "\(text)")
            case (.failure(let a), .failure(let b)):
                #expect(a.code == b.code, "\(text): \(a) against \(b)")
            default:
                Issue.record("\(text): one pass \(fast), full \(full)")
            }
            agreed += 1
        }
        // The comparison means something: the one-pass reading took many of them.
        #expect(taken > 1000, "only \(taken) of \(agreed) URLs were read in one pass")
    }
}
