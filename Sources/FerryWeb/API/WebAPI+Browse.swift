import FerryKit
import FerryServer
import Foundation

extension WebAPI {
    private struct Listing: Encodable {
        var path: String
        var count: Int
        var entries: [APIEntry]
    }

    /// `GET /api/list?path=`: a folder, in the source's order (the page sorts:
    /// one place, with the person's choice of order). Each entry says whether it
    /// is hidden and whether the import history holds it.
    func list(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let source = try connectedSource()
            let (web, backend) = try resolve(request.query("path") ?? "/", in: source)
            // The partial files of uploads in progress are no files of the folder yet.
            let parts = Set(uploading.withLock { u in u.flatMap { [$0 + ".part", $0 + ".part.journal"] } })
            let listed = try await source.fs.list(backend).filter { !parts.contains($0.path) }
            let imported = await importedFiles(source)
            let entries = listed.map { e -> APIEntry in
                var entry = APIEntry(e, path: RemotePath.join(web, e.name))
                if source.isProtected(entry.path) { entry.system = true }
                if entry.type == "file" {
                    entry.imported = imported.map { $0.contains(e) }
                }
                return entry
            }
            return .json(Listing(path: web, count: entries.count, entries: entries))
        }
    }

    /// What the import history holds for this source; nil when it cannot tell.
    func importedFiles(_ source: WebSource) async -> SyncHistory.ImportedFiles? {
        guard let key = try? await source.historyKey.get(source.fs) else { return nil }
        return importJob.imported(key: key)
    }

    /// `GET /api/stat?path=`: one entry.
    func stat(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let source = try connectedSource()
            let (web, backend) = try resolve(request.query("path"), in: source)
            return .json(APIEntry(try await source.fs.stat(backend), path: web))
        }
    }

    /// `GET /api/file?path=[&download=1]`: the file with `Range`. Images are
    /// inline, everything else is an attachment.
    func file(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let source = try connectedSource()
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
    /// cached. From a remote source it is the photo's Exif thumbnail as
    /// `RemoteFileSystem.thumbnail` reads it without downloading the photo (a
    /// card's `thumbnail.cgi`; elsewhere a range read of the file's first bytes);
    /// for a local photo, or one without an Exif thumbnail, it is made here from
    /// the photo with libjpeg-turbo's scaled decoding (a remote photo downloaded
    /// whole first). A remote raw file's comes from its embedded JPEG and a remote
    /// HEIC's from its thumbnail item, each read by range where the source can.
    func thumbnail(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let source = try connectedSource()
            let (web, backend) = try resolve(request.query("path"), in: source)
            let kind = try MediaType.photoKind(web, making: "thumbnails")
            var version = request.query("v") ?? ""
            if source.isLocal {
                let entry = try await source.fs.stat(backend)
                version = "\(entry.size ?? 0)-\(entry.modified?.iso8601 ?? "")"
            }
            // `s=512`: a sharper thumbnail for a dense screen, where the photo's bytes come fast (a
            // folder, a LAN server); on a one-connection card the card's own (no full download).
            let side = Self.thumbnailSide(request.query("s"), singleConnection: source.share.isSingleConnection)
            // "upright": thumbnails cached before they were turned by their orientation are not reused.
            let key = "\(source.url.hostKey)\n\(backend)\n\(version)\n\(side)\nupright"
            let bytes: [UInt8]
            if let cached = thumbnails.get(key) {
                bytes = cached
            } else if kind == .jpeg, !source.isLocal, side == ThumbnailMaker.defaultSide,
                let embedded = try? await source.fs.thumbnail(backend),
                let upright = try? await workers.run({
                    try ThumbnailMaker.upright(jpeg: Array(embedded.jpeg), orientation: embedded.orientation)
                })
            {
                // The photo's Exif thumbnail, a few KB, no full download: the card's
                // thumbnail.cgi, or the first 64 KiB (at most 256) by a range read;
                // turned upright here by the orientation the card's header or IFD0 gives
                // (one it cannot decode: made from the photo instead, below).
                bytes = upright
                thumbnails.put(key, bytes)
            } else if kind == .raw, let embedded = await remoteRawJPEG(backend, source: source, want: .thumbnail) {
                bytes = try await scaledJPEG(embedded, side: side, quality: 80, of: web)
                thumbnails.put(key, bytes)
            } else if kind == .heif,
                let made = try await remoteHEIFThumbnail(backend, source: source, side: side, of: web)
            {
                // The `meta` box and the thumbnail item by range, no full download.
                bytes = made
                thumbnails.put(key, bytes)
            } else {
                let local = source.isLocal ? backend : try await remoteCopy(backend, request: request, source: source)
                bytes = try await scaledJPEG(local, kind: kind, side: side, quality: 80, of: web)
                thumbnails.put(key, bytes)
            }
            var response = HTTPResponse.data(Data(bytes), contentType: "image/jpeg")
            response.headers.add(name: "Cache-Control", value: "private, max-age=86400")
            return response
        }
    }

    /// The thumbnail sizes the page may ask for (`s=`): the default and one for dense screens
    /// (a phone's tile at 3x), each cached on its own.
    static let thumbnailSides = [ThumbnailMaker.defaultSide, 512]

    /// The longest side of the thumbnail `s` asks for: one of ``thumbnailSides`` (else the
    /// default), and the default on a one-connection source, where a larger one would mean
    /// downloading the whole photo just for a tile.
    static func thumbnailSide(_ asked: String?, singleConnection: Bool) -> Int {
        guard !singleConnection, let asked = asked.flatMap({ Int($0) }), thumbnailSides.contains(asked) else {
            return ThumbnailMaker.defaultSide
        }
        return asked
    }

    /// The embedded JPEG of a raw file on a remote source, read with `Range` (its IFDs,
    /// then the JPEG), or nil where the source cannot read ranges: the caller then
    /// copies the whole file. A CR3 file's thumbnail is its `THMB` (the first 64 KiB), its preview its `PRVW`.
    func remoteRawJPEG(_ backend: String, source: WebSource, want: CR3Reader.Want = .preview) async
        -> RawPreview.Embedded?
    {
        guard !source.isLocal, let size = try? await source.fs.stat(backend).size else { return nil }
        let cr3 = MediaType.fileExtension(backend) == "cr3"
        return try? await RawPreview.jpeg(fileSize: Int(size), cr3: cr3, want: want) { range in
            try await source.fs.data(at: backend, range: range)
        }
    }

    /// The thumbnail of a HEIF file on a remote source from its `meta` box and thumbnail
    /// item read by range (``HEIFRangeRead``), or nil where that cannot be (no thumbnail
    /// item of `side` pixels, a source that cannot read ranges, a layout not read by range,
    /// bytes libheif refuses in part): the caller then copies the whole file.
    ///
    /// - Throws: ``APIRefusal`` 422 at once when the file's first bytes are no HEIF file's
    ///   or its `meta` box is garbage: the whole file would not decode either.
    func remoteHEIFThumbnail(_ backend: String, source: WebSource, side: Int, of web: String) async throws
        -> [UInt8]?
    {
        guard !source.isLocal, let size = try? await source.fs.stat(backend).size else { return nil }
        let outcome: HEIFRangeRead.Outcome
        do {
            outcome = try await HEIFRangeRead.thumbnail(fileSize: Int(size), minSide: side) { range in
                try await source.fs.data(at: backend, range: range)
            }
        } catch let error as FerryError where error.code == .cancelled {
            throw error
        } catch {
            return nil
        }
        switch outcome {
        case .whole:
            return nil
        case .invalid(let why):
            throw APIRefusal(422, "cannot read \(web) as a photo: \(JPEGError.Code.heif) (\(why))")
        case .sparse(let sparse):
            // Upright already: libheif applies the thumbnail's irot/imir.
            return try? await workers.run {
                let decoded = try HEIFCodec.decode(sparse: sparse)
                return try JPEGCodec.encode(JPEGCodec.downscale(decoded.image, maxSide: side), quality: 80)
            }
        }
    }

    /// A reduced upright JPEG of a raw file's embedded one; see ``scaledJPEG(_:kind:side:quality:of:)``.
    func scaledJPEG(_ embedded: RawPreview.Embedded, side: Int, quality: Int, of web: String) async throws -> [UInt8] {
        try await scaled(of: web) {
            try ThumbnailMaker.scaled(
                jpeg: Array(embedded.jpeg), maxSide: side, quality: quality, orientation: embedded.orientation)
        }
    }

    /// A reduced JPEG of a photo (or a raw file's embedded one), made off the cooperative pool;
    /// a file libjpeg cannot read is a 422 naming it.
    func scaledJPEG(_ local: String, kind: ThumbnailMaker.Kind, side: Int, quality: Int, of web: String) async throws
        -> [UInt8]
    {
        try await scaled(of: web) {
            try ThumbnailMaker.scaled(ofFile: local, kind: kind, maxSide: side, quality: quality)
        }
    }

    private func scaled(of web: String, _ work: @escaping @Sendable () throws -> [UInt8]) async throws -> [UInt8] {
        do {
            return try await workers.run(work)
        } catch let error as JPEGError {
            throw APIRefusal(
                422, "cannot read \(web) as a photo: \(error.code)\(error.detail.map { " (\($0))" } ?? "")")
        }
    }

    /// A local copy of a remote file, keyed by the version the page saw (`v`) or a fresh stat.
    func remoteCopy(_ backend: String, request: HTTPRequest, source: WebSource) async throws -> String {
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
