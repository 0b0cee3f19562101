import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// What "Import all new" takes (issue 28 item 12): this folder or the whole
/// source, photos and videos by default on the page, all files, or the
/// extensions named; the rule alone, then through `/api/new` and `/api/import`.
struct ImportScopeTests {
    @Test func kindsAndFolders() throws {
        let media = ImportScope(folder: "/DCIM/100CANON", kinds: .media)
        #expect(media.includes("/DCIM/100CANON/IMG_0001.JPG"))
        #expect(media.includes("/DCIM/100CANON/IMG_0001.CR3"))
        #expect(media.includes("/DCIM/100CANON/MVI_0002.MP4"))
        #expect(media.includes("/DCIM/100CANON/IMG_0001.xmp"), "a sidecar travels with its photo")
        #expect(media.includes("/DCIM/100CANON/sub/IMG_0003.heic"), "subfolders are in the folder")
        #expect(!media.includes("/DCIM/100CANON/NOTES.TXT"))
        #expect(!media.includes("/DCIM/100CANON.JPG"), "a name that only starts like the folder is outside it")
        #expect(!media.includes("/DCIM/101CANON/IMG_0001.JPG"))
        #expect(!media.includes("/MISC/AUTPRINT.MRK"))
        let all = ImportScope(folder: nil, kinds: .all)
        #expect(all.includes("/DCIM/NOTES.TXT") && all.includes("/x"))
        let only = ImportScope(folder: "/", kinds: .extensions(["cr3"]))
        #expect(only.includes("/DCIM/IMG_0001.CR3") && !only.includes("/DCIM/IMG_0001.JPG"))
    }

    @Test func kindsAsTheAPISpellsThem() throws {
        #expect(try ImportScope.kinds(parsing: nil) == .all, "absent: every file, as before kinds existed")
        #expect(try ImportScope.kinds(parsing: "media") == .media)
        #expect(try ImportScope.kinds(parsing: " ALL ") == .all)
        #expect(try ImportScope.kinds(parsing: "jpg, CR2 .mov") == .extensions(["jpg", "cr2", "mov"]))
        #expect(throws: APIRefusal.self) { try ImportScope.kinds(parsing: " , . ") }
        #expect(ImportScope(folder: nil, kinds: .extensions(["mov", "jpg"])).kindsText == "jpg,mov")
    }

    /// A request saved before scopes existed (Restart after an upgrade) takes
    /// what it took then: every new file of the whole source.
    @Test func anOldRequestFileStillRestartsAsBefore() throws {
        let old = Data(#"{"layout":"tree","deleteAfter":false}"#.utf8)
        let request = try JSONDecoder().decode(ImportJob.Request.self, from: old)
        #expect(request.scope == .everything && request.files == nil)
        #expect(request.takes("/DCIM/NOTES.TXT"))
        let scoped = ImportJob.Request(
            files: nil, scope: ImportScope(folder: "/DCIM", kinds: .media), layout: .date, deleteAfter: true)
        let again = try JSONDecoder().decode(ImportJob.Request.self, from: try JSONEncoder().encode(scoped))
        #expect(again == scoped)
        #expect(again.takes("/DCIM/A.JPG") && !again.takes("/DCIM/A.TXT") && !again.takes("/OTHER/A.JPG"))
    }

    /// Through the API on a local folder: counts follow the scope, and an
    /// import of "this folder, photos and videos" leaves the text file and the
    /// other folder alone. The answer names the full destination path.
    @Test func countsAndImportsFollowTheScope() async throws {
        let folder = try TempDir(prefix: "ferry-import-scope")
        let cache = try TempDir(prefix: "ferry-import-scope-cache")
        let root = folder.path + "/root"
        let fm = FileManager.default
        for dir in ["/DCIM/100FERRY", "/DCIM/101FERRY"] {
            try fm.createDirectory(atPath: root + dir, withIntermediateDirectories: true)
        }
        let jpeg = try await onThread { Data(try SamplePhotos.jpeg(index: 1, width: 64, height: 48)) }
        for name in ["/DCIM/100FERRY/IMG_0001.JPG", "/DCIM/100FERRY/IMG_0002.JPG", "/DCIM/101FERRY/IMG_0003.JPG"] {
            try jpeg.write(to: URL(fileURLWithPath: root + name))
        }
        try Data("notes".utf8).write(to: URL(fileURLWithPath: root + "/DCIM/100FERRY/NOTES.TXT"))
        try Data("xmp".utf8).write(to: URL(fileURLWithPath: root + "/DCIM/100FERRY/IMG_0001.xmp"))
        var configuration = WebConfiguration(source: try RemoteURL(parsing: root), host: "127.0.0.1", port: 0)
        configuration.cacheDirectory = cache.path
        let destination = folder.path + "/imported"
        configuration.importDirectory = destination
        let api = try WebAPI(configuration: configuration)

        func new(_ query: String) async -> [String: Any] {
            APITests.object(await api.handle(APITests.request("/api/new" + query)))
        }
        #expect(await new("")["count"] as? Int == 5, "no kinds: every file, as the API always counted")
        #expect(await new("?kinds=media")["count"] as? Int == 4)
        let here = await new("?folder=/DCIM/100FERRY&kinds=media")
        #expect(here["count"] as? Int == 3 && here["items"] as? Int == 2, "\(here)")
        #expect(here["destination"] as? String == destination && here["folder"] as? String == "/DCIM/100FERRY")
        #expect(await new("?folder=/DCIM/100FERRY&kinds=txt")["count"] as? Int == 1)
        #expect(await api.handle(APITests.request("/api/new?folder=/../etc")).status == 400)
        #expect(await api.handle(APITests.request("/api/new?kinds=,")).status == 400)

        let started = await api.handle(
            ImportAPITests.post("/api/import", ["folder": "/DCIM/100FERRY", "kinds": "media", "layout": "tree"]))
        #expect(started.status == 202)
        let status = try await ImportAPITests.finished(api)
        #expect(status["state"] as? String == "done" && status["done"] as? Int == 3, "\(status)")
        #expect(status["destinationPath"] as? String == destination)
        #expect(fm.fileExists(atPath: destination + "/DCIM/100FERRY/IMG_0001.JPG"))
        #expect(fm.fileExists(atPath: destination + "/DCIM/100FERRY/IMG_0001.xmp"))
        #expect(!fm.fileExists(atPath: destination + "/DCIM/100FERRY/NOTES.TXT"))
        #expect(!fm.fileExists(atPath: destination + "/DCIM/101FERRY/IMG_0003.JPG"))
        #expect(await new("?kinds=media")["count"] as? Int == 1)
        let source = APITests.object(await api.handle(APITests.request("/api/source")))
        #expect(source["importPath"] as? String == destination)

        // Names from templates (issue 26 item 5): previewed by a dry run, then imported so.
        let body: [String: Any] = [
            "folder": "/DCIM/101FERRY", "kinds": "media", "layout": "tree", "folderTemplate": "{tag}/{folder}",
            "nameTemplate": "{seq}_{name}", "tag": "trip",
        ]
        let preview = APITests.object(await api.handle(ImportAPITests.post("/api/import-preview", body)))
        let items = preview["items"] as? [[String: Any]] ?? []
        #expect(items.count == 1, "\(preview)")
        #expect(items.first?["path"] as? String == "/DCIM/101FERRY/IMG_0003.JPG")
        #expect(items.first?["destination"] as? String == "trip/101FERRY/1_IMG_0003.JPG", "\(preview)")
        #expect(!fm.fileExists(atPath: destination + "/trip"), "a preview copies nothing")
        var bad = body
        bad["nameTemplate"] = "{nope}_{name}"
        let refused = await api.handle(ImportAPITests.post("/api/import-preview", bad))
        #expect(refused.status == 400)
        #expect((APITests.object(refused)["error"] as? String ?? "").contains("nope"), "\(APITests.object(refused))")
        #expect(await api.handle(ImportAPITests.post("/api/import", bad)).status == 400)
        #expect(await api.handle(ImportAPITests.post("/api/import", body)).status == 202)
        let done = try await ImportAPITests.finished(api)
        #expect(done["state"] as? String == "done" && done["done"] as? Int == 1, "\(done)")
        #expect(fm.fileExists(atPath: destination + "/trip/101FERRY/1_IMG_0003.JPG"))
        // The request kept for Restart keeps the templates.
        let kept = try JSONDecoder().decode(
            ImportJob.Request.self,
            from: try Data(contentsOf: URL(fileURLWithPath: destination + "/" + ImportJob.requestFileName)))
        #expect(kept.templates.name?.text == "{seq}_{name}" && kept.templates.tag == "trip")
    }
}
