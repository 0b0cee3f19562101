import Foundation

/// Response headers of one HTTP response, names compared without case.
///
/// Parsed from raw bytes without Foundation string calls: this runs for every
/// header line of every transfer. The lines are kept as bytes (names
/// lowercased, values trimmed) in one buffer, and a value becomes a `String`
/// only when asked for: a download asks for four or five of a response's
/// eight or so fields, and making two `String`s and a lowercased copy per line
/// cost more than the rest of the line's handling (bench/RESULTS.md, "Issue 19, HTTP per-file CPU (2026-12-01, branch
/// hdr)").
struct HTTPHeaders: Sendable, Hashable {
    /// The fields' lines, one after another from the name (lowercased) to the
    /// end of the value: a line is copied in one piece.
    private var bytes: [UInt8] = []
    /// Where each field's name and value lie in `bytes`, in order.
    private var spans: [Span] = []

    private struct Span: Sendable, Hashable {
        var nameStart: Int
        var nameEnd: Int
        var valueStart: Int
        var valueEnd: Int
    }

    struct Field: Sendable, Hashable {
        var name: String
        var value: String
    }

    /// Header fields in order, names lowercased.
    var fields: [Field] {
        spans.map { Field(name: text($0.nameStart..<$0.nameEnd), value: text($0.valueStart..<$0.valueEnd)) }
    }

    /// The status line's reason phrase ("Not Found").
    var reason: String = ""
    /// The status code from the status line.
    var status: Int = 0

    /// The first value of a header.
    subscript(_ name: String) -> String? {
        switch firstValueRange(named: name) {
        case .some(.some(let range)):
            return text(range)
        case .some(.none):
            return nil
        case .none:
            let key = name.lowercased()
            return fields.first { $0.name == key }?.value
        }
    }

    /// Where the value of the first field called `name` lies in `bytes` (nil
    /// inside when there is none), found by comparing bytes; nil when `name`
    /// has anything but ASCII letters, digits and `-`. For such names (every
    /// one Ferry asks for) bytes compare as the `String`s do; other names are
    /// compared as `String`s.
    private func firstValueRange(named name: String) -> Range<Int>?? {
        var key = name
        return key.withUTF8 { k -> Range<Int>?? in
            for c in k {
                switch c {
                case 0x61...0x7A, 0x41...0x5A, 0x30...0x39, 0x2D: continue
                default: return nil
                }
            }
            return bytes.withUnsafeBufferPointer { b -> Range<Int>? in
                for span in spans where span.nameEnd - span.nameStart == k.count {
                    var i = 0
                    while i < k.count {
                        let c = k[i]
                        guard b[span.nameStart + i] == c.asciiLowercased else { break }
                        i += 1
                    }
                    if i == k.count { return span.valueStart..<span.valueEnd }
                }
                return nil
            }
        }
    }

    /// Feeds one raw header line as libcurl delivers it (with CRLF). A status line
    /// starts a new response (redirects, 100 Continue), forgetting the previous one.
    mutating func consume(line raw: UnsafeRawBufferPointer) {
        var end = raw.count
        while end > 0, raw[end - 1] == 0x0D || raw[end - 1] == 0x0A { end -= 1 }
        guard end > 0 else { return }
        let line = UnsafeRawBufferPointer(rebasing: raw[..<end])
        if end >= 5, line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == 0x2F {
            consumeStatusLine(line)
            return
        }
        if line[0] == 0x20 || line[0] == 0x09 {
            // An obsolete folded line (RFC 9112 5.2) continues the previous field's
            // value, joined by one space. The last field's value ends `bytes`.
            let more = HTTPHeaders.trim(line, 0..<end)
            guard let last = spans.last, !more.isEmpty else { return }
            if last.valueEnd > last.valueStart { bytes.append(0x20) }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[more]))
            spans[spans.count - 1].valueEnd = bytes.count
            return
        }
        guard let found = memchr(line.baseAddress!, 0x3A, end) else { return }
        let colon = UnsafeRawPointer(found) - line.baseAddress!
        let name = HTTPHeaders.trim(line, 0..<colon)
        guard !name.isEmpty else { return }
        let value = HTTPHeaders.trim(line, (colon + 1)..<end)
        if bytes.capacity == 0 {
            bytes.reserveCapacity(1024)
            spans.reserveCapacity(16)
        }
        // From the name to the value's end: the last value ends `bytes`.
        let start = bytes.count - name.lowerBound
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[name.lowerBound..<value.upperBound]))
        let span = Span(
            nameStart: start + name.lowerBound, nameEnd: start + name.upperBound, valueStart: start + value.lowerBound,
            valueEnd: start + value.upperBound)
        bytes.withUnsafeMutableBufferPointer { b in
            for i in span.nameStart..<span.nameEnd { b[i] = b[i].asciiLowercased }
        }
        spans.append(span)
    }

    /// `HTTP/1.1 404 Not Found`: the words are split at spaces (runs of them
    /// count as one), the reason is the rest after the code's space.
    private mutating func consumeStatusLine(_ line: UnsafeRawBufferPointer) {
        bytes.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
        status = 0
        reason = ""
        let end = line.count
        var i = 0
        while i < end, line[i] != 0x20 { i += 1 }
        while i < end, line[i] == 0x20 { i += 1 }
        guard i < end else { return }
        let codeStart = i
        while i < end, line[i] != 0x20 { i += 1 }
        status = HTTPHeaders.integer(UnsafeRawBufferPointer(rebasing: line[codeStart..<i])) ?? 0
        guard i < end else { return }
        // The reason ends up in messages on a terminal: no escape sequences.
        let rest = UnsafeRawBufferPointer(rebasing: line[HTTPHeaders.trim(line, (i + 1)..<end)])
        reason =
            rest.allSatisfy { $0 >= 0x20 && $0 != 0x7F }
            ? String(decoding: rest, as: UTF8.self)
            : String(decoding: rest.filter { $0 >= 0x20 && $0 != 0x7F }, as: UTF8.self)
    }

    /// The number the text says, as `Int(String)` reads it (a sign, then
    /// digits; nil for anything else or an overflow), without making the `String`.
    static func integer(_ text: UnsafeRawBufferPointer) -> Int? {
        var i = 0
        var negative = false
        if let first = text.first, first == 0x2B || first == 0x2D {
            negative = first == 0x2D
            i = 1
        }
        guard i < text.count else { return nil }
        var n = 0
        while i < text.count {
            let c = text[i]
            guard c >= 0x30 && c <= 0x39 else { return nil }
            let (times10, o1) = n.multipliedReportingOverflow(by: 10)
            let (next, o2) =
                negative
                ? times10.subtractingReportingOverflow(Int(c - 0x30)) : times10.addingReportingOverflow(Int(c - 0x30))
            guard !o1 && !o2 else { return nil }
            n = next
            i += 1
        }
        return n
    }

    /// Feeds one header line given as text (tests, fuzzing).
    mutating func consume(line: String) {
        var copy = line
        copy.withUTF8 { consume(line: UnsafeRawBufferPointer($0)) }
    }

    private func text(_ range: Range<Int>) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// `range` without the spaces and tabs at either end.
    private static func trim(_ line: UnsafeRawBufferPointer, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, line[lower] == 0x20 || line[lower] == 0x09 { lower += 1 }
        while upper > lower, line[upper - 1] == 0x20 || line[upper - 1] == 0x09 { upper -= 1 }
        return lower..<upper
    }

    // Equal when the fields are, compared as `String`s, as before the bytes were kept.
    static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.status == b.status && a.reason == b.reason && a.fields == b.fields
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(reason)
        hasher.combine(fields)
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
