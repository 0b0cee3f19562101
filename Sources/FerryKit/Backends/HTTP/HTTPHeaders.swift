import Foundation

/// Response headers of one HTTP response, names compared without case.
///
/// Parsed from raw bytes without Foundation string calls: this runs for every
/// header line of every transfer.
struct HTTPHeaders: Sendable, Hashable {
    /// Header fields in order, names lowercased.
    private(set) var fields: [Field] = []

    struct Field: Sendable, Hashable {
        var name: String
        var value: String
    }

    /// The status line's reason phrase ("Not Found").
    var reason: String = ""
    /// The status code from the status line.
    var status: Int = 0

    /// The first value of a header.
    subscript(_ name: String) -> String? {
        let key = name.lowercased()
        return fields.first { $0.name == key }?.value
    }

    /// Feeds one raw header line as libcurl delivers it (with CRLF). A status line
    /// starts a new response (redirects, 100 Continue), forgetting the previous one.
    mutating func consume(line raw: UnsafeRawBufferPointer) {
        var bytes = raw[...]
        while let last = bytes.last, last == 0x0D || last == 0x0A { bytes = bytes.dropLast() }
        if bytes.starts(with: "HTTP/".utf8) {
            fields = []
            // HTTP/1.1 404 Not Found
            let parts = bytes.split(separator: 0x20, maxSplits: 2, omittingEmptySubsequences: true)
            status = parts.count > 1 ? Int(String(decoding: parts[1], as: UTF8.self)) ?? 0 : 0
            // The reason ends up in messages on a terminal: no escape sequences.
            let printable = parts.count > 2 ? HTTPHeaders.trim(parts[2]).filter { $0 >= 0x20 && $0 != 0x7F } : []
            reason = String(decoding: printable, as: UTF8.self)
            return
        }
        if let first = bytes.first, first == 0x20 || first == 0x09 {
            // An obsolete folded line (RFC 9112 5.2) continues the previous field's
            // value, joined by one space.
            let more = HTTPHeaders.trim(bytes)
            guard !fields.isEmpty, !more.isEmpty else { return }
            let value = fields[fields.count - 1].value
            fields[fields.count - 1].value = (value.isEmpty ? "" : value + " ") + String(decoding: more, as: UTF8.self)
            return
        }
        guard let colon = bytes.firstIndex(of: 0x3A) else { return }
        let name = HTTPHeaders.trim(bytes[..<colon])
        guard !name.isEmpty else { return }
        let value = HTTPHeaders.trim(bytes[(colon + 1)...])
        fields.append(
            Field(
                name: String(decoding: name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self),
                value: String(decoding: value, as: UTF8.self)))
    }

    /// Feeds one header line given as text (tests, fuzzing).
    mutating func consume(line: String) {
        var copy = line
        copy.withUTF8 { consume(line: UnsafeRawBufferPointer($0)) }
    }

    private static func trim(_ s: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        var t = s
        while let f = t.first, f == 0x20 || f == 0x09 { t = t.dropFirst() }
        while let l = t.last, l == 0x20 || l == 0x09 { t = t.dropLast() }
        return t
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
