import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// `ferry serve` on a `dav://` source (nginx dav_ext): the folder list, a
/// thumbnail made from the photo's first bytes, and the writes the page offers.
@Suite(.serialized)
struct WebDAVSourceTests {
    @Test func listsAndMakesThumbnails() async throws {
        let server = try NginxDAVServer()
        defer { server.stop() }
        let cache = try TempDir(prefix: "dav-serve-cache")
        try FileManager.default.createDirectory(
            atPath: server.local("DCIM/100FERRY"), withIntermediateDirectories: true)
        try await onThread {
            try Data(SamplePhotos.jpeg(index: 3, width: 320, height: 240)).write(
                to: URL(fileURLWithPath: server.local("DCIM/100FERRY/IMG 0003 #1.JPG")))
        }
        var configuration = WebConfiguration(source: try RemoteURL(parsing: server.base), host: "127.0.0.1", port: 0)
        configuration.cacheDirectory = cache.path
        let api = try WebAPI(configuration: configuration)

        let list = await api.handle(APITests.request("/api/list?path=/DCIM/100FERRY"))
        #expect(list.status == 200)
        guard case .data(let body) = list.body else {
            Issue.record("no list body")
            return
        }
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains("IMG 0003 #1.JPG"), "\(text)")

        let thumb = await api.handle(APITests.request("/api/thumb?path=/DCIM/100FERRY/IMG%200003%20%231.JPG"))
        #expect(thumb.status == 200)
        guard case .data(let data) = thumb.body else {
            Issue.record("no thumbnail bytes")
            return
        }
        let width = try JPEGCodec.decode(data: data).image.width
        #expect(width > 0 && width <= 256, "\(width)")
        // The page may write to a WebDAV source.
        #expect(WebSource(fs: try Ferry.fileSystem(for: try RemoteURL(parsing: server.base))).capabilities.upload)
    }
}
