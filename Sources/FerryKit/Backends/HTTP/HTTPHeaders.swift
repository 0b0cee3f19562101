import Foundation

/// Response headers of one HTTP response, names compared without case.
struct HTTPHeaders: Sendable, Hashable {
    private(set) var fields: [(name: String, value: String)] = []

    static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.elementsEqual(b.fields) { $0.name == $1.name && $0.value == $1.value }
    }
    func hash(into h: inout Hasher) {
        for f in fields {
            h.combine(f.name)
            h.combine(f.value)
        }
    }

    /// The status line's reason phrase ("Not Found").
    var reason: String = ""
    /// The status code from the status line.
    var status: Int = 0

    /// The first value of a header.
    subscript(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Feeds one raw header line as libcurl delivers it (with CRLF). A status line
    /// starts a new response (redirects, 100 Continue), forgetting the previous one.
    mutating func consume(line raw: String) {
        let line = raw.trimmingCharacters(in: CharacterSet(charactersIn: "\r\n"))
        if line.hasPrefix("HTTP/") {
            fields = []
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            reason = parts.count > 2 ? String(parts[2]) : ""
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces)
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return }
        fields.append((name, value))
    }
}

/// A parsed `Content-Range: bytes START-END/TOTAL` (TOTAL may be `*`).
struct ContentRange: Sendable, Hashable {
    var start: Int64
    var end: Int64
    var total: Int64?

    /// Parses the header value; nil when malformed (end before start, junk, overflow).
    init?(_ text: String) {
        var s = Substring(text.trimmingCharacters(in: .whitespaces))
        guard s.lowercased().hasPrefix("bytes") else { return nil }
        s = s.dropFirst(5)
        s = s.drop { $0 == " " || $0 == "=" }
        guard let dash = s.firstIndex(of: "-"), let slash = s.firstIndex(of: "/"), dash < slash
        else { return nil }
        guard let a = ContentRange.digits(s[..<dash]), let b = ContentRange.digits(s[s.index(after: dash)..<slash]),
            a <= b
        else { return nil }
        let totalText = s[s.index(after: slash)...]
        if totalText == "*" {
            total = nil
        } else {
            guard let t = ContentRange.digits(totalText), b < t else { return nil }
            total = t
        }
        start = a
        end = b
    }

    private static func digits(_ s: Substring) -> Int64? {
        let t = s.trimmingCharacters(in: .whitespaces)
        guard !t.isEmpty, t.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(t)
    }
}

/// The file name a `Content-Disposition` header suggests, made safe to use as a
/// local name (no folders, no `..`, no control characters); nil when none.
enum ContentDisposition {
    static func filename(_ header: String) -> String? {
        var plain: String?
        var extended: String?
        for param in splitParameters(header).dropFirst() {
            guard let eq = param.firstIndex(of: "=") else { continue }
            let key = param[..<eq].trimmingCharacters(in: .whitespaces).lowercased()
            let value = param[param.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            if key == "filename" {
                plain = unquote(value)
            } else if key == "filename*" {
                // RFC 5987: charset'lang'percent-encoded
                let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                if parts.count == 3, parts[0].lowercased() == "utf-8" {
                    extended = RemoteURL.percentDecode(parts[2])
                }
            }
        }
        guard let name = extended ?? plain else { return nil }
        return safeName(name)
    }

    /// The last path component, without control characters, never `.` or `..`.
    static func safeName(_ name: String) -> String? {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let cleaned = String(last.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
            .trimmingCharacters(in: .whitespaces)
        guard !cleaned.isEmpty, cleaned != ".", cleaned != ".." else { return nil }
        return cleaned
    }

    private static func splitParameters(_ header: String) -> [String] {
        var out: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for c in header {
            if escaped {
                current.append(c)
                escaped = false
            } else if c == "\\" && quoted {
                current.append(c)
                escaped = true
            } else if c == "\"" {
                quoted.toggle()
                current.append(c)
            } else if c == ";" && !quoted {
                out.append(current)
                current = ""
            } else {
                current.append(c)
            }
        }
        out.append(current)
        return out
    }

    private static func unquote(_ v: String) -> String {
        guard v.count >= 2, v.hasPrefix("\""), v.hasSuffix("\"") else { return v }
        var out = ""
        var escaped = false
        for c in v.dropFirst().dropLast() {
            if escaped {
                out.append(c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else {
                out.append(c)
            }
        }
        return out
    }
}
