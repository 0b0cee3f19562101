import FerryKit
import FerryServer
import Foundation

extension WebAPI {
    private struct Uploaded: Encodable {
        var uploaded: [APIEntry]
    }

    /// A change's JSON body: it names the path it changes.
    private protocol ChangeBody: Decodable {
        var path: String { get }
    }

    private struct PathBody: ChangeBody {
        var path: String
    }

    /// What a change to one path starts from: the source, the request's JSON
    /// body (400 with `shape` when it is not one), the body's path resolved
    /// (``resolve(_:in:)``); the root is refused with `root`.
    private func change<Body: ChangeBody>(
        _ request: HTTPRequest, as: Body.Type, expecting shape: String, root: APIRefusal
    ) throws(APIRefusal) -> (source: WebSource, body: Body, web: String, backend: String) {
        let source = try connectedSource()
        let body: Body = try jsonBody(of: request, expecting: shape)
        let (web, backend) = try resolve(body.path, in: source)
        guard web != "/" else { throw root }
        return (source, body, web, backend)
    }

    private struct DeleteBody: ChangeBody {
        var path: String
        /// Delete a folder with everything in it.
        var recursive: Bool?
    }

    private struct NotEmpty: Encodable {
        var error: String
        var notEmpty = true
        var files: Int
        var folders: Int
        var bytes: Int64
    }

    private struct Deleted: Encodable {
        var deleted: String
        var files: Int
        var folders: Int
    }

    private struct RenameBody: ChangeBody {
        var path: String
        var name: String
    }

    /// `POST /api/upload?path=FOLDER[&overwrite=1]`: every file part of a
    /// multipart body into the folder, under its own name. Without
    /// `overwrite`, an existing file is a 409.
    func upload(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let source = try connectedSource()
            let (folder, _) = try resolve(request.query("path") ?? "/", in: source)
            guard case .multipart(let parts) = request.body else {
                throw APIRefusal(400, "expected a multipart/form-data body with files")
            }
            var options = UploadOptions()
            options.overwrite = request.query("overwrite") == "1" ? .overwrite : .fail
            // The spooled body goes with this request: a partial file could never resume.
            options.resume = false
            var done: [APIEntry] = []
            for part in parts {
                guard case .file(let temporary, _) = part.content else { continue }
                guard let name = part.filenameLastComponent, WebPath.isValidName(name) else {
                    throw APIRefusal(400, "bad file name: \(part.filename ?? "")")
                }
                let (web, backend) = try resolve(RemotePath.join(folder, name), in: source)
                uploading.withLock { _ = $0.insert(backend) }
                defer { uploading.withLock { _ = $0.remove(backend) } }
                _ = try await source.fs.upload(temporary, to: backend, options: options).result
                let entry = (try? await source.fs.stat(backend)) ?? RemoteEntry(name: name, path: backend, kind: .file)
                done.append(APIEntry(entry, path: web))
            }
            guard !done.isEmpty else { throw APIRefusal(400, "no files in the upload") }
            return .json(Uploaded(uploaded: done), status: 201)
        }
    }

    /// `POST /api/delete {"path", "recursive"?}`: a file or a folder. A folder
    /// that holds anything is refused with 409 and what it holds (files,
    /// folders, bytes) unless `recursive` is true; then its files go one by
    /// one, deepest first. A card's system folders at its root are refused.
    func delete(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let (source, body, web, backend) = try change(
                request, as: DeleteBody.self, expecting: "expected JSON {\"path\": ...}",
                root: APIRefusal(400, "the root cannot be deleted"))
            guard !source.isProtected(web) else {
                throw APIRefusal(
                    403, "\(WebPath.name(web)) is a system folder of the card: it is not deleted from here")
            }
            let entry = try await source.fs.stat(backend)
            guard entry.isDirectory else {
                try await source.fs.delete(backend)
                return .json(Deleted(deleted: web, files: 1, folders: 0))
            }
            let tree = try await source.fs.walk(backend, includeHidden: true)
            if !tree.files.isEmpty || !tree.folders.isEmpty, body.recursive != true {
                let n = tree.files.count
                return .json(
                    NotEmpty(
                        error: "“\(WebPath.name(web))” is not empty: it holds \(n) file\(n == 1 ? "" : "s")"
                            + (tree.folders.isEmpty ? "" : " in \(tree.folders.count + 1) folders"),
                        files: n, folders: tree.folders.count, bytes: tree.files.reduce(0) { $0 + ($1.size ?? 0) }),
                    status: 409)
            }
            for file in tree.files { try await source.fs.delete(file.path) }
            // Deepest folders first.
            for folder in tree.folders.sorted(by: { $0.path.count > $1.path.count }) {
                try await source.fs.removeDirectory(folder.path)
            }
            try await source.fs.removeDirectory(backend)
            return .json(Deleted(deleted: web, files: tree.files.count, folders: tree.folders.count + 1))
        }
    }

    /// `POST /api/mkdir {"path"}`: one new folder (its parent must exist).
    func makeDirectory(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let (source, _, web, backend) = try change(
                request, as: PathBody.self, expecting: "expected JSON {\"path\": ...}",
                root: APIRefusal(409, "the root exists"))
            try await source.fs.makeDirectory(backend, createParents: false)
            let entry =
                (try? await source.fs.stat(backend))
                ?? RemoteEntry(name: WebPath.name(web), path: backend, kind: .directory)
            return .json(APIEntry(entry, path: web), status: 201)
        }
    }

    /// `POST /api/rename {"path", "name"}`: a new name in the same folder.
    func rename(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let (source, body, web, backend) = try change(
                request, as: RenameBody.self, expecting: "expected JSON {\"path\": ..., \"name\": ...}",
                root: APIRefusal(400, "the root cannot be renamed"))
            guard WebPath.isValidName(body.name) else { throw APIRefusal(400, "bad name: \(body.name)") }
            let (newWeb, newBackend) = try resolve(RemotePath.join(WebPath.parent(web), body.name), in: source)
            try await source.fs.rename(backend, to: newBackend)
            let entry =
                (try? await source.fs.stat(newBackend)) ?? RemoteEntry(name: body.name, path: newBackend, kind: .file)
            return .json(APIEntry(entry, path: newWeb))
        }
    }
}
