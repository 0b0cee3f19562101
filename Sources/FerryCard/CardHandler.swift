import FerryKit
import FerryServer
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Answers every request of `ferry card`: `command.cgi`, `upload.cgi`,
/// `thumbnail.cgi`, `config.cgi`, and plain file downloads, as docs/FLASHAIR.md
/// describes a real card.
///
/// Shared by the server's connection threads; its mutable state (upload folder,
/// FTIME, change flag, shared memory ...) lives in one `Mutex`.
final class CardHandler: Sendable {
    let root: CardRoot
    let configuration: FlashAirCardConfiguration
    let cid: String
    let state: Mutex<CardState>

    /// The card's mutable state, as a real card keeps it in its firmware: one for
    /// all clients.
    struct CardState: Sendable {
        /// Set by `UPDIR`, where the next POST stores its file.
        var uploadDirectory = "/"
        /// Set by `FTIME`, applied to the next stored file, then forgotten.
        var ftime: FATDateTime?
        /// Set by `WRITEPROTECT=ON` (the camera's writes would be blocked).
        var writeProtected = false
        /// op=102 and op=121.
        var changes: CardChangeTracker
        /// op=130/131: 512 bytes shared with a Lua script on a real card.
        var sharedMemory = [UInt8](repeating: 0, count: 512)
        /// op=200–203.
        var photoShare = false
        /// op=221, changed by `config.cgi?TIMEZONE=`.
        var timeZoneQuarterHours = TimeZone.current.secondsFromGMT() / 900
    }

    init(root: CardRoot, configuration: FlashAirCardConfiguration) {
        self.root = root
        self.configuration = configuration
        self.cid = configuration.cid(for: root.path)
        self.state = Mutex(CardState(changes: CardChangeTracker(root: root.path.isEmpty ? "/" : root.path)))
    }

    /// The local root as a path usable in system calls.
    var rootPath: String { root.path.isEmpty ? "/" : root.path }

    /// Answers one request.
    func handle(_ original: HTTPRequest) -> HTTPResponse {
        let request = CardHandler.originForm(original)
        if configuration.servesWebDAV, CardHandler.webDAVMethods.contains(request.method) {
            return webDAV(request)
        }
        switch request.rawPath {
        case "/command.cgi": return command(request)
        case "/upload.cgi": return upload(request)
        case "/thumbnail.cgi": return thumbnail(request)
        case "/config.cgi": return config(request)
        default: return file(request)
        }
    }

    /// A request sent to a proxy names the whole URL (`GET http://flashair/command.cgi`):
    /// tools that know the card as `http://flashair/` reach `ferry card` through
    /// `HTTP_PROXY`. Servers must accept that absolute form (RFC 9112, 3.2.2).
    static func originForm(_ request: HTTPRequest) -> HTTPRequest {
        let target = request.target
        guard let schemeEnd = target.range(of: "://"), target.lowercased().hasPrefix("http") else { return request }
        let afterAuthority = target[schemeEnd.upperBound...].firstIndex { $0 == "/" || $0 == "?" }
        var origin = afterAuthority.map { String(target[$0...]) } ?? "/"
        if origin.hasPrefix("?") { origin = "/" + origin }
        return HTTPRequest(
            method: request.method, target: origin, version: request.version, headers: request.headers,
            remoteAddress: request.remoteAddress, remotePort: request.remotePort, body: request.body)
    }

    // MARK: Replies

    /// A CGI text reply, exactly the bytes given (tools compare `SUCCESS` exactly).
    static func reply(_ text: String, status: Int = 200) -> HTTPResponse {
        .text(text, status: status, contentType: "text/plain")
    }

    static let success = reply("SUCCESS")
    static let error = reply("ERROR")

    /// The answer to a refused path: 403 or 404.
    static func refused(_ refusal: CardRefusal) -> HTTPResponse {
        .status(refusal.status)
    }

    // MARK: Files

    /// FAT attributes of a local file, as a real card would have them.
    static func attributes(name: String, stat st: stat) -> FlashAirAttributes {
        var a: FlashAirAttributes = (st.st_mode & S_IFMT) == S_IFDIR ? .directory : .archive
        if name.hasPrefix(".") { a.insert(.hidden) }
        if st.st_mode & S_IWUSR == 0 { a.insert(.readOnly) }
        return a
    }

    /// The `Content-Type` for a plain download, from the name's extension.
    static func contentType(_ name: String) -> String {
        switch LocalPath.pathExtension(name).lowercased() {
        case "jpg", "jpeg", "jpe": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "mov": "video/quicktime"
        case "mp4": "video/mp4"
        case "txt", "log": "text/plain"
        case "htm", "html": "text/html"
        case "lua": "text/plain"
        default: "application/octet-stream"
        }
    }

    /// `GET /PATH`: the file, with `Range` unless the card is set to ignore it.
    func file(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "GET" || request.method == "HEAD" else { return .status(405) }
        // `path` is decoded; a `%00` in it never gets here (the server answers 400).
        return withExisting(request.path) { local, st in
            guard (st.st_mode & S_IFMT) == S_IFREG else { return .status(404) }
            return .file(
                local, contentType: CardHandler.contentType(local), supportsRanges: configuration.supportsRanges)
        }
    }

    /// Answers with `body` for the local file or folder a card path names and its
    /// `stat`; a path the card refuses gets its refusal (403), a missing one 404.
    func withExisting(_ cardPath: String, _ body: (_ local: String, _ st: stat) -> HTTPResponse) -> HTTPResponse {
        let local: String
        do {
            local = try root.existing(cardPath)
        } catch {
            return CardHandler.refused(error)
        }
        var st = stat()
        guard stat(local, &st) == 0 else { return .status(404) }
        return body(local, st)
    }

    /// `GET /thumbnail.cgi?/PATH`: the Exif thumbnail, 404 when there is none.
    func thumbnail(_ request: HTTPRequest) -> HTTPResponse {
        guard let raw = request.rawQuery, let cardPath = RemoteURL.percentDecode(raw) else { return .status(404) }
        return withExisting(cardPath) { local, st in
            guard (st.st_mode & S_IFMT) == S_IFREG, let found = try? EXIFThumbnail.extract(fromFileAt: local) else {
                return .status(404)
            }
            var headers: HTTPHeaders = ["Content-Type": "image/jpeg"]
            if configuration.sendsExifHeaders {
                if let w = found.width { headers.add(name: "X-exif-WIDTH", value: String(w)) }
                if let h = found.height { headers.add(name: "X-exif-HEIGHT", value: String(h)) }
                if let o = found.orientation { headers.add(name: "X-exif-ORIENTATION", value: String(o)) }
            }
            return HTTPResponse(status: 200, headers: headers, body: .data(Data(found.jpeg)))
        }
    }

    /// `GET /config.cgi?MASTERCODE=...&KEY=VALUE`: settings take effect "after a
    /// restart" on a real card; here only TIMEZONE is remembered. A missing or
    /// malformed master code is an ERROR.
    func config(_ request: HTTPRequest) -> HTTPResponse {
        guard let code = request.query("MASTERCODE"), code.count == 12, code.allSatisfy(\.isHexDigit) else {
            return CardHandler.error
        }
        _ = code
        if let tz = request.query("TIMEZONE") {
            guard let q = Int(tz), (-48...56).contains(q) else { return CardHandler.error }
            state.withLock { $0.timeZoneQuarterHours = q }
        }
        return CardHandler.success
    }
}
