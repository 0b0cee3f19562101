import CXML2
import Foundation

/// A WebDAV `207 Multi-Status` reply (RFC 4918 section 13) as a pure value:
/// what PROPFIND tells of each resource (kind, size, time, ETag) and what a
/// DELETE or MOVE of a folder says failed, per file.
///
/// Read with libxml2, namespaces resolved: the `DAV:` elements count under any
/// prefix (`D:`, `d:`, `lp1:`, a default namespace). `href`s are decoded
/// (percent-escapes) and made server-absolute paths whether the server wrote a
/// path (`/dav/a%20b.jpg`, Apache, nginx, Nextcloud) or a full URL
/// (`http://host/dav/a%20b.jpg`). A property inside a `propstat` whose status
/// is not 2xx (a `404` for a property the server does not keep) is left out.
struct WebDAVMultistatus: Sendable, Hashable {
    /// One `response` element.
    struct Response: Sendable, Hashable {
        /// The resource's server-absolute path, decoded, as the server wrote it
        /// (a folder usually with a trailing `/`).
        var path: String
        /// The response's own status (`<D:status>` beside the `href`: a DELETE's
        /// failure), nil when it carries properties instead.
        var status: Int?
        /// The status line's reason (`Locked`), with `responsedescription` or the
        /// server's `error` message when it gave one.
        var statusText: String?
        /// `resourcetype` holds `collection`.
        var isCollection = false
        /// `getcontentlength`.
        var size: Int64?
        /// `getlastmodified` (an HTTP date).
        var modified: Date?
        /// `getetag`, as written (quotes and `W/` kept: it goes back in `If-Range`).
        var etag: String?

        /// True for a folder: `resourcetype` says collection.
        var isDirectory: Bool { isCollection }
    }

    /// The responses, in the server's order.
    var responses: [Response]

    /// The largest reply read (a folder of about 200,000 entries).
    static let maxBytes = 64 << 20

    /// Parses a multistatus body.
    ///
    /// - Throws: `badListing` for a body that is no XML or whose root is not
    ///   `DAV:multistatus` (an HTML page from a server without WebDAV).
    static func parse(_ body: [UInt8], target: String = "") throws(FerryError) -> WebDAVMultistatus {
        guard let doc = XMLDocument(body) else {
            throw FerryError(
                .badListing, operation: "list", target: target, serverText: "not XML",
                detail: "the server's answer to PROPFIND is not a WebDAV reply")
        }
        defer { xmlFreeDoc(doc.pointer) }
        guard let root = xmlDocGetRootElement(doc.pointer), XMLNode.isDAV(root, "multistatus") else {
            throw FerryError(
                .badListing, operation: "list", target: target, serverText: "not a multistatus reply",
                detail: "the server's answer to PROPFIND is XML but not a WebDAV multistatus")
        }
        var responses: [Response] = []
        for node in XMLNode.children(root) where XMLNode.isDAV(node, "response") {
            responses.append(contentsOf: response(node))
        }
        return WebDAVMultistatus(responses: responses)
    }

    /// The words of a WebDAV error body (RFC 4918 section 16): Nextcloud's and
    /// ownCloud's `<s:message>`, else the names of the `DAV:error` conditions
    /// (`lock-token-submitted`); nil for anything else (an HTML page).
    static func errorText(_ body: [UInt8]) -> String? {
        guard !body.isEmpty, let doc = XMLDocument(body) else { return nil }
        defer { xmlFreeDoc(doc.pointer) }
        guard let root = xmlDocGetRootElement(doc.pointer), XMLNode.isDAV(root, "error") else { return nil }
        var conditions: [String] = []
        for node in XMLNode.children(root) {
            if XMLNode.name(node) == "message" {
                let text = XMLNode.text(node).trimmingCharacters(in: .whitespacesAndNewlines)
                if !text.isEmpty { return text }
            } else if XMLNode.isDAV(node, nil) {
                conditions.append(XMLNode.name(node))
            }
        }
        return conditions.isEmpty ? nil : conditions.joined(separator: ", ")
    }

    /// The responses of one `response` element (RFC 4918 allows several `href`s
    /// sharing one status).
    private static func response(_ node: UnsafeMutablePointer<xmlNode>) -> [Response] {
        var hrefs: [String] = []
        var status: (Int, String)?
        var description: String?
        var error: String?
        var props = Response(path: "")
        for child in XMLNode.children(node) {
            if XMLNode.isDAV(child, "href") {
                if let path = decodeHref(XMLNode.text(child)) { hrefs.append(path) }
            } else if XMLNode.isDAV(child, "status") {
                status = statusLine(XMLNode.text(child))
            } else if XMLNode.isDAV(child, "responsedescription") {
                description = XMLNode.text(child).trimmingCharacters(in: .whitespacesAndNewlines)
            } else if XMLNode.isDAV(child, "error") {
                error = XMLNode.children(child).map(XMLNode.name).joined(separator: ", ")
            } else if XMLNode.isDAV(child, "propstat") {
                readPropstat(child, into: &props)
            }
        }
        let words = [status?.1, description, error].compactMap { $0?.isEmpty == false ? $0 : nil }
        return hrefs.map { path in
            var r = props
            r.path = path
            r.status = status?.0
            r.statusText = words.isEmpty ? nil : words.joined(separator: ": ")
            return r
        }
    }

    /// The properties of a `propstat` whose status is 2xx (or missing).
    private static func readPropstat(_ node: UnsafeMutablePointer<xmlNode>, into r: inout Response) {
        var prop: UnsafeMutablePointer<xmlNode>?
        var ok = true
        for child in XMLNode.children(node) {
            if XMLNode.isDAV(child, "prop") { prop = child }
            if XMLNode.isDAV(child, "status"), let (code, _) = statusLine(XMLNode.text(child)) {
                ok = (200..<300).contains(code)
            }
        }
        guard ok, let prop else { return }
        for p in XMLNode.children(prop) where XMLNode.isDAV(p, nil) {
            let text = XMLNode.text(p).trimmingCharacters(in: .whitespacesAndNewlines)
            switch XMLNode.name(p) {
            case "resourcetype":
                if XMLNode.children(p).contains(where: { XMLNode.isDAV($0, "collection") }) { r.isCollection = true }
            case "getcontentlength":
                if let n = Int64(text), n >= 0 { r.size = n }
            case "getlastmodified":
                r.modified = InternetDate.parse(text)
            case "getetag":
                if !text.isEmpty { r.etag = text }
            default:
                break
            }
        }
    }

    /// `HTTP/1.1 404 Not Found` as (404, "Not Found").
    static func statusLine(_ text: String) -> (Int, String)? {
        let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(
            separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let code = Int(parts[1]) else { return nil }
        return (code, parts.count > 2 ? String(parts[2]) : "")
    }

    /// An `href` as a decoded server-absolute path: a full URL loses its scheme
    /// and host, a relative reference gets its `/`; nil when its escapes are bad.
    static func decodeHref(_ raw: String) -> String? {
        var text = Substring(raw.trimmingCharacters(in: .whitespacesAndNewlines))
        if let scheme = text.range(of: "://"), !text[..<scheme.lowerBound].contains("/") {
            let afterHost = text[scheme.upperBound...]
            text = afterHost.firstIndex(of: "/").map { afterHost[$0...] } ?? "/"
        }
        if let q = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<q] }
        guard let decoded = RemoteURL.percentDecode(text), !decoded.contains("\0") else { return nil }
        return decoded.hasPrefix("/") ? decoded : "/" + decoded
    }
}

/// A parsed libxml2 document, freed by its owner with `xmlFreeDoc`.
private struct XMLDocument {
    let pointer: xmlDocPtr

    /// Parses without fetching anything (no DTDs, no external entities, no network).
    init?(_ body: [UInt8]) {
        guard !body.isEmpty, body.count <= WebDAVMultistatus.maxBytes else { return nil }
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)
        let doc = body.withUnsafeBufferPointer { buf in
            buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buf.count) {
                xmlReadMemory($0, Int32(buf.count), nil, nil, options)
            }
        }
        guard let doc else { return nil }
        pointer = doc
    }
}

/// Reading libxml2's element tree.
private enum XMLNode {
    static let davNamespace = "DAV:"

    /// The element children of `node`.
    static func children(_ node: UnsafeMutablePointer<xmlNode>) -> [UnsafeMutablePointer<xmlNode>] {
        var out: [UnsafeMutablePointer<xmlNode>] = []
        var child = node.pointee.children
        while let c = child {
            if c.pointee.type == XML_ELEMENT_NODE { out.append(c) }
            child = c.pointee.next
        }
        return out
    }

    /// The element's local name (no prefix).
    static func name(_ node: UnsafeMutablePointer<xmlNode>) -> String {
        node.pointee.name.map { String(cString: $0) } ?? ""
    }

    /// Whether the element is in the `DAV:` namespace (or in none, as some old
    /// servers write it) and, unless nil, has the local name `local`.
    static func isDAV(_ node: UnsafeMutablePointer<xmlNode>, _ local: String?) -> Bool {
        if let ns = node.pointee.ns, let href = ns.pointee.href, String(cString: href) != davNamespace {
            return false
        }
        return local == nil || name(node) == local
    }

    /// The text inside the element (its text and CDATA children, entities decoded).
    static func text(_ node: UnsafeMutablePointer<xmlNode>) -> String {
        var bytes = ""
        var child = node.pointee.children
        while let c = child {
            if c.pointee.type == XML_TEXT_NODE || c.pointee.type == XML_CDATA_SECTION_NODE,
                let content = c.pointee.content
            {
                bytes += String(cString: content)
            }
            child = c.pointee.next
        }
        return bytes
    }
}
