import FerryKit
import FerryServer
import Foundation

extension WebAPI {
    private struct ImportBody: Decodable {
        /// Page paths of the files to import; absent = every new file of the scope.
        var paths: [String]?
        /// With no `paths`: the page path of the folder whose new files (its
        /// subfolders' too) are taken; absent = the whole source.
        var folder: String?
        /// With no `paths`: `media` (photos and videos with their sidecars, the
        /// default), `all`, or extensions (`jpg,cr2`).
        var kinds: String?
        /// `tree` (folders as on the source) or `date` (a folder per day).
        var layout: String?
        var deleteAfter: Bool?
        /// Folders and names from templates (`{taken:%Y}/{taken:%Y-%m-%d}`,
        /// `{taken:%Y%m%d-%H%M%S}_{name}`) and the job code `{tag}` stands for.
        var folderTemplate: String?
        var nameTemplate: String?
        var tag: String?
        /// The last import again, with its files and options (partial files resume).
        var restart: Bool?
    }

    /// What `/api/import` and `/api/import-preview` take, said when a body is not that.
    private static let importShape =
        "expected JSON {\"paths\"?: [...], \"folder\"?, \"kinds\"?, \"layout\"?: \"tree|date\", \"deleteAfter\"?, "
        + "\"folderTemplate\"?, \"nameTemplate\"?, \"tag\"?, \"restart\"?}"

    /// The templates of a request, checked: a template that does not parse is refused with its reason.
    private static func templates(_ body: ImportBody) throws(APIRefusal) -> ImportJob.Request.Templates {
        func template(_ text: String?) throws(APIRefusal) -> NameTemplate? {
            guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
            do {
                return try NameTemplate(text)
            } catch {
                throw APIRefusal(400, error.detail ?? error.description)
            }
        }
        let tag = body.tag?.trimmingCharacters(in: .whitespaces)
        return ImportJob.Request.Templates(
            folder: try template(body.folderTemplate), name: try template(body.nameTemplate),
            tag: tag?.isEmpty == false ? tag : nil)
    }

    /// The request a body asks for (not a restart).
    private func request(_ body: ImportBody, in source: WebSource) throws -> ImportJob.Request {
        guard let layout = SyncOptions.Layout(rawValue: body.layout ?? "tree") else {
            throw APIRefusal(400, "layout must be tree or date")
        }
        var files: Set<String>?
        if let paths = body.paths {
            guard !paths.isEmpty else { throw APIRefusal(400, "no files to import") }
            files = Set(try paths.map { try resolve($0, in: source).backend })
        }
        return ImportJob.Request(
            files: files, scope: try scope(folder: body.folder, kinds: body.kinds, in: source), layout: layout,
            deleteAfter: body.deleteAfter ?? false, templates: try Self.templates(body))
    }

    private struct Preview: Encodable {
        struct Item: Encodable {
            /// The file's page path.
            var path: String
            /// Where it would go, relative to the import folder.
            var destination: String
        }
        var items: [Item]
        /// The import folder's full path.
        var destination: String
    }

    /// `POST /api/import-preview` with the body of `/api/import`: where the first
    /// few new files would go with these options (a dry run: nothing is copied;
    /// the date taken read from the start of each photo, one range request on a card).
    func previewImport(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let source = try connectedSource()
            let body: ImportBody = try jsonBody(of: request, expecting: Self.importShape)
            let asked = try self.request(body, in: source)
            let key = try await source.historyKey.get(source.fs)
            let items = try await importJob.preview(source: source, key: key, asked, limit: 3)
            return .json(
                Preview(
                    items: items.map { Preview.Item(path: source.webPath($0.path), destination: $0.destination) },
                    destination: importJob.directory))
        }
    }

    private struct NewFiles: Encodable {
        /// Files not imported yet.
        var count: Int
        /// What a person counts among them: a raw file with its JPEG and its
        /// sidecars (XMP, THM, AAE, WAV) is one photo (``PhotoGroups``).
        var items: Int
        var bytes: Int64
        var imported: Int
        /// The scope counted: the folder's page path (nil: the whole source) and the kinds.
        var folder: String?
        var kinds: String
        /// Where an import goes: the folder's full local path.
        var destination: String
    }

    /// The scope of "Import all new" from the page's `folder` (a page path; absent
    /// or `/` = the whole source) and `kinds`.
    private func scope(folder: String?, kinds: String?, in source: WebSource) throws -> ImportScope {
        let kinds = try ImportScope.kinds(parsing: kinds)
        guard let folder, folder != "/", !folder.isEmpty else { return ImportScope(folder: nil, kinds: kinds) }
        return ImportScope(folder: try resolve(folder, in: source).backend, kinds: kinds)
    }

    /// `GET /api/import`: the running or last import.
    func importStatus() -> HTTPResponse {
        var status = importJob.status
        status.pauses = source?.share.pauses ?? 0
        status.prefetchPauses = source?.share.prefetchPauses ?? 0
        return .json(status)
    }

    /// `POST /api/import {"paths"?, "folder"?, "kinds"?, "layout"?, "deleteAfter"?, "restart"?}`: starts
    /// an import (409 while one runs); `restart` repeats the last one.
    func startImport(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let source = try connectedSource()
            let body: ImportBody = try jsonBody(of: request, expecting: Self.importShape)
            let key = try await source.historyKey.get(source.fs)
            let asked = body.restart == true ? nil : try self.request(body, in: source)
            // Started under the choice's lock: a `POST /api/import-to` waits for it and then sees it running.
            let status = try withChosenImport { job throws(APIRefusal) in
                guard let request = asked ?? job.lastRequest else { throw APIRefusal(409, "no import to restart") }
                guard job.start(source: source, key: key, request) else {
                    throw APIRefusal(409, "an import is running: wait for it or cancel it")
                }
                return job.status
            }
            return .json(status, status: 202)
        }
    }

    /// `POST /api/import-cancel`: stops the import; partial files stay as `.part` for a restart.
    func cancelImport() -> HTTPResponse {
        importJob.cancel()
        return .json(importJob.status)
    }

    /// `GET /api/new?folder=PAGEPATH&kinds=media|all|EXTS`: how many files of the
    /// scope (the folder with its subfolders, or the whole source; photos and
    /// videos by default) are not imported yet, their size, and where they go.
    func newFiles(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let source = try connectedSource()
            let scope = try scope(folder: request.query("folder"), kinds: request.query("kinds"), in: source)
            let key = try await source.historyKey.get(source.fs)
            let known = importJob.imported(key: key)
            let new = try await importJob.newFiles(in: source, scope: scope, known: known)
            let folder = request.query("folder").flatMap { $0.isEmpty || $0 == "/" ? nil : $0 }
            return .json(
                NewFiles(
                    count: new.count, items: Set(new.map { PhotoGroups.key($0.path) }).count,
                    bytes: new.reduce(0) { $0 + ($1.size ?? 0) }, imported: known.count, folder: folder,
                    kinds: scope.kindsText, destination: importJob.directory))
        }
    }
}
