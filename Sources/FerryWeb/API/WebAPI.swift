import FerryKit
import FerryServer
import Foundation
import Synchronization

/// The JSON API under `/api/` and the page's files, over one FerryKit backend.
///
/// | request | answer |
/// |---|---|
/// | `GET /api/source` | the source (redacted URL), its capabilities |
/// | `POST /api/connect` `{"url"}` | opens a source (only when started without one) |
/// | `GET /api/list?path=` | `{path, count, entries}` in the source's order, with `hidden`, `imported` |
/// | `GET /api/stat?path=` | one entry |
/// | `GET /api/file?path=[&download=1]` | the file, with `Range` |
/// | `GET /api/thumb?path=[&v=][&s=512]` | a JPEG thumbnail (256 px, or 512 where the source is fast) |
/// | `GET /api/preview?path=&w=&h=` | the photo fitted to `w` x `h`, its size in `X-Image-Width/Height` |
/// | `GET /api/info?path=` | date taken, camera, lens, exposure, pixel size |
/// | `GET /api/new` | `{count, items, bytes, imported}`: files of the source not imported yet; `items` counts a raw + JPEG pair and its sidecars once |
/// | `GET /api/import` | the running or last import |
/// | `POST /api/import` `{"paths"?, "layout"?, "deleteAfter"?, "restart"?}` | starts an import |
/// | `POST /api/import-cancel` | cancels it (partial files stay as `.part`) |
/// | `GET /api/waiting?page=&shown=` | `{waiting}`: whether a request of that page waits for the card, once it differs from `shown` |
/// | `POST /api/upload?path=FOLDER[&overwrite=1]` | multipart files into a folder |
/// | `POST /api/delete` `{"path", "recursive"?}` | deletes a file or a folder (with its contents if asked) |
/// | `POST /api/mkdir` `{"path"}` | creates a folder |
/// | `POST /api/rename` `{"path", "name"}` | renames within the folder |
///
/// Failures answer `{"error": TEXT}` with the backend's own text and a status
/// that fits it (404, 409, 501 for an operation the backend cannot do ...).
final class WebAPI: Sendable {
    let configuration: WebConfiguration
    let access: AccessGuard
    let assets = StaticAssets()
    let thumbnails: ThumbnailCache
    let remoteFiles: RemoteFileCache
    let workers = BlockingWorkers(count: ProcessInfo.processInfo.activeProcessorCount, label: "ferry.web.jpeg")
    /// Where multipart uploads are spooled by the HTTP server.
    let uploadSpool = NSTemporaryDirectory()
    private let current: Mutex<WebSource?>
    /// Whether the page may pick the source (the server was started without one).
    let canConnect: Bool
    /// The import the page started, if any.
    let importJob: ImportJob
    /// Previews fitted to the screen, cached like thumbnails.
    let previews: ThumbnailCache
    /// Backend paths that uploads from the page are writing now (their `.part` is not listed).
    let uploading = Mutex<Set<String>>([])
    /// The lock on this process's folder of copies, held while it runs (``RemoteFileCache/holdLock(on:)``).
    private let filesLock: Int32

    init(configuration: WebConfiguration) throws {
        self.configuration = configuration
        access = AccessGuard(token: configuration.accessToken)
        let cache = configuration.resolvedCacheDirectory
        // Copies left by ferry serve processes killed before their cleanup.
        RemoteFileCache.removeLeftovers(in: cache)
        let images = configuration.resolvedImageCacheLimit
        thumbnails = ThumbnailCache(folder: cache + "/thumbnails", diskLimit: images / 4)
        let files = cache + "/" + RemoteFileCache.folderName(pid: getpid())
        remoteFiles = RemoteFileCache(folder: files, limit: configuration.resolvedFileCacheLimit)
        filesLock = RemoteFileCache.holdLock(on: files) ?? -1
        previews = ThumbnailCache(folder: cache + "/previews", memoryLimit: 64 << 20, diskLimit: images - images / 4)
        importJob = ImportJob(directory: configuration.resolvedImportDirectory)
        if let url = configuration.source {
            current = Mutex(WebSource(fs: try Ferry.fileSystem(for: url, options: configuration.connectionOptions)))
            canConnect = false
        } else {
            current = Mutex(nil)
            canConnect = true
        }
    }

    /// Removes this run's copies of remote files.
    func cleanUp() {
        try? FileManager.default.removeItem(
            atPath: configuration.resolvedCacheDirectory + "/" + RemoteFileCache.folderName(pid: getpid()))
    }

    var source: WebSource? { current.withLock { $0 } }

    /// Answers one request.
    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        if let redirect = access.tokenRedirect(request) { return redirect }
        let isAPI = request.path.hasPrefix("/api/")
        if let refusal = access.check(request, needsToken: isAPI) { return refusal }
        guard isAPI else {
            guard request.method == "GET" || request.method == "HEAD" else {
                return .failure(405, "method not allowed")
            }
            return assets.response(for: request.path)
        }
        let route = String(request.path.dropFirst("/api/".count))
        var response: HTTPResponse
        let started = ContinuousClock.now
        let waited = Mutex<Duration?>(nil)
        let priority = source.flatMap { _ in Self.priority(route: route, request) }
        if let source, let priority {
            // On a card, the page's requests go before the viewer's prefetch, and both before an import.
            let record: (Duration) -> Void = { d in waited.withLock { $0 = d } }
            response = await source.share.run(
                priority, page: request.query("page"), oneAtATime: route == "thumb", waited: record
            ) {
                await api(request)
            }
        } else {
            if let source, Self.interactiveRoutes.contains(route), request.query("background") != nil {
                await source.share.afterThePage()
            }
            response = await api(request)
        }
        response.headers.add(name: "X-Content-Type-Options", value: "nosniff")
        if Self.logsTimings, route != "waiting" {
            // FERRY_WEB_TIMINGS=1: one line per API request, for finding where a slow answer's time went.
            let took = ContinuousClock.now - started
            var line = "ferry serve: \(request.method) \(request.target) \(response.status) in \(Self.ms(took))"
            if let priority {
                line += " (\(priority), waited for the card \(Self.ms(waited.withLock { $0 } ?? .zero)))"
            }
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        return response
    }

    /// Whether `FERRY_WEB_TIMINGS` asks for a line per API request on stderr.
    static let logsTimings =
        ProcessInfo.processInfo.environment["FERRY_WEB_TIMINGS"].map { !$0.isEmpty && $0 != "0" } ?? false

    private static func ms(_ d: Duration) -> String {
        let c = d.components
        return "\(c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000) ms"
    }

    /// Requests a person waits for: on a one-connection source the import's and the
    /// prefetch's downloads make way for them (unless marked `background=1`, as the page's
    /// refresh of imported badges and its count of new files are: those wait until the page's
    /// requests are done, then take their turn behind the import).
    static let interactiveRoutes: Set<String> = [
        "list", "stat", "file", "thumb", "preview", "info", "new", "upload", "delete", "mkdir", "rename",
        "import-preview",
    ]

    /// Requests the viewer's prefetch makes (with the header `X-Ferry-Priority: prefetch`,
    /// so the URL and with it the browser's cache stay those of the viewer's own request).
    static let prefetchRoutes: Set<String> = ["preview", "file", "info"]

    /// Where a request goes on a shared connection; nil: it takes its turn.
    static func priority(route: String, _ request: HTTPRequest) -> ConnectionShare.Priority? {
        guard interactiveRoutes.contains(route), request.query("background") == nil else { return nil }
        if prefetchRoutes.contains(route), request.headers["X-Ferry-Priority"]?.lowercased() == "prefetch" {
            return .prefetch
        }
        return .interactive
    }

    private func api(_ request: HTTPRequest) async -> HTTPResponse {
        let route = String(request.path.dropFirst("/api/".count))
        let reading = request.method == "GET" || request.method == "HEAD"
        switch (route, reading) {
        case ("source", true): return sourceInfo()
        case ("connect", false): return await connect(request)
        case (_, _) where source == nil: return .failure(409, "no source connected")
        case ("list", true): return await list(request)
        case ("stat", true): return await stat(request)
        case ("file", true): return await file(request)
        case ("thumb", true): return await thumbnail(request)
        case ("upload", false): return await upload(request)
        case ("delete", false): return await delete(request)
        case ("mkdir", false): return await makeDirectory(request)
        case ("rename", false): return await rename(request)
        case ("preview", true): return await preview(request)
        case ("info", true): return await info(request)
        case ("import", true): return importStatus()
        case ("import", false): return await startImport(request)
        case ("import-cancel", false): return cancelImport()
        case ("import-preview", false): return await previewImport(request)
        case ("new", true): return await newFiles(request)
        case ("waiting", true): return await waiting(request)
        case ("list", false), ("stat", false), ("file", false), ("thumb", false), ("source", false),
            ("preview", false), ("info", false), ("new", false), ("waiting", false):
            return .failure(405, "use GET")
        case ("upload", true), ("delete", true), ("mkdir", true), ("rename", true), ("connect", true),
            ("import-cancel", true), ("import-preview", true):
            return .failure(405, "use POST")
        default: return .failure(404, "no such API: /api/\(route)")
        }
    }

    // MARK: - Source

    private struct SourceInfo: Encodable {
        var connected: Bool
        var url: String?
        var scheme: String?
        var name: String?
        var canConnect: Bool
        var capabilities: WebSource.Capabilities?
        /// One connection only (a card): the page shows "waiting for the card" on slow answers.
        var singleConnection: Bool?
        /// The import folder's name.
        var importTo: String?
        /// The import folder's full local path.
        var importPath: String?
    }

    private func sourceInfo() -> HTTPResponse {
        guard let source else { return .json(SourceInfo(connected: false, canConnect: canConnect)) }
        let name =
            source.url.scheme == .file
            ? (WebPath.name(source.root).isEmpty ? "/" : WebPath.name(source.root)) : source.url.host
        return .json(
            SourceInfo(
                connected: true, url: source.url.redacted, scheme: source.url.scheme.rawValue, name: name,
                canConnect: canConnect, capabilities: source.capabilities,
                singleConnection: source.share.isSingleConnection, importTo: importJob.status.destination,
                importPath: importJob.directory))
    }

    private struct ConnectBody: Decodable { var url: String }

    private func connect(_ request: HTTPRequest) async -> HTTPResponse {
        guard canConnect else { return .failure(403, "this server was started for one source") }
        guard let body: ConnectBody = decode(request) else { return .failure(400, "expected JSON {\"url\": ...}") }
        do {
            let text = body.url.trimmingCharacters(in: .whitespaces)
            let source: WebSource
            if SourceProbe.isBareHost(text) {
                // A host or IP typed alone: look for a card, then an FTP server, then a web server.
                source = try await SourceProbe.open(text, options: configuration.connectionOptions)
            } else {
                let url = try RemoteURL(parsing: text)
                if url.scheme == .file, configuration.accessToken != nil {
                    return .failure(
                        403, "local folders can only be opened from the command line when serving beyond this machine")
                }
                source = WebSource(fs: try Ferry.fileSystem(for: url, options: configuration.connectionOptions))
                _ = try await source.fs.list(source.root.isEmpty ? "/" : source.root)
            }
            current.withLock { $0 = source }
            return sourceInfo()
        } catch {
            return .failure(error, source: nil)
        }
    }

    // MARK: - Helpers

    /// Checks a page path and maps it to the backend.
    ///
    /// - Throws: ``APIRefusal``: 400 for a malformed or escaping path, 403
    ///   for a local path that leaves the root through a symbolic link.
    func resolve(_ text: String?, in source: WebSource) throws(APIRefusal) -> (web: String, backend: String) {
        if let text, text.utf8.count > Self.maxPathBytes {
            // No file system holds such a path (PATH_MAX); said before any backend tries.
            throw APIRefusal(414, "path too long: \(text.utf8.count) bytes, the most is \(Self.maxPathBytes)")
        }
        guard let web = WebPath.clean(text) else { throw APIRefusal(Self.badPath) }
        do {
            return (web, try source.backendPath(web))
        } catch {
            throw APIRefusal(.failure(error, source: source))
        }
    }

    /// Decodes a JSON body.
    func decode<T: Decodable>(_ request: HTTPRequest) -> T? {
        guard let data = request.bodyData, !data.isEmpty else { return nil }
        return try? JSONDecoder().decode(T.self, from: data)
    }

    /// Runs a handler body, turning refusals and backend errors into answers.
    func answer(_ body: () async throws -> HTTPResponse) async -> HTTPResponse {
        do {
            return try await body()
        } catch let refusal as APIRefusal {
            return refusal.response
        } catch {
            return .failure(error, source: source)
        }
    }

    /// The longest path the API takes: Linux's `PATH_MAX` less its NUL.
    static let maxPathBytes = 4095

    static let badPath = HTTPResponse.failure(
        400, "bad path: it must be absolute, without '.', '..' or control characters, and stay inside the root")
}
