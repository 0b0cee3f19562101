import Foundation

/// One item of a web server's folder page.
struct HTTPIndexEntry: Sendable, Hashable {
    /// The name, percent-decoded (no trailing `/`).
    var name: String
    var isDirectory: Bool
    /// Bytes, only when the page shows the exact number.
    var size: Int64?
    /// As precisely as the page shows it (nginx and Apache: to the minute).
    var modified: RemoteTimestamp?
}

/// Reads the folder pages web servers generate (directory indexes) into entries.
///
/// Pure functions over the page's bytes. Known pages: nginx `autoindex` (html,
/// `autoindex_format json` and `xml`), Apache `mod_autoindex` (plain list,
/// `FancyIndexing`, `HTMLTable`), lighttpd `mod_dirlisting`, Python
/// `http.server` and Caddy's `browse`. Anything else is not a listing (nil):
/// a page with links is not a folder because it has links.
///
/// Kept: links to a file or folder directly inside the page's folder. Left out:
/// parent links, sort links (`?C=N;O=D`), fragments, links to other hosts or
/// other folders, `javascript:` and `mailto:`. Sizes are taken only where the page
/// shows exact bytes (nginx, Caddy, JSON, XML, Apache and lighttpd below 1 KB are
/// digits; `1.2M` is rounded, so nil); times with the precision the page shows
/// them (nginx `01-Dec-2026 20:16` and Apache `2026-12-01 20:16` to the minute,
/// lighttpd and the JSON, XML and Caddy forms to the second).
enum HTTPIndexParser {
    /// Which server's page it was.
    enum Format: String, Sendable {
        case nginxJSON = "nginx json"
        case nginxXML = "nginx xml"
        case caddyJSON = "caddy json"
        case nginx, apache, lighttpd, python, caddy
    }

    /// The entries of `body`, the page at `page` (a folder URL, after redirects),
    /// or nil when the page is not a folder index.
    static func parse(_ body: [UInt8], contentType: String?, page: RemoteURL) -> (
        format: Format, entries: [HTTPIndexEntry]
    )? {
        let text = String(decoding: body, as: UTF8.self)
        let start = text.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" })
        let type = (contentType ?? "").lowercased()
        if start.hasPrefix("[") || type.contains("json") {
            return parseJSON(body)
        }
        // nginx's xml; Apache's `IndexOptions XHTML` pages start so too and are read as html.
        if start.hasPrefix("<?xml"), let xml = parseXML(text) {
            return xml
        }
        guard let format = htmlFormat(text) else { return nil }
        return (format, parseHTML(text, page: page))
    }

    // MARK: - HTML

    /// The server that generated an HTML index, or nil for any other page.
    static func htmlFormat(_ html: String) -> Format? {
        let lower = html.lowercased()
        let title = between(lower, "<title>", "</title>").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        if let title, title.hasPrefix("directory listing for ") { return .python }
        if let title, title.hasPrefix("index of ") {
            if lower.contains("<div class=\"list\">") || lower.contains("<div class=\"foot\">lighttpd") {
                return .lighttpd
            }
            if lower.contains("parent directory</a>") || lower.contains("?c=n;o=") { return .apache }
            return .nginx
        }
        if lower.contains("caddyserver.com"), lower.contains("class='listing") || lower.contains("class=\"listing") {
            return .caddy
        }
        return nil
    }

    /// Every link that names an item of the folder, with what its row says.
    static func parseHTML(_ html: String, page: RemoteURL) -> [HTTPIndexEntry] {
        let folder = page.path.hasSuffix("/") ? page.path : page.path + "/"
        var entries: [HTTPIndexEntry] = []
        var index: [String: Int] = [:]
        let bytes = Array(html.utf8)
        var i = 0
        while let open = find(bytes, "<a", from: i) {
            i = open + 2
            guard i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D
            else { continue }
            guard let tagEnd = bytes[i...].firstIndex(of: UInt8(ascii: ">")) else { break }
            let tag = String(decoding: bytes[i..<tagEnd], as: UTF8.self)
            i = tagEnd + 1
            guard let href = attribute("href", in: tag).map(decodeEntities),
                let item = resolve(href, folder: folder, page: page)
            else { continue }
            // The row's other cells: from the end of this link to the next one.
            let close = find(bytes, "</a>", from: i) ?? i
            let rowEnd = find(bytes, "<a", from: close) ?? bytes.count
            let row = String(decoding: bytes[min(close + 4, rowEnd)..<rowEnd], as: UTF8.self)
            var entry = HTTPIndexEntry(name: item.name, isDirectory: item.isDirectory)
            if !item.isDirectory {
                (entry.size, entry.modified) = details(row)
            } else {
                entry.modified = details(row).1
            }
            if let known = index[entry.name] {
                // The same item linked twice (an icon and its name): keep what either showed.
                entries[known].size = entries[known].size ?? entry.size
                entries[known].modified = entries[known].modified ?? entry.modified
            } else {
                index[entry.name] = entries.count
                entries.append(entry)
            }
        }
        return entries
    }

    /// The name a link gives an item of `folder`, or nil for any other link.
    static func resolve(_ href: String, folder: String, page: RemoteURL) -> (name: String, isDirectory: Bool)? {
        var link = Substring(href.trimmingCharacters(in: .whitespacesAndNewlines))
        if let hash = link.firstIndex(of: "#") { link = link[..<hash] }
        // Sort links and any other link with a query are not items.
        guard !link.isEmpty, !link.contains("?") else { return nil }
        var path: String
        let lower = link.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("//") {
            let full = lower.hasPrefix("//") ? page.scheme.rawValue + ":" + link : String(link)
            guard let u = try? RemoteURL(parsing: full), u.scheme == .http || u.scheme == .https,
                u.host.lowercased() == page.host.lowercased(),
                (u.port ?? u.defaultPort) == (page.port ?? page.defaultPort)
            else { return nil }
            guard let raw = rawPath(of: full) else { return nil }
            path = raw
        } else if link.hasPrefix("/") {
            path = String(link)
        } else {
            if let colon = link.firstIndex(of: ":"), !link[..<colon].contains("/"),
                ["javascript", "mailto", "data", "ftp", "ftps", "tel", "file", "about"].contains(
                    link[..<colon].lowercased())
            {
                return nil
            }
            while link.hasPrefix("./") { link = link.dropFirst(2) }
            guard !link.isEmpty, link != ".", link != "..", !link.hasPrefix("../") else { return nil }
            return item(link)
        }
        // An absolute path: an item of this folder when it is the folder plus one name.
        let folderSegments = folder.split(separator: "/").map(String.init)
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let isDirectory = path.hasSuffix("/")
        if isDirectory { segments = segments.dropLast() }
        guard segments.count == folderSegments.count + 1,
            zip(segments, folderSegments).allSatisfy({ RemoteURL.percentDecode($0) == $1 }),
            let last = segments.last
        else { return nil }
        return item(Substring(last + (isDirectory ? "/" : "")))
    }

    /// One relative segment (`name` or `name/`) as a decoded name.
    private static func item(_ segment: Substring) -> (name: String, isDirectory: Bool)? {
        var raw = segment
        let isDirectory = raw.hasSuffix("/")
        if isDirectory { raw = raw.dropLast() }
        guard !raw.isEmpty, !raw.contains("/"), let name = RemoteURL.percentDecode(raw),
            !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0")
        else { return nil }
        return (name, isDirectory)
    }

    /// The path of an absolute URL as written (still escaped).
    private static func rawPath(of url: String) -> String? {
        guard let scheme = url.range(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return "/" }
        return String(rest[slash...])
    }

    /// Size (where the page shows it exactly) and time (to the precision shown) from the rest of a row.
    static func details(_ row: String) -> (size: Int64?, modified: RemoteTimestamp?) {
        // Caddy: exact bytes and UTC seconds in attributes.
        let time = attribute("datetime", in: row).flatMap(isoTimestamp)
        if let sizeText = attribute("data-size", in: row) {
            return (Int64(sizeText).flatMap { $0 >= 0 ? $0 : nil }, time)
        }
        if time != nil { return (nil, time) }
        let words = stripTags(row).split(whereSeparator: \.isWhitespace).map(String.init)
        // nginx `05-Mar-2024 14:07  2100000`, Apache `2024-03-05 14:07  2.0M`,
        // lighttpd `2024-Mar-05 14:07:09  0.1K`: a date, a time, then the size.
        for (n, word) in words.enumerated() where n + 1 < words.count {
            guard let date = dayMonthYear(word) else { continue }
            let clock = words[n + 1].split(separator: ":").compactMap { Int($0) }
            guard clock.count == 2 || clock.count == 3 else { continue }
            // No zone on the page: the server's local time; without seconds, to the minute.
            let modified = RemoteTimestamp(
                year: date.year, month: date.month, day: date.day, hour: clock[0], minute: clock[1],
                second: clock.count == 3 ? clock[2] : 0, zone: .floating,
                precision: clock.count == 3 ? .second : .minute)
            var size: Int64?
            if n + 2 < words.count, words[n + 2].allSatisfy(\.isASCII), words[n + 2].allSatisfy(\.isNumber) {
                size = Int64(words[n + 2])
            }
            return (size, modified)
        }
        return (nil, nil)
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// `05-Mar-2024`, `2024-Mar-05` or `2024-03-05`.
    static func dayMonthYear(_ word: String) -> (year: Int, month: Int, day: Int)? {
        let parts = word.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        func month(_ s: Substring) -> Int? {
            if let i = months.firstIndex(of: s.lowercased()) { return i + 1 }
            return s.count == 2 ? Int(s) : nil
        }
        if parts[0].count == 4, let y = Int(parts[0]), let m = month(parts[1]), parts[2].count == 2,
            let d = Int(parts[2])
        {
            return (y, m, d)
        }
        if parts[2].count == 4, let y = Int(parts[2]), parts[1].count == 3, let m = month(parts[1]),
            let d = Int(parts[0])
        {
            return (y, m, d)
        }
        return nil
    }

    /// `2024-03-05T14:07:09Z` (UTC only).
    static func isoTimestamp(_ text: String) -> RemoteTimestamp? {
        let digits = text.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        guard text.hasSuffix("Z"), digits.count == 6 else { return nil }
        return RemoteTimestamp(
            year: digits[0], month: digits[1], day: digits[2], hour: digits[3], minute: digits[4],
            second: digits[5], zone: .utc)
    }

    // MARK: - JSON and XML

    /// nginx `autoindex_format json` (name, type, mtime, size) or Caddy's JSON
    /// (name, size, mod_time, is_dir).
    static func parseJSON(_ body: [UInt8]) -> (format: Format, entries: [HTTPIndexEntry])? {
        guard let list = try? JSONSerialization.jsonObject(with: Data(body)) as? [Any],
            let array = list as? [[String: Any]]
        else { return nil }
        var entries: [HTTPIndexEntry] = []
        var format = Format.nginxJSON
        for item in array {
            guard var name = item["name"] as? String else { return nil }
            var entry: HTTPIndexEntry
            if let isDir = item["is_dir"] as? Bool {
                format = .caddyJSON
                if name.hasSuffix("/") { name.removeLast() }
                entry = HTTPIndexEntry(name: name, isDirectory: isDir)
                entry.modified = (item["mod_time"] as? String).flatMap(rfc3339)
            } else {
                guard let type = item["type"] as? String else { return nil }
                entry = HTTPIndexEntry(name: name, isDirectory: type == "directory")
                entry.modified = (item["mtime"] as? String).flatMap(InternetDate.parse).map { RemoteTimestamp(utc: $0) }
            }
            if !entry.isDirectory, let n = item["size"] as? NSNumber, n.int64Value >= 0 { entry.size = n.int64Value }
            guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else { continue }
            entries.append(entry)
        }
        return (format, entries)
    }

    /// Caddy's `mod_time` (RFC 3339, UTC or with an offset).
    static func rfc3339(_ text: String) -> RemoteTimestamp? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: text) { return RemoteTimestamp(utc: d) }
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: text).map { RemoteTimestamp(utc: $0) }
    }

    /// nginx `autoindex_format xml`: `<file mtime="..." size="N">name</file>`.
    static func parseXML(_ xml: String) -> (format: Format, entries: [HTTPIndexEntry])? {
        guard xml.contains("<list>") || xml.contains("<list/>") else { return nil }
        var entries: [HTTPIndexEntry] = []
        var rest = Substring(xml)
        while let open = rest.range(of: "<") {
            rest = rest[open.upperBound...]
            guard let tagEnd = rest.firstIndex(of: ">") else { break }
            let tag = rest[..<tagEnd]
            let kind = tag.prefix(while: { $0.isLetter })
            rest = rest[rest.index(after: tagEnd)...]
            guard ["file", "directory", "other"].contains(kind),
                let close = rest.range(of: "</\(kind)>")
            else { continue }
            let name = decodeEntities(String(rest[..<close.lowerBound]))
            rest = rest[close.upperBound...]
            guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else { continue }
            var entry = HTTPIndexEntry(name: name, isDirectory: kind == "directory")
            entry.modified = attribute("mtime", in: String(tag)).flatMap(isoTimestamp)
            if kind != "directory" { entry.size = attribute("size", in: String(tag)).flatMap { Int64($0) } }
            entries.append(entry)
        }
        return (.nginxXML, entries)
    }

    // MARK: - Text helpers

    /// The value of `name="..."` (or single-quoted, or bare) in a tag's text.
    static func attribute(_ name: String, in tag: String) -> String? {
        let bytes = Array(tag.utf8)
        let key = Array(name.utf8)
        var i = 0
        while i + key.count < bytes.count {
            defer { i += 1 }
            guard i == 0 || bytes[i - 1] == 0x20 || bytes[i - 1] == 0x09 || bytes[i - 1] == 0x0A || bytes[i - 1] == 0x0D
            else { continue }
            guard zip(bytes[i..<(i + key.count)], key).allSatisfy({ lowerASCII($0) == $1 }) else { continue }
            var j = i + key.count
            while j < bytes.count, bytes[j] == 0x20 { j += 1 }
            guard j < bytes.count, bytes[j] == UInt8(ascii: "=") else { continue }
            j += 1
            while j < bytes.count, bytes[j] == 0x20 { j += 1 }
            guard j < bytes.count else { return nil }
            let quote = bytes[j]
            if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                guard let end = bytes[(j + 1)...].firstIndex(of: quote) else { return nil }
                return String(decoding: bytes[(j + 1)..<end], as: UTF8.self)
            }
            let end =
                bytes[j...].firstIndex(where: { $0 == 0x20 || $0 == 0x09 || $0 == UInt8(ascii: ">") }) ?? bytes.count
            return String(decoding: bytes[j..<end], as: UTF8.self)
        }
        return nil
    }

    private static func lowerASCII(_ b: UInt8) -> UInt8 { (0x41...0x5A).contains(b) ? b + 0x20 : b }

    /// The first index of `needle` (ASCII, any case) in `bytes` at or after `from`.
    private static func find(_ bytes: [UInt8], _ needle: String, from: Int) -> Int? {
        let n = Array(needle.utf8)
        guard !n.isEmpty, from >= 0 else { return nil }
        var i = from
        while i + n.count <= bytes.count {
            if lowerASCII(bytes[i]) == n[0] {
                var k = 1
                while k < n.count && lowerASCII(bytes[i + k]) == n[k] { k += 1 }
                if k == n.count { return i }
            }
            i += 1
        }
        return nil
    }

    private static func between(_ text: String, _ a: String, _ b: String) -> String? {
        guard let s = text.range(of: a), let e = text.range(of: b, range: s.upperBound..<text.endIndex) else {
            return nil
        }
        return String(text[s.upperBound..<e.lowerBound])
    }

    /// Text without tags, entities decoded.
    static func stripTags(_ html: String) -> String {
        var out = ""
        var inTag = false
        for c in html {
            if c == "<" {
                inTag = true
                out.append(" ")
            } else if c == ">" {
                inTag = false
            } else if !inTag {
                out.append(c)
            }
        }
        return decodeEntities(out)
    }

    /// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&nbsp;` and numeric references.
    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            guard let semi = after.prefix(12).firstIndex(of: ";") else {
                out.append("&")
                rest = after
                continue
            }
            let name = after[..<semi]
            var replacement: String?
            switch name {
            case "amp": replacement = "&"
            case "lt": replacement = "<"
            case "gt": replacement = ">"
            case "quot": replacement = "\""
            case "apos": replacement = "'"
            case "nbsp": replacement = " "
            default:
                if name.hasPrefix("#x") || name.hasPrefix("#X") {
                    replacement = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
                } else if name.hasPrefix("#") {
                    replacement = UInt32(name.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
                }
            }
            if let replacement {
                out += replacement
                rest = after[after.index(after: semi)...]
            } else {
                out.append("&")
                rest = after
            }
        }
        out += rest
        return out
    }
}
