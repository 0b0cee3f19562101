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

    /// The choice's rule: one of the server's folders (by its full path), and not while an import runs.
    @Test func aChoiceIsOneOfTheServersFoldersAndNotWhileAnImportRuns() throws {
        let folders = ["/home/me/Pictures/Ferry", "/mnt/nas/photos"]
        #expect(try WebAPI.importFolder("/mnt/nas/photos", among: folders, running: false).get() == 1)
        #expect(try WebAPI.importFolder("/home/me/Pictures/Ferry", among: folders, running: false).get() == 0)
        for asked in ["/mnt/nas/photos/", "/mnt/nas", "/etc", "", "mnt/nas/photos"] {
            let refused = WebAPI.importFolder(asked, among: folders, running: false)
            #expect(throws: APIRefusal.self, "\(asked)") { try refused.get() }
            if case .failure(let r) = refused { #expect(r.response.status == 400) }
        }
        let running = WebAPI.importFolder("/mnt/nas/photos", among: folders, running: true)
        if case .failure(let r) = running { #expect(r.response.status == 409) } else { Issue.record("\(running)") }
    }

    /// `ferry serve --import-to A --import-to B`: the page chooses among the
    /// server's folders only (never one of its own), not while an import runs,
    /// and each folder counts and keeps its own history.
    @Test func thePageChoosesAmongTheAllowedImportFolders() async throws {
        let folder = try TempDir(prefix: "ferry-import-choice")
        let cache = try TempDir(prefix: "ferry-import-choice-cache")
        let root = folder.path + "/root"
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/DCIM", withIntermediateDirectories: true)
        let jpeg = try await onThread { Data(try SamplePhotos.jpeg(index: 1, width: 64, height: 48)) }
        for name in ["/DCIM/IMG_0001.JPG", "/DCIM/IMG_0002.JPG"] {
            try jpeg.write(to: URL(fileURLWithPath: root + name))
        }
        var configuration = WebConfiguration(source: try RemoteURL(parsing: root), host: "127.0.0.1", port: 0)
        configuration.cacheDirectory = cache.path
        let first = folder.path + "/photos"
        let second = folder.path + "/archive"
        configuration.importDirectory = first
        configuration.otherImportDirectories = [second, first]
        #expect(configuration.importChoices == [first, second], "the default first, each folder once")
        let api = try WebAPI(configuration: configuration)

        func source() async -> [String: Any] { APITests.object(await api.handle(APITests.request("/api/source"))) }
        func newCount() async -> Int? {
            APITests.object(await api.handle(APITests.request("/api/new")))["count"] as? Int
        }
        #expect(await source()["importChoices"] as? [String] == [first, second])
        #expect(await source()["importPath"] as? String == first)

        // Into the default folder first.
        let one = await api.handle(ImportAPITests.post("/api/import", ["paths": ["/DCIM/IMG_0001.JPG"]]))
        #expect(one.status == 202)
        #expect(try await ImportAPITests.finished(api)["done"] as? Int == 1)
        #expect(fm.fileExists(atPath: first + "/DCIM/IMG_0001.JPG"))
        #expect(await newCount() == 1)

        // A folder the server was not given is refused, and so is a body without one.
        let elsewhere = await api.handle(ImportAPITests.post("/api/import-to", ["path": folder.path + "/other"]))
        #expect(elsewhere.status == 400)
        #expect((APITests.object(elsewhere)["error"] as? String ?? "").contains(second))
        #expect(await api.handle(ImportAPITests.post("/api/import-to", ["folder": second])).status == 400)
        #expect(await api.handle(APITests.request("/api/import-to")).status == 405, "a change is a POST")
        #expect(await source()["importPath"] as? String == first)

        // The other folder has its own history: both photos are new there.
        let chosen = await api.handle(ImportAPITests.post("/api/import-to", ["path": second]))
        #expect(chosen.status == 200)
        #expect(APITests.object(chosen)["importPath"] as? String == second)
        #expect(await newCount() == 2)
        #expect(await api.handle(ImportAPITests.post("/api/import", ["layout": "tree"])).status == 202)
        let status = try await ImportAPITests.finished(api)
        #expect(status["done"] as? Int == 2 && status["destinationPath"] as? String == second, "\(status)")
        #expect(fm.fileExists(atPath: second + "/DCIM/IMG_0001.JPG"))
        #expect(fm.fileExists(atPath: second + "/DCIM/IMG_0002.JPG"))
        #expect(!fm.fileExists(atPath: first + "/DCIM/IMG_0002.JPG"), "the first folder got nothing more")
        #expect(await newCount() == 0)

        // Back to the first: its history is as it was.
        #expect(await api.handle(ImportAPITests.post("/api/import-to", ["path": first])).status == 200)
        #expect(await newCount() == 1)
    }
}
