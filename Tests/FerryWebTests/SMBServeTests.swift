import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// `ferry serve` on an SMB share (Samba's smbd started by the test): the
/// folder's list and a photo's thumbnail, read over SMB.
struct SMBServeTests {
    @Test func listsAndMakesThumbnailsOverSMB() async throws {
        let server = try await SambaTestServer()
        defer { server.stop() }
        let cache = try TempDir(prefix: "ferry-smb-serve")
        let folder = server.local("user", "DCIM/100FERRY")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try await onThread {
            try Data(SamplePhotos.jpeg(index: 3, width: 320, height: 240)).write(
                to: URL(fileURLWithPath: folder + "/IMG 0003 #1.JPG"))
        }
        var configuration = WebConfiguration(
            source: try RemoteURL(parsing: server.url("user")), host: "127.0.0.1", port: 0)
        configuration.connectionOptions.credentials = Credentials(user: server.user, password: server.password)
        configuration.cacheDirectory = cache.path
        let api = try WebAPI(configuration: configuration)
        let list = await api.handle(APITests.request("/api/list?path=/DCIM/100FERRY"))
        #expect(list.status == 200)
        let entries = APITests.object(list)["entries"] as? [[String: Any]] ?? []
        #expect(entries.map { $0["name"] as? String } == ["IMG 0003 #1.JPG"], "\(APITests.object(list))")
        let thumb = await api.handle(
            APITests.request("/api/thumb?path=/DCIM/100FERRY/IMG%200003%20%231.JPG"))
        #expect(thumb.status == 200)
        guard case .data(let data) = thumb.body else {
            Issue.record("no thumbnail bytes")
            return
        }
        let decoded = try JPEGCodec.decode(data: data)
        // The photo's own Exif thumbnail (its first bytes, by a range read), or one made from the photo.
        #expect(
            decoded.image.width > 0 && decoded.image.width <= 320
                && decoded.image.width * 3 == decoded.image.height * 4,
            "\(decoded.image.width)x\(decoded.image.height)")
        #expect(
            !(String(
                data: (try? JSONSerialization.data(withJSONObject: APITests.object(list))) ?? Data(), encoding: .utf8)
                ?? "").contains(server.password))
    }
}
