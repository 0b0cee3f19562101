import FerryKit
import FerryServer
import Foundation

extension WebAPI {
    /// `GET /api/preview?path=&w=&h=[&v=]`: the photo fitted to a screen of
    /// `w` x `h` pixels, made with libjpeg-turbo's DCT-scaled decode (a 12 MP
    /// photo decodes at 1/2 or 1/4 for a phone), turned upright by its Exif
    /// orientation, cached like thumbnails. The headers `X-Image-Width` and
    /// `X-Image-Height` give the original's size as shown (turned: a portrait
    /// shot is taller than wide), so the page asks for the original only when
    /// a zoom needs more pixels.
    func preview(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let source = try connectedSource()
            let (web, backend) = try resolve(request.query("path"), in: source)
            let kind = try MediaType.photoKind(web, making: "previews")
            let w = Int(request.query("w") ?? "") ?? 1280
            let h = Int(request.query("h") ?? "") ?? 800
            // Steps of 256 pixels: a resized window reuses a preview instead of making another.
            let side = (min(4096, max(256, max(w, h))) + 255) / 256 * 256
            if kind == .raw, let embedded = await remoteRawJPEG(backend, source: source) {
                // A raw file on a card or server: only its IFDs and its embedded JPEG travel.
                return try await previewResponse(
                    try await scaledJPEG(embedded, side: side, quality: 85, of: web),
                    size: PhotoInfo.read(
                        bytes: Array(embedded.jpeg.prefix(256 * 1024)), orientation: embedded.orientation))
            }
            let local = source.isLocal ? backend : try await remoteCopy(backend, request: request, source: source)
            let attributes = try? FileManager.default.attributesOfItem(atPath: local)
            let version =
                "\(attributes?[.size] as? Int64 ?? 0)-\((attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
            let key = "preview\n\(source.url.hostKey)\n\(backend)\n\(version)\n\(side)\nupright"
            let bytes: [UInt8]
            if let cached = previews.get(key) {
                bytes = cached
            } else {
                bytes = try await scaledJPEG(local, kind: kind, side: side, quality: 85, of: web)
                previews.put(key, bytes)
            }
            let size =
                kind == .raw
                ? RawPreview.jpeg(ofFile: local).map {
                    PhotoInfo.read(bytes: Array($0.jpeg.prefix(256 * 1024)), orientation: $0.orientation)
                }
                : PhotoInfo.read(file: local)
            return try await previewResponse(bytes, size: size)
        }
    }

    /// A preview answer: the JPEG, cacheable, with the original's size when known.
    private func previewResponse(_ bytes: [UInt8], size: PhotoInfo?) async throws -> HTTPResponse {
        var response = HTTPResponse.data(Data(bytes), contentType: "image/jpeg")
        response.headers.add(name: "Cache-Control", value: "private, max-age=86400")
        if let width = size?.width, let height = size?.height {
            response.headers.add(name: "X-Image-Width", value: String(width))
            response.headers.add(name: "X-Image-Height", value: String(height))
        }
        return response
    }

    /// `GET /api/info?path=`: what the photo's Exif says (date taken, camera,
    /// lens, shutter, aperture, ISO, focal length) and its pixel size.
    func info(_ request: HTTPRequest) async -> HTTPResponse {
        await answer {
            let source = try connectedSource()
            let (web, backend) = try resolve(request.query("path"), in: source)
            if source.isLocal {
                // Exif of nothing is not an answer: a missing file or a folder is 404.
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: backend, isDirectory: &isFolder), !isFolder.boolValue
                else {
                    throw APIRefusal(404, "no such file: \(web)")
                }
            }
            let local = source.isLocal ? backend : try await remoteCopy(backend, request: request, source: source)
            var info = PhotoInfo.read(file: local)
            info.name = WebPath.name(web)
            info.size = (try? FileManager.default.attributesOfItem(atPath: local)[.size] as? Int64) ?? nil
            return .json(info)
        }
    }
}
