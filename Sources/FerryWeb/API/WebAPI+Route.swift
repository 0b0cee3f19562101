import FerryKit
import FerryServer

extension WebAPI {
    /// One route of the API: its name under `/api/`, its method, and where its
    /// requests go on a shared one-connection source (``priority(for:)``).
    enum Route: CaseIterable, Sendable {
        case source, connect
        case list, stat, file, thumb, preview, info, newFiles
        case importStatus, startImport, cancelImport, previewImport, importTo, waiting
        case upload, delete, mkdir, rename

        /// The name after `/api/`.
        var name: String {
            switch self {
            case .source: "source"
            case .connect: "connect"
            case .list: "list"
            case .stat: "stat"
            case .file: "file"
            case .thumb: "thumb"
            case .preview: "preview"
            case .info: "info"
            case .newFiles: "new"
            case .importStatus, .startImport: "import"
            case .cancelImport: "import-cancel"
            case .previewImport: "import-preview"
            case .importTo: "import-to"
            case .waiting: "waiting"
            case .upload: "upload"
            case .delete: "delete"
            case .mkdir: "mkdir"
            case .rename: "rename"
            }
        }

        /// Whether it reads (`GET`, `HEAD`) or changes something (`POST`).
        var reads: Bool {
            switch self {
            case .connect, .startImport, .cancelImport, .previewImport, .importTo, .upload, .delete, .mkdir, .rename:
                false
            default: true
            }
        }

        /// Whether it needs a source connected (all but the two that pick one).
        var needsSource: Bool { self != .source && self != .connect }

        /// Where its card requests go by default: a person waits for them
        /// (`.interactive`), or, for a grid's thumbnails, for many at once
        /// (`.browsing`: a single request of the page passes queued thumbnails);
        /// nil for the routes that do not use the source's connection themselves
        /// (an import's downloads run at `.bulk` in its own task).
        var basePriority: TransferPriority? {
            switch self {
            // A preview of an import's names reads the start of up to three photos.
            case .list, .stat, .file, .preview, .info, .newFiles, .previewImport, .upload, .delete, .mkdir, .rename:
                .interactive
            case .thumb: .browsing
            case .source, .connect, .importStatus, .startImport, .cancelImport, .importTo, .waiting: nil
            }
        }

        /// Whether the viewer's prefetch asks it, saying so with the header
        /// `X-Ferry-Priority: prefetch` (so the URL, and with it the browser's
        /// cache, stay those of the viewer's own request).
        var prefetches: Bool { self == .preview || self == .file || self == .info }

        /// Where one request goes: `.prefetch` when the prefetch asks; `.bulk`,
        /// behind an import's downloads in their turn, when marked `background=1` (the page's
        /// refresh of imported badges, its count of new files); else ``basePriority``.
        func priority(for request: HTTPRequest) -> TransferPriority? {
            guard let base = basePriority else { return nil }
            if request.query("background") != nil { return .bulk }
            if prefetches, request.headers["X-Ferry-Priority"]?.lowercased() == "prefetch" { return .prefetch }
            return base
        }

        /// The route for a name and method; a refusal that says what to use instead.
        static func find(_ name: String, method: String) -> Result<Route, APIRefusal> {
            let reading = method == "GET" || method == "HEAD"
            let named = allCases.filter { $0.name == name }
            if let route = named.first(where: { $0.reads == reading }) { return .success(route) }
            guard let other = named.first else { return .failure(APIRefusal(404, "no such API: /api/\(name)")) }
            return .failure(APIRefusal(405, other.reads ? "use GET" : "use POST"))
        }
    }
}
