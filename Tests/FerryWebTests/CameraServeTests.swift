import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// `ferry serve camera:///?port=disk:FOLDER` (libgphoto2's Directory Browse
/// camera): the folder list, a photo's thumbnail from the camera's Exif block
/// (not made from the whole photo), and the photo itself.
@Suite(.serialized)
struct CameraServeTests {
    @Test func browsesTheCameraAndShowsItsThumbnails() async throws {
        let folder = try TempDir(prefix: "camera-serve")
        let cache = try TempDir(prefix: "camera-serve-cache")
        try FileManager.default.createDirectory(atPath: folder.file("DCIM/100CANON"), withIntermediateDirectories: true)
        let photo = try await onThread { try SamplePhotos.jpeg(index: 4, width: 1600, height: 1200) }
        try Data(photo).write(to: URL(fileURLWithPath: folder.file("DCIM/100CANON/IMG_0004.JPG")))
        let source = try RemoteURL(parsing: "camera:///?port=disk:\(folder.path)")
        var configuration = WebConfiguration(source: source, host: "127.0.0.1", port: 0)
        configuration.cacheDirectory = cache.path
        let api = try WebAPI(configuration: configuration)

        let list = await api.handle(APITests.request("/api/list?path=/DCIM/100CANON"))
        #expect(list.status == 200)
        guard case .data(let body) = list.body else {
            Issue.record("no list body")
            return
        }
        #expect(String(decoding: body, as: UTF8.self).contains("IMG_0004.JPG"))

        let thumb = await api.handle(APITests.request("/api/thumb?path=/DCIM/100CANON/IMG_0004.JPG"))
        #expect(thumb.status == 200)
        guard case .data(let data) = thumb.body else {
            Issue.record("no thumbnail bytes")
            return
        }
        // The photo's own 160x120 Exif thumbnail; one made from the photo would be 256 wide.
        let image = try JPEGCodec.decode(data: data).image
        #expect(image.width == 160 && image.height == 120, "\(image.width)x\(image.height)")

        let file = await api.handle(APITests.request("/api/file?path=/DCIM/100CANON/IMG_0004.JPG"))
        #expect(file.status == 200)
        guard case .file(let local, _) = file.body else {
            Issue.record("no file body: \(file.body)")
            return
        }
        #expect(FileManager.default.contents(atPath: local) == Data(photo))
        // The camera is read-only from the page.
        #expect(!WebSource(fs: try Ferry.fileSystem(for: source)).capabilities.delete)
    }
}
