import FerryKit
import FerryServer
import Foundation

extension WebAPI {
    private struct Listing: Encodable {
        var path: String
        var count: Int
        var entries: [APIEntry]
    }

    /// `GET /api/list?path=`: a folder, folders first then files, by name.
    func list(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            guard let source else { throw APIRefusal(409, "no source connected") }
            let (web, backend) = try resolve(request.query("path") ?? "/", in: source)
            let entries = try await source.fs.list(backend)
                .map { APIEntry($0, path: WebPath.join(web, $0.name)) }
                .sorted { a, b in
                    let aFolder = a.type == "directory"
                    let bFolder = b.type == "directory"
                    if aFolder != bFolder { return aFolder }
                    return a.name.localizedStandardCompare(b.name) == .orderedAscending
                }
            return .json(Listing(path: web, count: entries.count, entries: entries))
        }
    }

    /// `GET /api/stat?path=`: one entry.
    func stat(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            guard let source else { throw APIRefusal(409, "no source connected") }
            let (web, backend) = try resolve(request.query("path"), in: source)
            return .json(APIEntry(try await source.fs.stat(backend), path: web))
        }
    }

    /// `GET /api/file?path=[&download=1]`: the file with `Range`. Images are
    /// inline, everything else is an attachment.
    func file(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            guard let source else { throw APIRefusal(409, "no source connected") }
            let (web, backend) = try resolve(request.query("path"), in: source)
            let local: String
            if source.isLocal {
                let entry = try await source.fs.stat(backend)
                guard entry.kind == .file || entry.kind == .symlink else { throw APIRefusal(404, "not a file: \(web)") }
                local = backend
            } else {
                local = try await remoteCopy(backend, request: request, source: source)
            }
            let name = WebPath.name(web)
            let inline = request.query("download") == nil ? MediaType.inlineType(name) : nil
            var response = HTTPResponse.file(local, contentType: inline ?? "application/octet-stream")
            let disposition = inline == nil ? "attachment" : "inline"
            response.headers.add(
                name: "Content-Disposition", value: "\(disposition); filename*=UTF-8''\(Self.rfc5987(name))")
            response.headers.add(name: "Cache-Control", value: "private, no-cache")
            return response
        }
    }

    /// `GET /api/thumb?path=[&v=VERSION]`: a JPEG of at most 256 pixels a side,
    /// cached. From a FlashAir card it is the card's own `thumbnail.cgi` answer;
    /// otherwise (or for a photo without an Exif thumbnail) it is made here from
    /// the photo with libjpeg-turbo's scaled decoding.
    func thumbnail(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            guard let source else { throw APIRefusal(409, "no source connected") }
            let (web, backend) = try resolve(request.query("path"), in: source)
            guard MediaType.thumbnailable.contains(MediaType.fileExtension(web)) else {
                throw APIRefusal(415, "no thumbnails for this kind of file: \(web)")
            }
            var version = request.query("v") ?? ""
            if source.isLocal {
                let entry = try await source.fs.stat(backend)
                version = "\(entry.size ?? 0)-\(entry.modified?.iso8601 ?? "")"
            }
            let key = "\(source.url.hostKey)\n\(backend)\n\(version)\n\(ThumbnailMaker.defaultSide)"
            let bytes: [UInt8]
            if let cached = thumbnails.get(key) {
                bytes = cached
            } else if source.fs.capabilities.contains(.sourceThumbnails),
                let embedded = try? await source.fs.thumbnail(backend)?.jpeg
            {
                // The card's thumbnail.cgi: the photo's Exif thumbnail, a few KB, no full download.
                bytes = embedded
                thumbnails.put(key, bytes)
            } else {
                let local = source.isLocal ? backend : try await remoteCopy(backend, request: request, source: source)
                do {
                    bytes = try await workers.run { try ThumbnailMaker.thumbnail(ofFile: local) }
                } catch let error as JPEGError {
                    throw APIRefusal(
                        422, "cannot make a thumbnail of \(web): \(error.code)\(error.detail.map { " (\($0))" } ?? "")")
                }
                thumbnails.put(key, bytes)
            }
            var response = HTTPResponse.data(Data(bytes), contentType: "image/jpeg")
            response.headers.add(name: "Cache-Control", value: "private, max-age=86400")
            return response
        }
    }

    /// A local copy of a remote file, keyed by the version the page saw (`v`) or a fresh stat.
    private func remoteCopy(_ backend: String, request: HTTPRequest, source: WebSource) async throws -> String {
        var version = request.query("v") ?? ""
        if version.isEmpty {
            let entry = try await source.fs.stat(backend)
            version = "\(entry.size ?? -1)-\(entry.modified?.iso8601 ?? "")"
        }
        return try await remoteFiles.localCopy(of: backend, in: source.fs, version: version)
    }

    /// RFC 5987 encoding for `filename*=`.
    static func rfc5987(_ name: String) -> String {
        name.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(
                charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$&+-.^_`|~"))
            ?? "file"
    }
}
