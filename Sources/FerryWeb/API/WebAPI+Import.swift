import FerryKit
import FerryServer
import Foundation

extension WebAPI {
    private struct ImportBody: Decodable {
        /// Page paths of the files to import; absent = every new file.
        var paths: [String]?
        /// `tree` (folders as on the source) or `date` (a folder per day).
        var layout: String?
        var deleteAfter: Bool?
        /// The last import again, with its files and options (partial files resume).
        var restart: Bool?
    }

    private struct NewFiles: Encodable {
        /// Files not imported yet.
        var count: Int
        /// What a person counts among them: a raw file with its JPEG and its
        /// sidecars (XMP, THM, AAE, WAV) is one photo (``PhotoGroups``).
        var items: Int
        var bytes: Int64
        var imported: Int
    }

    /// `GET /api/import`: the running or last import.
    func importStatus() -> HTTPResponse {
        var status = importJob.status
        status.pauses = source?.share.pauses ?? 0
        status.prefetchPauses = source?.share.prefetchPauses ?? 0
        return .json(status)
    }

    /// `POST /api/import {"paths"?, "layout"?, "deleteAfter"?, "restart"?}`: starts an import (409 while
    /// one runs); `restart` repeats the last one.
    func startImport(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            guard let source else { throw APIRefusal(409, "no source connected") }
            guard let body: ImportBody = decode(request) else {
                throw APIRefusal(
                    400, "expected JSON {\"paths\": [...], \"layout\": \"tree|date\", \"deleteAfter\": false}")
            }
            guard let layout = SyncOptions.Layout(rawValue: body.layout ?? "tree") else {
                throw APIRefusal(400, "layout must be tree or date")
            }
            let key = try await source.historyKey.get(source.fs)
            if body.restart == true {
                guard let last = importJob.lastRequest else { throw APIRefusal(409, "no import to restart") }
                guard
                    importJob.start(
                        source: source, key: key, files: last.files, layout: last.layout,
                        deleteAfter: last.deleteAfter)
                else { throw APIRefusal(409, "an import is running: wait for it or cancel it") }
                return .json(importJob.status, status: 202)
            }
            var files: Set<String>?
            if let paths = body.paths {
                guard !paths.isEmpty else { throw APIRefusal(400, "no files to import") }
                files = Set(try paths.map { try resolve($0, in: source).backend })
            }
            guard
                importJob.start(
                    source: source, key: key, files: files, layout: layout, deleteAfter: body.deleteAfter ?? false)
            else { throw APIRefusal(409, "an import is running: wait for it or cancel it") }
            return .json(importJob.status, status: 202)
        }
    }

    /// `POST /api/import-cancel`: stops the import; partial files stay as `.part` for a restart.
    func cancelImport() -> HTTPResponse {
        importJob.cancel()
        return .json(importJob.status)
    }

    /// `GET /api/new`: how many files of the whole source are not imported yet, and their size.
    func newFiles() async -> HTTPResponse {
        await answer {
            guard let source else { throw APIRefusal(409, "no source connected") }
            let key = try await source.historyKey.get(source.fs)
            let known = importJob.imported(key: key)
            let new = try await importJob.newFiles(in: source, known: known)
            return .json(
                NewFiles(
                    count: new.count, items: Set(new.map { PhotoGroups.key($0.path) }).count,
                    bytes: new.reduce(0) { $0 + ($1.size ?? 0) }, imported: known.count))
        }
    }
}
