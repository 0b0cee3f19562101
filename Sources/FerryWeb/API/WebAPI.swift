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
/// | `POST /api/import-preview` | the body of `/api/import`: where the first new files would go |
/// | `POST /api/import-to` `{"path"}` | imports go to another of the server's `--import-to` folders |
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
    /// One import per folder the page may import to (``WebConfiguration/importChoices``),
    /// each with that folder's history; the first is the default.
    let importJobs: [ImportJob]
    /// Which of ``importJobs`` the page imports to now (`POST /api/import-to`).
    private let chosenImport = Mutex(0)
    /// The import the page starts, counts and shows: the one of the chosen folder.
    var importJob: ImportJob { importJobs[chosenImport.withLock { $0 }] }

    /// Runs `body` on the chosen folder's import with the choice held: a choice
    /// and a start never interleave (the import starts in the folder the page shows).
    func withChosenImport<T, E: Error>(_ body: (ImportJob) throws(E) -> T) throws(E) -> T {
        try chosenImport.withLock { (index: inout Int) throws(E) -> T in try body(importJobs[index]) }
    }
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
        importJobs = configuration.importChoices.map { ImportJob(directory: $0) }
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
        let name = String(request.path.dropFirst("/api/".count))
        var response: HTTPResponse
        let started = ContinuousClock.now
        let waited = Mutex<Duration?>(nil)
        let route = Route.find(name, method: request.method)
        let priority = source.flatMap { _ in (try? route.get())?.priority(for: request) }
        switch route {
        case .failure(let refusal):
            // Without a source only the routes that pick one are known.
            response =
                source == nil && name != "source" && name != "connect"
                ? .failure(409, "no source connected") : refusal.response
        case .success(let route):
            if let source, let priority {
                // On a card, the engine puts the page's requests before the viewer's prefetch, and both
                // before an import; the share tells the page while one of them waits.
                let record: (Duration) -> Void = { d in waited.withLock { $0 = d } }
                response = await source.share.run(priority, page: request.query("page"), waited: record) {
                    await api(route, request)
                }
            } else {
                response = await api(route, request)
            }
        }
        response.headers.add(name: "X-Content-Type-Options", value: "nosniff")
        if Self.logsTimings, name != "waiting" {
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

    private func api(_ route: Route, _ request: HTTPRequest) async -> HTTPResponse {
        if route.needsSource, source == nil { return .failure(409, "no source connected") }
        switch route {
        case .source: return sourceInfo()
        case .connect: return await connect(request)
        case .list: return await list(request)
        case .stat: return await stat(request)
        case .file: return await file(request)
        case .thumb: return await thumbnail(request)
        case .upload: return await upload(request)
        case .delete: return await delete(request)
        case .mkdir: return await makeDirectory(request)
        case .rename: return await rename(request)
        case .preview: return await preview(request)
        case .info: return await info(request)
        case .importStatus: return importStatus()
        case .startImport: return await startImport(request)
        case .cancelImport: return cancelImport()
        case .newFiles: return await newFiles(request)
        case .previewImport: return await previewImport(request)
        case .importTo: return chooseImportFolder(request)
        case .waiting: return await waiting(request)
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
        /// The folders the page may choose among (full paths; the chosen one is ``importPath``),
        /// absent when there is only one.
        var importChoices: [String]?
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
                importPath: importJob.directory,
                importChoices: importJobs.count > 1 ? importJobs.map(\.directory) : nil))
    }

    private struct ImportToBody: Decodable { var path: String }

    /// `POST /api/import-to {"path"}`: where the page's next imports go, one of
    /// the folders the server was started with (400 for any other, 409 while an
    /// import runs); answers as `/api/source` does.
    func chooseImportFolder(_ request: HTTPRequest) -> HTTPResponse {
        guard let body: ImportToBody = decode(request) else { return .failure(400, "expected JSON {\"path\": ...}") }
        // Checked and set under the choice's lock, which a start holds too (``withChosenImport(_:)``).
        let choice = chosenImport.withLock { chosen in
            let choice = Self.importFolder(
                body.path, among: importJobs.map(\.directory), running: importJobs.contains(where: \.isRunning))
            if case .success(let index) = choice { chosen = index }
            return choice
        }
        switch choice {
        case .success:
            return sourceInfo()
        case .failure(let refusal):
            return refusal.response
        }
    }

    /// Which of the server's import folders a page's choice is: only one of
    /// `folders` (the page never names a folder of its own), and not while an import runs.
    static func importFolder(_ path: String, among folders: [String], running: Bool) -> Result<Int, APIRefusal> {
        guard let index = folders.firstIndex(of: path) else {
            return .failure(
                APIRefusal(400, "not a folder this server imports to; it imports to \(folders.joined(separator: ", "))")
            )
        }
        guard !running else { return .failure(APIRefusal(409, "an import is running: wait for it or cancel it")) }
        return .success(index)
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

    /// The source connected, for a handler that needs one (``api(_:_:)`` refuses
    /// such routes without one already; this is that refusal for the types).
    func connectedSource() throws(APIRefusal) -> WebSource {
        guard let source else { throw APIRefusal(409, "no source connected") }
        return source
    }

    /// A request's JSON body, or a 400 that says what was expected.
    func jsonBody<Body: Decodable>(of request: HTTPRequest, expecting shape: String) throws(APIRefusal) -> Body {
        guard let body: Body = decode(request) else { throw APIRefusal(400, shape) }
        return body
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
