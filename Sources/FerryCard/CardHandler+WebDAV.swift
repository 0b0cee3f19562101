import FerryKit
import FerryServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// WebDAV as a FlashAir W-03/W-04 offers it in drive mode (`WEBDAV=1` or `2` in
/// CONFIG, firmware 3.00.00 on): on the card's own port, beside command.cgi.
/// Level 1 answers OPTIONS, PROPFIND (`Depth: 0` and `1`) and GET; level 2 also
/// PUT, MKCOL, DELETE and MOVE. Plain GET and HEAD stay with ``file(_:)``.
extension CardHandler {
    /// The methods that go to ``webDAV(_:)`` when the card serves WebDAV.
    static let webDAVMethods: Set<String> = [
        "OPTIONS", "PROPFIND", "PROPPATCH", "PUT", "MKCOL", "DELETE", "MOVE", "COPY",
    ]

    /// The methods a level allows, for `Allow`.
    func allowedMethods() -> String {
        let read = "OPTIONS, GET, HEAD, PROPFIND"
        return configuration.webDAVLevel >= 2 ? read + ", PUT, MKCOL, DELETE, MOVE" : read
    }

    /// Answers one WebDAV request.
    func webDAV(_ request: HTTPRequest) -> HTTPResponse {
        switch request.method {
        case "OPTIONS":
            return HTTPResponse(
                status: 200, headers: ["DAV": "1", "Allow": allowedMethods(), "MS-Author-Via": "DAV"], body: .empty)
        case "PROPFIND": return propfind(request)
        default: break
        }
        guard configuration.webDAVLevel >= 2 else {
            // WEBDAV=1: the card's drive is read-only.
            return HTTPResponse(
                status: 403, headers: ["Allow": allowedMethods()], body: .text("read-only (WEBDAV=1)\n"))
        }
        let answer: HTTPResponse
        switch request.method {
        case "PUT": answer = put(request)
        case "MKCOL": answer = mkcol(request)
        case "DELETE": answer = davDelete(request)
        case "MOVE": answer = move(request)
        default: return HTTPResponse(status: 405, headers: ["Allow": allowedMethods()], body: .empty)
        }
        if answer.status < 300 { state.withLock { $0.changes.recordWrite() } }
        return answer
    }

    // MARK: PROPFIND

    /// `PROPFIND` with `Depth: 0` or `1`; `infinity` is refused (403), as most servers do.
    func propfind(_ request: HTTPRequest) -> HTTPResponse {
        let depth = request.headers["Depth"]?.trimmingCharacters(in: .whitespaces) ?? "infinity"
        guard depth == "0" || depth == "1" else { return .status(403) }
        return withExisting(request.path) { local, st in
            let cardPath = root.cardPath(of: local)
            var xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:multistatus xmlns:D=\"DAV:\">\n"
            xml += CardHandler.propResponse(cardPath: cardPath, stat: st)
            if depth == "1" && (st.st_mode & S_IFMT) == S_IFDIR {
                let names = ((try? FileManager.default.contentsOfDirectory(atPath: local)) ?? []).sorted()
                for name in names where !name.hasPrefix(".ferry-card-upload-") {
                    var child = stat()
                    guard stat(local + "/" + name, &child) == 0 else { continue }
                    xml += CardHandler.propResponse(
                        cardPath: (cardPath == "/" ? "" : cardPath) + "/" + name, stat: child)
                }
            }
            xml += "</D:multistatus>\n"
            return HTTPResponse(
                status: 207, headers: ["Content-Type": "application/xml; charset=utf-8"], body: .text(xml))
        }
    }

    /// One `<D:response>`: kind, size and time.
    static func propResponse(cardPath: String, stat st: stat) -> String {
        let folder = (st.st_mode & S_IFMT) == S_IFDIR
        var href = hrefEncode(cardPath)
        if folder && !href.hasSuffix("/") { href += "/" }
        var props = folder ? "<D:resourcetype><D:collection/></D:resourcetype>" : "<D:resourcetype/>"
        if !folder { props += "<D:getcontentlength>\(st.st_size)</D:getcontentlength>" }
        props += "<D:getlastmodified>\(HTTPDate.format(secondsSince1970: Int(st.st_mtim.tv_sec)))</D:getlastmodified>"
        return "<D:response><D:href>\(href)</D:href><D:propstat><D:prop>\(props)</D:prop>"
            + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>\n"
    }

    /// A card path as an `href`: every byte but unreserved ones and `/` escaped
    /// (so `&` and `<` need no XML escape either).
    static func hrefEncode(_ path: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }

    // MARK: Changes (level 2)

    /// Where a new name goes, or the answer refusing it: 409 when the folder is missing.
    func davTarget(_ cardPath: String) -> Result<String, HTTPResponseBox> {
        do throws(CardRefusal) {
            let local = try root.creatable(cardPath)
            guard let name = (try? CardRoot.components(cardPath))?.last, CardHandler.isValidName(name) else {
                return .failure(HTTPResponseBox(.status(400)))
            }
            return .success(local)
        } catch {
            return .failure(HTTPResponseBox(error == .notFound ? .status(409) : CardHandler.refused(error)))
        }
    }

    /// `PUT`: the body under the name, the name appearing only when all of it is there.
    func put(_ request: HTTPRequest) -> HTTPResponse {
        let destination: String
        switch davTarget(request.path) {
        case .success(let local): destination = local
        case .failure(let box): return box.response
        }
        var st = stat()
        let existed = stat(destination, &st) == 0
        if existed && (st.st_mode & S_IFMT) == S_IFDIR { return .status(405) }
        let content: MultipartPart.Content
        switch request.body {
        case .none: content = .data(Data())
        case .data(let data): content = .data(data)
        case .file(let path, let size): content = .file(path: path, size: size)
        case .multipart: return .status(415)
        }
        guard CardHandler.place(content, at: destination) else { return .status(507) }
        chmod(destination, 0o644)
        return .status(existed ? 204 : 201)
    }

    /// `MKCOL`: one folder; 405 when the name is taken, 409 when its parent is missing.
    func mkcol(_ request: HTTPRequest) -> HTTPResponse {
        let destination: String
        switch davTarget(request.path) {
        case .success(let local): destination = local
        case .failure(let box): return box.response
        }
        if case .data(let body) = request.body, !body.isEmpty { return .status(415) }
        var st = stat()
        if lstat(destination, &st) == 0 { return .status(405) }
        return mkdir(destination, 0o755) == 0 ? .status(201) : .status(507)
    }

    /// `DELETE`: a file, or a folder with all it holds; never the root.
    func davDelete(_ request: HTTPRequest) -> HTTPResponse {
        guard !((try? CardRoot.components(request.path)) ?? []).isEmpty else { return .status(403) }
        do throws(CardRefusal) {
            _ = try root.existing(request.path)
            let named = try root.creatable(request.path)
            try? FileManager.default.removeItem(atPath: named)
            var st = stat()
            return lstat(named, &st) == 0 ? .status(500) : .status(204)
        } catch {
            return CardHandler.refused(error)
        }
    }

    /// `MOVE` to `Destination` (a URL or an absolute path on this card);
    /// `Overwrite: F` refuses a taken name with 412.
    func move(_ request: HTTPRequest) -> HTTPResponse {
        guard let destinationHeader = request.headers["Destination"],
            let destinationPath = CardHandler.destinationPath(destinationHeader)
        else { return .status(400) }
        guard !((try? CardRoot.components(request.path)) ?? []).isEmpty else { return .status(403) }
        let source: String
        do throws(CardRefusal) {
            _ = try root.existing(request.path)
            source = try root.creatable(request.path)
        } catch {
            return CardHandler.refused(error)
        }
        let destination: String
        switch davTarget(destinationPath) {
        case .success(let local): destination = local
        case .failure(let box): return box.response
        }
        if destination == source { return .status(403) }
        var st = stat()
        let existed = lstat(destination, &st) == 0
        if existed {
            guard request.headers["Overwrite"]?.uppercased() != "F" else { return .status(412) }
            try? FileManager.default.removeItem(atPath: destination)
        }
        return rename(source, destination) == 0 ? .status(existed ? 204 : 201) : .status(409)
    }

    /// The decoded path of a `Destination` header: `http://HOST/a%20b` or `/a%20b`.
    static func destinationPath(_ header: String) -> String? {
        var rest = Substring(header.trimmingCharacters(in: .whitespaces))
        if let scheme = rest.range(of: "://") {
            rest = rest[scheme.upperBound...]
            guard let slash = rest.firstIndex(of: "/") else { return "/" }
            rest = rest[slash...]
        }
        if let query = rest.firstIndex(of: "?") { rest = rest[..<query] }
        guard rest.hasPrefix("/") else { return nil }
        return RemoteURL.percentDecode(String(rest))
    }
}

/// An `HTTPResponse` as a `Result`'s failure.
struct HTTPResponseBox: Error {
    let response: HTTPResponse
    init(_ response: HTTPResponse) { self.response = response }
}
