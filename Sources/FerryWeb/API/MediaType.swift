/// Content types by file extension, and which ones the page may show inline.
///
/// Only images and films are shown inline. Anything else is sent as an attachment with
/// a neutral type, so an HTML or SVG file from a source can never run script
/// in the UI's origin.
enum MediaType {
    /// Extensions the viewer opens (the original FlashAir browser's jpg/jpeg/jpe/png, plus common web images).
    static let viewable: Set<String> = ["jpg", "jpeg", "jpe", "png", "gif", "webp", "bmp"]
    /// Films the viewer plays with the browser's `<video>` (over `/api/file`, with `Range`).
    static let video: Set<String> = ["mp4", "mov", "m4v"]
    /// Camera raw files and HEIC: not shown by the browser itself (the viewer shows the server's
    /// preview, never the original); a file-type tile when the server cannot make a thumbnail.
    static let raw: Set<String> = ["cr2", "cr3", "nef", "arw", "dng", "raf", "orf", "rw2", "heic", "heif", "hif"]
    /// Raw files whose embedded JPEG the server can find (TIFF-based ones, Fujifilm's RAF, Canon's CR3).
    static let rawWithPreview: Set<String> = ["cr2", "cr3", "nef", "arw", "dng", "orf", "rw2", "pef", "raf"]
    /// HEIC/HEIF photos (phones; Canon's HIF), decoded with libheif.
    static let heif: Set<String> = ["heic", "heif", "hif"]
    /// Extensions the server can make thumbnails of.
    static let thumbnailable: Set<String> = ["jpg", "jpeg", "jpe"]

    /// The lowercased extension of a name, or "".
    static func fileExtension(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }

    /// What the server makes reduced JPEGs (`what`: thumbnails, previews) of `name` from: a
    /// JPEG, a raw file's embedded JPEG, or a HEIF image.
    ///
    /// - Throws: ``APIRefusal`` 415 for any other kind of file.
    static func photoKind(_ name: String, making what: String) throws(APIRefusal) -> ThumbnailMaker.Kind {
        let ext = fileExtension(name)
        if rawWithPreview.contains(ext) { return .raw }
        if heif.contains(ext) { return .heif }
        guard thumbnailable.contains(ext) else { throw APIRefusal(415, "no \(what) for this kind of file: \(name)") }
        return .jpeg
    }

    /// Whether the viewer can show the file.
    static func isViewable(_ name: String) -> Bool { viewable.contains(fileExtension(name)) }

    /// The `Content-Type` for an inline image, or nil for everything else.
    static func inlineType(_ name: String) -> String? {
        switch fileExtension(name) {
        case "jpg", "jpeg", "jpe": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "bmp": "image/bmp"
        case "mp4", "m4v": "video/mp4"
        case "mov": "video/quicktime"
        default: nil
        }
    }
}
