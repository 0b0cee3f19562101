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
}
