import Foundation
import Testing

@testable import FerryKit

/// `WebDAVMultistatus` on replies as real servers write them.
struct WebDAVMultistatusTests {
    func parse(_ text: String) throws -> WebDAVMultistatus {
        try WebDAVMultistatus.parse(Array(text.utf8))
    }

    /// Apache mod_dav_fs: `D:` plus `lp1:`/`lp2:` prefixes for the live
    /// properties, a folder's href with `/`, escapes in names.
    @Test func apacheModDAV() throws {
        let reply = try parse(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <D:multistatus xmlns:D="DAV:" xmlns:ns0="DAV:">
            <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
            <D:href>/dav/</D:href>
            <D:propstat>
            <D:prop>
            <lp1:resourcetype><D:collection/></lp1:resourcetype>
            <lp1:getlastmodified>Tue, 01 Dec 2026 10:00:00 GMT</lp1:getlastmodified>
            <lp1:getetag>"1000-5f0a"</lp1:getetag>
            </D:prop>
            <D:status>HTTP/1.1 200 OK</D:status>
            </D:propstat>
            <D:propstat>
            <D:prop><ns0:getcontentlength/></D:prop>
            <D:status>HTTP/1.1 404 Not Found</D:status>
            </D:propstat>
            </D:response>
            <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
            <D:href>/dav/IMG%20%231%20%25%20%C3%A9.JPG</D:href>
            <D:propstat>
            <D:prop>
            <lp1:resourcetype/>
            <lp1:getcontentlength>123456</lp1:getcontentlength>
            <lp1:getlastmodified>Wed, 02 Dec 2026 00:19:30 GMT</lp1:getlastmodified>
            <lp1:getetag>"1e240-5f0b"</lp1:getetag>
            </D:prop>
            <D:status>HTTP/1.1 200 OK</D:status>
            </D:propstat>
            </D:response>
            </D:multistatus>
            """)
        #expect(reply.responses.count == 2)
        let folder = reply.responses[0]
        #expect(folder.path == "/dav/" && folder.isCollection && folder.size == nil && folder.etag == "\"1000-5f0a\"")
        let file = reply.responses[1]
        #expect(file.path == "/dav/IMG #1 % é.JPG" && !file.isCollection && file.size == 123456)
        #expect(file.modified == Date(timeIntervalSince1970: 1_796_170_770))
        #expect(file.etag == "\"1e240-5f0b\"")
    }

    /// nginx dav_ext: the `D:` prefix throughout, full escapes, no ETag.
    @Test func nginxDavExt() throws {
        let reply = try parse(
            """
            <?xml version="1.0" encoding="utf-8" ?>
            <D:multistatus xmlns:D="DAV:">
            <D:response>
            <D:href>/photos/</D:href>
            <D:propstat><D:prop><D:displayname>photos</D:displayname>
            <D:getlastmodified>Wed, 02 Dec 2026 00:19:30 GMT</D:getlastmodified>
            <D:resourcetype><D:collection/></D:resourcetype><D:lockdiscovery/><D:supportedlock></D:supportedlock>
            </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>
            </D:response>
            <D:response>
            <D:href>/photos/%E6%97%A5%E6%9C%AC.jpg</D:href>
            <D:propstat><D:prop><D:displayname>日本.jpg</D:displayname>
            <D:getcontentlength>42</D:getcontentlength>
            <D:getlastmodified>Wed, 02 Dec 2026 00:19:30 GMT</D:getlastmodified>
            <D:resourcetype></D:resourcetype>
            </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>
            </D:response>
            </D:multistatus>
            """)
        #expect(reply.responses.map(\.path) == ["/photos/", "/photos/日本.jpg"])
        #expect(reply.responses[1].size == 42 && reply.responses[1].etag == nil)
    }

    /// Nextcloud: `d:` prefix, `oc:`/`nc:` properties, a propstat of 404s, and
    /// hrefs under remote.php.
    @Test func nextcloud() throws {
        let reply = try parse(
            """
            <?xml version="1.0"?>
            <d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
             <d:response>
              <d:href>/remote.php/dav/files/anna/Photos/</d:href>
              <d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype>
               <d:getlastmodified>Mon, 30 Nov 2026 08:00:00 GMT</d:getlastmodified><d:getetag>&quot;65a1&quot;</d:getetag>
              </d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>
              <d:propstat><d:prop><d:getcontentlength/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>
             </d:response>
             <d:response>
              <d:href>/remote.php/dav/files/anna/Photos/Birds%20%26%20Bees.jpg</d:href>
              <d:propstat><d:prop><d:resourcetype/><d:getcontentlength>2048</d:getcontentlength>
               <d:getetag>&quot;e3b0&quot;</d:getetag><oc:fileid>77</oc:fileid></d:prop>
               <d:status>HTTP/1.1 200 OK</d:status></d:propstat>
              <d:propstat><d:prop><d:getlastmodified/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>
             </d:response>
            </d:multistatus>
            """)
        #expect(reply.responses[0].isCollection && reply.responses[0].etag == "\"65a1\"")
        let file = reply.responses[1]
        #expect(file.path == "/remote.php/dav/files/anna/Photos/Birds & Bees.jpg")
        #expect(file.size == 2048 && file.modified == nil && file.etag == "\"e3b0\"")
    }

    /// Full URLs as hrefs (rclone behind a proxy, some NAS apps), a default
    /// namespace instead of a prefix, and a size in a 404 propstat left out.
    @Test func fullURLsAndDefaultNamespace() throws {
        let reply = try parse(
            """
            <multistatus xmlns="DAV:">
              <response>
                <href>http://nas.local:5005/share/a%20b/</href>
                <propstat><prop><resourcetype><collection/></resourcetype></prop><status>HTTP/1.1 200 OK</status></propstat>
              </response>
              <response>
                <href>https://nas.local/share/a%20b/c.txt</href>
                <propstat><prop><getcontentlength>7</getcontentlength></prop><status>HTTP/1.1 200 OK</status></propstat>
                <propstat><prop><getcontentlength>99</getcontentlength></prop><status>HTTP/1.1 404 Not Found</status></propstat>
              </response>
              <response><href>relative.txt</href></response>
            </multistatus>
            """)
        #expect(reply.responses.map(\.path) == ["/share/a b/", "/share/a b/c.txt", "/relative.txt"])
        #expect(reply.responses[0].isCollection && reply.responses[1].size == 7)
    }

    /// A foreign element named like a DAV one is not taken for it.
    @Test func otherNamespacesAreNotDAV() throws {
        let reply = try parse(
            """
            <D:multistatus xmlns:D="DAV:" xmlns:X="urn:x"><D:response><D:href>/f</D:href>
            <D:propstat><D:prop><X:getcontentlength>5</X:getcontentlength><X:resourcetype><D:collection/></X:resourcetype></D:prop>
            <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>
            """)
        #expect(reply.responses.count == 1 && reply.responses[0].size == nil && !reply.responses[0].isCollection)
    }

    /// A DELETE of a folder that failed for some files: a status per href.
    @Test func partialDeleteFailures() throws {
        let reply = try parse(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <D:multistatus xmlns:D="DAV:">
            <D:response><D:href>/dav/a/locked.jpg</D:href><D:status>HTTP/1.1 423 Locked</D:status>
            <D:error><D:lock-token-submitted/></D:error></D:response>
            <D:response><D:href>/dav/a/ro.jpg</D:href><D:href>/dav/a/ro2.jpg</D:href><D:status>HTTP/1.1 403 Forbidden</D:status>
            <D:responsedescription>read-only</D:responsedescription></D:response>
            </D:multistatus>
            """)
        #expect(reply.responses.map(\.path) == ["/dav/a/locked.jpg", "/dav/a/ro.jpg", "/dav/a/ro2.jpg"])
        #expect(reply.responses[0].status == 423 && reply.responses[0].statusText == "Locked: lock-token-submitted")
        #expect(reply.responses[2].status == 403 && reply.responses[2].statusText == "Forbidden: read-only")
    }

    @Test func notMultistatus() throws {
        #expect(throws: FerryError.self) { try parse("<html><body>It works!</body></html>") }
        #expect(throws: FerryError.self) { try parse("not xml at all") }
        #expect(throws: FerryError.self) { try WebDAVMultistatus.parse([]) }
        do {
            _ = try parse("<?xml version=\"1.0\"?><D:error xmlns:D=\"DAV:\"/>")
        } catch let error as FerryError {
            #expect(error.code == .badListing)
        }
    }

    /// External entities are never fetched or expanded (no XXE).
    @Test func noExternalEntities() throws {
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-xxe-\(getpid())").path
        try "SECRET".write(toFile: secret, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: secret) }
        let reply = try? parse(
            """
            <?xml version="1.0"?>
            <!DOCTYPE m [<!ENTITY x SYSTEM "file://\(secret)">]>
            <D:multistatus xmlns:D="DAV:"><D:response><D:href>/a&x;</D:href></D:response></D:multistatus>
            """)
        #expect(reply?.responses.contains { $0.path.contains("SECRET") } != true)
    }

    /// Nextcloud's and ownCloud's error bodies, and the DAV conditions of others.
    @Test func errorText() {
        let nextcloud = """
            <?xml version="1.0" encoding="utf-8"?>
            <d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns">
              <s:exception>Sabre\\DAV\\Exception\\InsufficientStorage</s:exception>
              <s:message>Insufficient space in /anna/files, 1024 required, 0 available</s:message>
            </d:error>
            """
        #expect(
            WebDAVMultistatus.errorText(Array(nextcloud.utf8))
                == "Insufficient space in /anna/files, 1024 required, 0 available")
        let condition =
            "<D:error xmlns:D=\"DAV:\"><D:lock-token-submitted><D:href>/a</D:href></D:lock-token-submitted></D:error>"
        #expect(WebDAVMultistatus.errorText(Array(condition.utf8)) == "lock-token-submitted")
        #expect(WebDAVMultistatus.errorText(Array("<html><p>Forbidden</p></html>".utf8)) == nil)
    }

    @Test func hrefs() {
        #expect(WebDAVMultistatus.decodeHref(" /a%2Fb ") == "/a/b")
        #expect(WebDAVMultistatus.decodeHref("http://h/x?y=1") == "/x")
        #expect(WebDAVMultistatus.decodeHref("http://h") == "/")
        #expect(WebDAVMultistatus.decodeHref("/bad%zz") == nil)
        #expect(WebDAVMultistatus.statusLine("HTTP/1.1 507 Insufficient Storage")! == (507, "Insufficient Storage"))
    }

    @Test func urls() throws {
        let dav = try RemoteURL(parsing: "dav://u@nas:8080/remote.php/dav/files/u/")
        #expect(dav.scheme == .dav && dav.port == 8080 && dav.path == "/remote.php/dav/files/u/")
        #expect(try RemoteURL(parsing: "webdav://nas/a").scheme == .dav)
        #expect(try RemoteURL(parsing: "WebDAVs://nas/a").scheme == .davs)
        #expect(try RemoteURL(parsing: "davs://nas/a%20b").path == "/a b")
        #expect(try RemoteURL(parsing: "davs://nas/").defaultPort == 443)
        let fs = WebDAVFileSystem(url: try RemoteURL(parsing: "davs://nas/x"))
        #expect(fs.target("/a b#1").wireURL(scheme: fs.wireScheme) == "https://nas/a%20b%231")
    }
}
