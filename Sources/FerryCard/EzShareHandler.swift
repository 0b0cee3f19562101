import FerryKit
import FerryServer
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Answers every request of `ferry card --kind ezshare`: `/dir`, `/download`,
/// `/client` and `/`, as an ez Share card does (EzShareCard).
final class EzShareHandler: Sendable {
    let root: CardRoot
    let firmware: String
    /// `HOST:PORT` the server listens on, for a request without a usable `Host`.
    private let fallbackHost = Mutex("127.0.0.1")

    init(root: CardRoot, firmware: String) {
        self.root = root
        self.firmware = firmware
    }

    func setFallbackHost(_ host: String) { fallbackHost.withLock { $0 = host } }

    func handle(_ original: HTTPRequest) -> HTTPResponse {
        let request = CardHandler.originForm(original)
        guard request.method == "GET" || request.method == "HEAD" else { return .status(405) }
        switch request.rawPath.lowercased() {
        case "/dir": return directory(request)
        case "/download": return download(request)
        case "/client": return client(request)
        case "/":
            return .text(
                "<html><head><title>ez Share</title></head><body><a href=\"dir?dir=A:\">A:</a></body></html>\n",
                contentType: "text/html")
        default: return .status(404)
        }
    }

    // MARK: Requests

    /// `GET /dir?dir=A:%5CDCIM` (or `A:\DCIM`): the folder page.
    func directory(_ request: HTTPRequest) -> HTTPResponse {
        let found: Found
        switch lookUp("dir", of: request) {
        case .success(let folder): found = folder
        case .failure(let box): return box.response
        }
        guard found.isDirectory else { return .status(404) }
        let host = linkHost(request)
        let cardFolder = "A:" + found.aliases.map { "\\" + $0 }.joined()
        var lines: [EzShareListing.Line] = []
        if !found.aliases.isEmpty {
            // `.` and `..` as FAT keeps them in every folder but the root.
            let parentLocal = found.locals.count > 1 ? found.locals[found.locals.count - 2] : root.path
            let parent = "A:" + found.aliases.dropLast().map { "\\" + $0 }.joined()
            lines.append(dotLine(".", local: found.local, dir: cardFolder))
            lines.append(dotLine("..", local: parentLocal.isEmpty ? "/" : parentLocal, dir: parent))
        }
        let entries = root.entries(ofLocal: found.local, cardFolder: "/")
        let aliases = ShortNames.aliases(entries.map(\.name))
        for entry in entries {
            let alias = aliases[entry.name] ?? entry.name
            let isDirectory = entry.attributes.contains(.directory)
            let href: String
            if isDirectory {
                href = "dir?dir=" + EzShareListing.encodeParameter(Array((cardFolder + "\\" + alias).utf8))
            } else {
                let file = (found.aliases + [alias]).joined(separator: "\\")
                href = "http://\(host)/download?file=" + EzShareListing.encodeParameter(Array(file.utf8))
            }
            lines.append(
                EzShareListing.Line(
                    name: entry.name, isDirectory: isDirectory, size: entry.size, dateTime: entry.dateTime,
                    href: href))
        }
        let page = EzShareListing.render(folder: cardFolder, lines: lines)
        return .data(Data(page), contentType: "text/html; charset=gb2312")
    }

    /// `GET /download?file=DCIM%5C100CANON%5CIMG_0001.JPG`: the bytes, with
    /// `Range`, `ETag`, `Last-Modified` (added by the server) and the card's
    /// `Content-Disposition`.
    func download(_ request: HTTPRequest) -> HTTPResponse {
        let found: Found
        switch lookUp("file", of: request) {
        case .success(let file): found = file
        case .failure(let box): return box.response
        }
        // The card's root (a `file` without names) is a folder too.
        guard !found.isDirectory else { return .status(404) }
        var response = HTTPResponse.file(found.local, contentType: CardHandler.contentType(found.local))
        let name = LocalPath.lastComponent(found.local).lowercased().filter { $0 != "\"" && !$0.isNewline }
        response.headers.add(name: "Content-Disposition", value: "attachment; filename=\"\(name)\"")
        return response
    }

    /// What the card path in the request's parameter `name` names, or the answer:
    /// 404 without the parameter or where nothing is, 403 for a path the card refuses.
    private func lookUp(_ name: String, of request: HTTPRequest) -> Result<Found, HTTPResponseBox> {
        guard let value = EzShareHandler.parameter(name, of: request) else {
            return .failure(HTTPResponseBox(.status(404)))
        }
        let components: [String]
        do {
            components = try EzShareHandler.components(value)
        } catch {
            return .failure(HTTPResponseBox(.status(403)))
        }
        guard let found = resolve(components) else { return .failure(HTTPResponseBox(.status(404))) }
        return .success(found)
    }

    /// `GET /client?command=version`: the firmware, in the card's XML; any other
    /// command the card's "this is ezshare!".
    func client(_ request: HTTPRequest) -> HTTPResponse {
        let body: String
        if request.query("command") == "version" {
            body =
                "<?xml version=\"1.0\" encoding=\"gb2312\"?>\n<response>\n<device>\n<version>\(firmware)</version>\n"
                + "</device>\n</response>\n"
        } else {
            body = "<?xml version=\"1.0\" encoding=\"gb2312\"?>\n<response>\nthis is ezshare!</response>\n"
        }
        return .text(body, contentType: "text/xml")
    }

    // MARK: Paths

    /// A folder or file found from the card's names.
    struct Found {
        /// The local path.
        var local: String
        /// Each level's local path, root excluded.
        var locals: [String]
        /// Each level's 8.3 alias, as the links name it.
        var aliases: [String]
        var isDirectory: Bool
    }

    /// Follows card names (aliases or long names, either case) from the root.
    func resolve(_ components: [String]) -> Found? {
        var found = Found(local: root.path.isEmpty ? "/" : root.path, locals: [], aliases: [], isDirectory: true)
        for component in components {
            guard found.isDirectory else { return nil }
            let entries = root.entries(ofLocal: found.local, cardFolder: "/")
            let aliases = ShortNames.aliases(entries.map(\.name))
            func same(_ a: String, _ b: String) -> Bool { a.compare(b, options: .caseInsensitive) == .orderedSame }
            guard
                let entry = entries.first(where: { same(aliases[$0.name] ?? "", component) })
                    ?? entries.first(where: { $0.name == component })
                    ?? entries.first(where: { same($0.name, component) })
            else { return nil }
            found.local = (found.local == "/" ? "" : found.local) + "/" + entry.name
            found.locals.append(found.local)
            found.aliases.append(aliases[entry.name] ?? entry.name)
            found.isDirectory = entry.attributes.contains(.directory)
        }
        return found
    }

    /// The names of `A:\DCIM\100CANON` (or `DCIM\100CANON`, `/DCIM/100CANON`).
    ///
    /// - Throws: for `.`, `..` or NUL.
    static func components(_ value: [UInt8]) throws(CardRefusal) -> [String] {
        var bytes = value[...]
        if bytes.count >= 2, bytes[bytes.startIndex] | 0x20 == UInt8(ascii: "a"),
            bytes[bytes.startIndex + 1] == UInt8(ascii: ":")
        {
            bytes = bytes.dropFirst(2)
        }
        guard !bytes.contains(0) else { throw .forbidden }
        let parts = bytes.split { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "/") }.map { GB18030.decode($0) }
        if parts.contains(where: { $0 == "." || $0 == ".." }) { throw .forbidden }
        return parts
    }

    /// The value of a query parameter, percent-decoded byte by byte: clients
    /// send `A:%5CDCIM` and `A:\DCIM` alike.
    static func parameter(_ name: String, of request: HTTPRequest) -> [UInt8]? {
        guard let raw = request.rawQuery else { return nil }
        for item in raw.utf8.split(separator: UInt8(ascii: "&")) {
            guard let eq = item.firstIndex(of: UInt8(ascii: "=")),
                item[item.startIndex..<eq].elementsEqual(name.utf8)
            else { continue }
            return EzShareListing.percentDecode(ArraySlice(item[item.index(after: eq)...]))
        }
        return nil
    }

    /// The address file links name: the request's `Host` when it is a plain
    /// host and port, else the address the emulator listens on.
    func linkHost(_ request: HTTPRequest) -> String {
        if let host = request.headers["Host"], !host.isEmpty, host.utf8.count <= 255,
            host.utf8.allSatisfy({ EzShareHandler.hostByte($0) })
        {
            return host
        }
        return fallbackHost.withLock { $0 }
    }

    private static func hostByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"),
            UInt8(ascii: "["), UInt8(ascii: "]"):
            true
        default: false
        }
    }

    /// `.` or `..` with the folder's own time.
    private func dotLine(_ name: String, local: String, dir: String) -> EzShareListing.Line {
        var st = stat()
        let modified =
            stat(local, &st) == 0
            ? Date(timeIntervalSince1970: TimeInterval(st.st_mtim.tv_sec)) : Date(timeIntervalSince1970: 0)
        return EzShareListing.Line(
            name: name, isDirectory: true, size: 0, dateTime: FATDateTime(date: modified, timeZone: .current),
            href: "dir?dir=" + EzShareListing.encodeParameter(Array(dir.utf8)))
    }
}
