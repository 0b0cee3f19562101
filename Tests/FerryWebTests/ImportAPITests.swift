import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// Import from the page (`/api/import`), previews, photo information and
/// folder deletes, in process on a local folder.
struct ImportAPITests {
    let folder: TempDir
    let cache: TempDir
    var root: String { folder.path + "/root" }
    var imported: String { folder.path + "/imported" }

    init() async throws {
        let folder = try TempDir(prefix: "ferry-import-api")
        self.folder = folder
        cache = try TempDir(prefix: "ferry-import-api-cache")
        let root = folder.path + "/root"
        try FileManager.default.createDirectory(atPath: root + "/DCIM/100FERRY", withIntermediateDirectories: true)
        try await onThread {
            for i in 1...4 {
                try Data(SamplePhotos.jpeg(index: i, width: 320, height: 240)).write(
                    to: URL(fileURLWithPath: root + String(format: "/DCIM/100FERRY/IMG_%04d.JPG", i)))
            }
        }
        try Data("notes".utf8).write(to: URL(fileURLWithPath: root + "/DCIM/NOTES.TXT"))
    }

    func api() throws -> WebAPI {
        var configuration = WebConfiguration(source: try RemoteURL(parsing: root), host: "127.0.0.1", port: 0)
        configuration.cacheDirectory = cache.path
        configuration.importDirectory = imported
        return try WebAPI(configuration: configuration)
    }

    static func post(_ target: String, _ body: Any) -> HTTPRequest {
        APITests.post(target, body: .data(try! JSONSerialization.data(withJSONObject: body)))
    }

    /// Polls `/api/import` until the import is no longer running.
    static func finished(_ api: WebAPI) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let status = APITests.object(await api.handle(APITests.request("/api/import")))
            if status["state"] as? String != "running" { return status }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the import did not finish in 30 s")
        return [:]
    }

    @Test func importsSelectedThenAllNewSharingTheSyncHistory() async throws {
        let api = try api()
        #expect(APITests.object(await api.handle(APITests.request("/api/import")))["state"] as? String == "idle")
        let new = APITests.object(await api.handle(APITests.request("/api/new")))
        #expect(new["count"] as? Int == 5)

        let started = await api.handle(
            Self.post("/api/import", ["paths": ["/DCIM/100FERRY/IMG_0001.JPG", "/DCIM/100FERRY/IMG_0003.JPG"]]))
        #expect(started.status == 202)
        var status = try await Self.finished(api)
        #expect(status["state"] as? String == "done")
        #expect(status["done"] as? Int == 2 && status["total"] as? Int == 2 && status["failed"] as? Int == 0)
        #expect(status["destination"] as? String == "imported")
        for name in ["IMG_0001.JPG", "IMG_0003.JPG"] {
            let copy = imported + "/DCIM/100FERRY/" + name
            #expect(FileManager.default.contentsEqual(atPath: copy, andPath: root + "/DCIM/100FERRY/" + name))
        }
        #expect(!FileManager.default.fileExists(atPath: imported + "/DCIM/100FERRY/IMG_0002.JPG"))
        // The list marks what is imported.
        let listing = APITests.object(await api.handle(APITests.request("/api/list?path=/DCIM/100FERRY")))
        let flags = Dictionary(
            uniqueKeysWithValues: (listing["entries"] as? [[String: Any]] ?? []).map {
                ($0["name"] as? String ?? "", $0["imported"] as? Bool)
            })
        #expect(flags["IMG_0001.JPG"] == true && flags["IMG_0003.JPG"] == true && flags["IMG_0002.JPG"] == false)
        #expect(APITests.object(await api.handle(APITests.request("/api/new")))["count"] as? Int == 3)

        // All new: the other three.
        #expect(await api.handle(Self.post("/api/import", ["layout": "tree"])).status == 202)
        status = try await Self.finished(api)
        #expect(status["state"] as? String == "done" && status["done"] as? Int == 3)
        #expect(
            FileManager.default.contentsEqual(atPath: imported + "/DCIM/NOTES.TXT", andPath: root + "/DCIM/NOTES.TXT"))
        // `ferry sync SOURCE DIR` finds nothing new: one history.
        let engine = try SyncEngine(url: try RemoteURL(parsing: root), directory: imported)
        let summary = try await engine.runPass()
        #expect(summary.imported == 0 && summary.alreadyImported == 5)
    }

    /// "Import all new" counts photos as a person does: a raw file with its JPEG
    /// and its sidecar is one (issue 26), the files stay counted too.
    @Test func aRawAndJPEGPairWithItsSidecarCountsAsOnePhoto() async throws {
        let folder = root + "/DCIM/100FERRY/"
        for name in ["PAIR_0001.CR2", "PAIR_0001.JPG", "PAIR_0001.xmp", "PAIR_0002.CR2.xmp", "PAIR_0002.CR2"] {
            try Data(name.utf8).write(to: URL(fileURLWithPath: folder + name))
        }
        let new = APITests.object(await try api().handle(APITests.request("/api/new")))
        // Files: 4 photos and the notes from init, plus these 5.
        #expect(new["count"] as? Int == 10, "\(new)")
        #expect(new["items"] as? Int == 7, "\(new)")
    }

    @Test func importRefusesBadRequestsAndCanDeleteAfter() async throws {
        let api = try api()
        #expect(await api.handle(Self.post("/api/import", ["layout": "flat-ish"])).status == 400)
        #expect(await api.handle(Self.post("/api/import", ["paths": [String]()])).status == 400)
        #expect(await api.handle(Self.post("/api/import", ["paths": ["/../outside"]])).status == 400)
        #expect(await api.handle(APITests.request("/api/import-cancel")).status == 405)
        #expect(await api.handle(Self.post("/api/import", ["restart": true])).status == 409)
        let started = await api.handle(
            Self.post(
                "/api/import", ["paths": ["/DCIM/100FERRY/IMG_0002.JPG"], "layout": "date", "deleteAfter": true]))
        #expect(started.status == 202)
        let status = try await Self.finished(api)
        #expect(status["state"] as? String == "done" && status["deleted"] as? Int == 1)
        #expect(!FileManager.default.fileExists(atPath: root + "/DCIM/100FERRY/IMG_0002.JPG"))
        let days = try FileManager.default.contentsOfDirectory(atPath: imported).filter { $0.hasPrefix("20") }
        #expect(days.count == 1)
        #expect(FileManager.default.fileExists(atPath: imported + "/" + (days.first ?? "") + "/IMG_0002.JPG"))
        // Only that one left the source.
        #expect(FileManager.default.fileExists(atPath: root + "/DCIM/100FERRY/IMG_0001.JPG"))
        // Restart repeats the last import: nothing is left to do.
        #expect(await api.handle(Self.post("/api/import", ["restart": true])).status == 202)
        let again = try await Self.finished(api)
        #expect(
            again["state"] as? String == "done" && again["total"] as? Int == 0 && again["deleteAfter"] as? Bool == true)
    }

    /// An import killed in its delete phase left files imported and still on the
    /// source; after a restart, the next import with delete-after deletes them too
    /// (their copies checked against the history, as `ferry sync --delete-after` does).
    @Test func deleteAfterFinishesTheDeletesOfAnEarlierImport() async throws {
        let first = try api()
        let earlier = ["/DCIM/100FERRY/IMG_0001.JPG", "/DCIM/100FERRY/IMG_0003.JPG"]
        #expect(await first.handle(Self.post("/api/import", ["paths": earlier])).status == 202)
        #expect(try await Self.finished(first)["state"] as? String == "done")
        let fm = FileManager.default
        #expect(fm.fileExists(atPath: root + "/DCIM/100FERRY/IMG_0001.JPG"))

        let restarted = try api()
        let started = await restarted.handle(
            Self.post("/api/import", ["paths": earlier + ["/DCIM/100FERRY/IMG_0004.JPG"], "deleteAfter": true]))
        #expect(started.status == 202)
        let status = try await Self.finished(restarted)
        #expect(status["state"] as? String == "done", "\(status)")
        #expect(status["total"] as? Int == 1 && status["done"] as? Int == 1 && status["deleted"] as? Int == 3)
        for name in ["IMG_0001.JPG", "IMG_0003.JPG", "IMG_0004.JPG"] {
            #expect(!fm.fileExists(atPath: root + "/DCIM/100FERRY/" + name), "\(name) is deleted from the source")
            #expect(fm.fileExists(atPath: imported + "/DCIM/100FERRY/" + name), "\(name) is kept here")
        }
        #expect(fm.fileExists(atPath: root + "/DCIM/100FERRY/IMG_0002.JPG"), "what was not asked for stays")

        // A copy changed since it was written is no reason for a delete: it stays on the source.
        #expect(
            await restarted.handle(Self.post("/api/import", ["paths": ["/DCIM/100FERRY/IMG_0002.JPG"]])).status == 202)
        #expect(try await Self.finished(restarted)["state"] as? String == "done")
        try Data("changed".utf8).write(to: URL(fileURLWithPath: imported + "/DCIM/100FERRY/IMG_0002.JPG"))
        let again = try api()
        #expect(
            await again.handle(
                Self.post("/api/import", ["paths": ["/DCIM/100FERRY/IMG_0002.JPG"], "deleteAfter": true])
            ).status == 202)
        let kept = try await Self.finished(again)
        #expect(kept["deleted"] as? Int == 0, "\(kept)")
        #expect(fm.fileExists(atPath: root + "/DCIM/100FERRY/IMG_0002.JPG"))
    }

    /// Restart after a restart of the server: the last request is kept beside the history.
    @Test func restartWorksAfterTheServerRestarts() async throws {
        let first = try api()
        #expect(await first.handle(Self.post("/api/import", ["restart": true])).status == 409)
        let paths = ["/DCIM/100FERRY/IMG_0002.JPG"]
        #expect(await first.handle(Self.post("/api/import", ["paths": paths, "layout": "date"])).status == 202)
        #expect(try await Self.finished(first)["state"] as? String == "done")
        let saved = imported + "/" + ImportJob.requestFileName
        #expect(FileManager.default.fileExists(atPath: saved))

        let restarted = try api()
        let answer = await restarted.handle(Self.post("/api/import", ["restart": true]))
        #expect(answer.status == 202, "Restart after a server restart: \(answer.status)")
        let status = try await Self.finished(restarted)
        #expect(status["state"] as? String == "done" && status["layout"] as? String == "date", "\(status)")
        #expect(status["total"] as? Int == 0, "the same files: imported already")
        let files = restarted.importJob.lastRequest?.files ?? []
        #expect(files.count == 1 && files.first?.hasSuffix("/DCIM/100FERRY/IMG_0002.JPG") == true, "\(files)")
        // A damaged file is no request: Restart says there is none.
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: saved))
        #expect(await (try api()).handle(Self.post("/api/import", ["restart": true])).status == 409)
    }

    @Test func previewsAreFittedAndInfoIsRead() async throws {
        let api = try api()
        let response = await api.handle(
            APITests.request("/api/preview?path=/DCIM/100FERRY/IMG_0001.JPG&w=200&h=100"))
        #expect(response.status == 200)
        #expect(response.headers["X-Image-Width"] == "320" && response.headers["X-Image-Height"] == "240")
        guard case .data(let data) = response.body else {
            Issue.record("no preview bytes")
            return
        }
        let decoded = try JPEGCodec.decode(data: data)
        #expect(decoded.image.width == 256 && decoded.image.height == 192)
        // Cached: the same bytes again.
        let again = await api.handle(APITests.request("/api/preview?path=/DCIM/100FERRY/IMG_0001.JPG&w=200&h=100"))
        #expect(again.body == response.body)
        #expect(await api.handle(APITests.request("/api/preview?path=/DCIM/NOTES.TXT")).status == 415)

        let info = APITests.object(await api.handle(APITests.request("/api/info?path=/DCIM/100FERRY/IMG_0001.JPG")))
        #expect(info["width"] as? Int == 320 && info["height"] as? Int == 240)
        #expect(info["camera"] as? String == "Ferry demo")
        #expect((info["taken"] as? String ?? "").count == 19)
        #expect(info["name"] as? String == "IMG_0001.JPG")
    }

    @Test func photoInfoReadsExposureTags() {
        // A little-endian Exif block by hand: IFD0 with Make, Model and the Exif IFD
        // pointer; the Exif IFD with exposure, aperture, ISO, date, focal length, lens.
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0]
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }
        let make = Array("Canon\0".utf8)
        let model = Array("Canon EOS R6\0".utf8)
        let date = Array("2024:06:01 12:34:56\0".utf8)
        let lens = Array("RF24-105mm F4 L\0".utf8)
        let ifd0At = 8
        let exifAt = ifd0At + 2 + 3 * 12 + 4
        var dataAt = exifAt + 2 + 6 * 12 + 4
        var data: [UInt8] = []
        func out(_ bytes: [UInt8]) -> Int {
            let at = dataAt + data.count
            data += bytes
            return at
        }
        var ifd0 = le16(3)
        ifd0 += le16(0x010F) + le16(2) + le32(make.count) + le32(out(make))
        ifd0 += le16(0x0110) + le16(2) + le32(model.count) + le32(out(model))
        ifd0 += le16(0x8769) + le16(4) + le32(1) + le32(exifAt)
        ifd0 += le32(0)
        var exif = le16(6)
        exif += le16(0x829A) + le16(5) + le32(1) + le32(out(le32(1) + le32(250)))
        exif += le16(0x829D) + le16(5) + le32(1) + le32(out(le32(28) + le32(10)))
        exif += le16(0x8827) + le16(3) + le32(1) + le16(800) + le16(0)
        exif += le16(0x9003) + le16(2) + le32(date.count) + le32(out(date))
        exif += le16(0x920A) + le16(5) + le32(1) + le32(out(le32(50) + le32(1)))
        exif += le16(0xA434) + le16(2) + le32(lens.count) + le32(out(lens))
        exif += le32(0)
        tiff += ifd0 + exif
        dataAt = tiff.count
        tiff += data
        let payload = Array("Exif\0\0".utf8) + tiff
        let app1: [UInt8] =
            [0xFF, 0xE1] + [UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        let sof: [UInt8] = [0xFF, 0xC0, 0, 17, 8, 0x0F, 0xA0, 0x17, 0x70, 3] + [UInt8](repeating: 0, count: 9)
        let info = PhotoInfo.read(bytes: [0xFF, 0xD8] + app1 + sof + [0xFF, 0xD9])
        #expect(info.camera == "Canon EOS R6")
        #expect(info.lens == "RF24-105mm F4 L")
        #expect(info.shutter == "1/250 s")
        #expect(info.aperture == "f/2.8")
        #expect(info.iso == 800)
        #expect(info.focalLength == "50 mm")
        #expect(info.taken == "2024-06-01 12:34:56")
        #expect(info.width == 6000 && info.height == 4000)
    }

    @Test func foldersAreDeletedWithTheirContentsOnlyWhenAsked() async throws {
        let api = try api()
        let refused = await api.handle(Self.post("/api/delete", ["path": "/DCIM"]))
        #expect(refused.status == 409)
        let body = APITests.object(refused)
        #expect(body["notEmpty"] as? Bool == true && body["files"] as? Int == 5 && body["folders"] as? Int == 1)
        #expect(FileManager.default.fileExists(atPath: root + "/DCIM/100FERRY/IMG_0001.JPG"))
        let done = await api.handle(Self.post("/api/delete", ["path": "/DCIM", "recursive": true]))
        #expect(done.status == 200)
        #expect(APITests.object(done)["files"] as? Int == 5)
        #expect(!FileManager.default.fileExists(atPath: root + "/DCIM"))
    }
}

/// Raw files: the embedded JPEG for thumbnails and the viewer.
struct RawPreviewTests {
    /// A TIFF-based raw file as cameras write them: IFD0 pointing at a JPEG preview, then the "sensor data".
    static func tiffRaw(embedding jpeg: [UInt8]) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }
        let jpegAt = 8 + 2 + 3 * 12 + 4
        var out: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + le32(8) + le16(3)
        out += le16(0x0103) + le16(3) + le32(1) + le16(6) + le16(0)
        out += le16(0x0201) + le16(4) + le32(1) + le32(jpegAt)
        out += le16(0x0202) + le16(4) + le32(1) + le32(jpeg.count)
        out += le32(0)
        return out + jpeg + [UInt8](repeating: 0x55, count: 5000)
    }

    @Test func rawFilesShowTheirEmbeddedJPEG() async throws {
        let folder = try TempDir(prefix: "ferry-raw")
        let jpeg = try await onThread { try SamplePhotos.jpeg(index: 2, width: 640, height: 480) }
        try Data(Self.tiffRaw(embedding: jpeg)).write(to: URL(fileURLWithPath: folder.file("IMG_0001.CR2")))
        var raf = Array("FUJIFILMCCD-RAW 0201FF129502".utf8) + [UInt8](repeating: 0, count: 100 - 28)
        raf.replaceSubrange(
            84..<92, with: [0, 0, 0, 100] + withUnsafeBytes(of: UInt32(jpeg.count).bigEndian, Array.init))
        try Data(raf + jpeg).write(to: URL(fileURLWithPath: folder.file("DSCF0001.RAF")))
        try Data([0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0, 0, 0] + [UInt8](repeating: 1, count: 3000)).write(
            to: URL(fileURLWithPath: folder.file("EMPTY.NEF")))
        #expect(RawPreview.locate(in: Self.tiffRaw(embedding: jpeg), fileSize: jpeg.count + 5100)?.length == jpeg.count)

        var configuration = WebConfiguration(source: try RemoteURL(parsing: folder.path))
        configuration.cacheDirectory = folder.path + "/.cache"
        let api = try WebAPI(configuration: configuration)
        let listing = APITests.object(await api.handle(APITests.request("/api/list?path=/")))
        let cr2 = (listing["entries"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "IMG_0001.CR2" }
        #expect(
            cr2?["thumbnail"] as? Bool == true && cr2?["image"] as? Bool == true && cr2?["media"] as? String == "raw")
        for name in ["IMG_0001.CR2", "DSCF0001.RAF"] {
            let thumb = await api.handle(APITests.request("/api/thumb?path=/\(name)"))
            #expect(thumb.status == 200, "\(name)")
            let preview = await api.handle(APITests.request("/api/preview?path=/\(name)&w=400&h=300"))
            #expect(preview.status == 200, "\(name)")
            #expect(preview.headers["X-Image-Width"] == "640", "\(name)")
            guard case .data(let data) = preview.body else { continue }
            #expect(try JPEGCodec.decode(data: data).image.width == 512, "\(name)")
        }
        #expect(await api.handle(APITests.request("/api/thumb?path=/EMPTY.NEF")).status == 422)
    }

    @Test(.enabled(if: NginxServer.isAvailable)) func remoteRawFilesAreReadByRange() async throws {
        let www = try TempDir(prefix: "ferry-raw-www")
        let jpeg = try await onThread { try SamplePhotos.jpeg(index: 3, width: 640, height: 480) }
        // A 3 MB raw file: the preview near the start, then "sensor data".
        let raw = Self.tiffRaw(embedding: jpeg) + [UInt8](repeating: 0x33, count: 3_000_000)
        try Data(raw).write(to: URL(fileURLWithPath: www.file("IMG_0009.NEF")))
        let nginx = try NginxServer(root: www.path, slowRate: 50_000_000)
        let cache = try TempDir(prefix: "ferry-raw-cache")
        var configuration = WebConfiguration(source: try RemoteURL(parsing: nginx.url("/")))
        configuration.cacheDirectory = cache.path
        let api = try WebAPI(configuration: configuration)
        let thumb = await api.handle(APITests.request("/api/thumb?path=/IMG_0009.NEF&v=1"))
        #expect(thumb.status == 200)
        let preview = await api.handle(APITests.request("/api/preview?path=/IMG_0009.NEF&w=400&h=300&v=1"))
        #expect(preview.status == 200 && preview.headers["X-Image-Width"] == "640")
        // Only ranges of it travelled: never the whole file.
        let requests = nginx.accessLog.filter { $0.contains("/IMG_0009.NEF") && $0.hasPrefix("GET") }
        let sent = requests.compactMap { line in line.split(separator: " ").first { $0.hasPrefix("sent=") } }
            .compactMap { Int($0.dropFirst(5)) }.reduce(0, +)
        #expect(!requests.isEmpty && requests.allSatisfy { $0.contains("range=\"bytes=") }, "\(requests)")
        #expect(sent < 2 * (1 << 20) + jpeg.count, "\(sent) bytes sent: \(requests)")
    }
}

/// Films: a video tile in the list, played inline by the viewer's <video> with Range.
struct VideoTests {
    @Test func videosAreServedInlineWithTheirType() async throws {
        let folder = try TempDir(prefix: "ferry-video")
        try Data(repeating: 7, count: 10_000).write(to: URL(fileURLWithPath: folder.file("CLIP0001.MP4")))
        try Data(repeating: 8, count: 10_000).write(to: URL(fileURLWithPath: folder.file("clip.mov")))
        var configuration = WebConfiguration(source: try RemoteURL(parsing: folder.path))
        configuration.cacheDirectory = folder.path + "/.cache"
        let api = try WebAPI(configuration: configuration)
        let listing = APITests.object(await api.handle(APITests.request("/api/list?path=/")))
        let media = Dictionary(
            uniqueKeysWithValues: (listing["entries"] as? [[String: Any]] ?? []).map {
                ($0["name"] as? String ?? "", $0["media"] as? String)
            })
        #expect(media["CLIP0001.MP4"] == "video" && media["clip.mov"] == "video")
        let mp4 = await api.handle(APITests.request("/api/file?path=/CLIP0001.MP4"))
        #expect(mp4.body == .file(path: folder.file("CLIP0001.MP4"), contentType: "video/mp4"))
        #expect(mp4.headers["Content-Disposition"]?.hasPrefix("inline") == true)
        let mov = await api.handle(APITests.request("/api/file?path=/clip.mov"))
        #expect(mov.body == .file(path: folder.file("clip.mov"), contentType: "video/quicktime"))
        // A download is still an attachment.
        let download = await api.handle(APITests.request("/api/file?path=/clip.mov&download=1"))
        #expect(download.headers["Content-Disposition"]?.hasPrefix("attachment") == true)
    }
}
