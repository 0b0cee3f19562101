/// Byte-level work on URLs: the common URL read in one pass, and URL text written
/// into one buffer. `ferry get URL1 ... URL1000` parses and renders every URL;
/// Character scans, `lowercased()` and string interpolation were most of what
/// parsing and rendering cost a URL (bench/RESULTS.md, "Issue 19, CLI per-URL
/// CPU (2026-12-01, branch cli)").
extension RemoteURL {
    /// What the one-pass reading found: the parts before the path is decoded.
    struct CommonParts {
        var scheme: Scheme
        var host: String
        var port: Int?
        var rawPath: Substring
        var query: String?
    }

    /// The schemes the one-pass reading knows, as bytes (`file` stays with the full reading).
    private static let commonSchemes: [(scheme: Scheme, bytes: [UInt8])] =
        Scheme.allCases.filter { $0 != .file }.map { ($0, Array($0.rawValue.utf8)) }

    /// `scheme://host[:port][/path][?query]` without user information, brackets or
    /// the `flashair:` shorthand, and with a valid host and port; nil for anything
    /// else, which the full reading in `init(parsing:)` takes (and where every
    /// error is raised). For the URLs it takes, it gives exactly what the full
    /// reading gives.
    static func commonParts(_ text: String) -> CommonParts? {
        let found = text.utf8.withContiguousStorageIfAvailable { commonOffsets($0) } ?? nil
        guard let found else { return nil }
        let utf8 = text.utf8
        func index(_ offset: Int) -> String.Index { utf8.index(utf8.startIndex, offsetBy: offset) }
        func string(_ range: Range<Int>) -> String { String(text[index(range.lowerBound)..<index(range.upperBound)]) }
        return CommonParts(
            scheme: found.scheme, host: string(found.host), port: found.port,
            rawPath: text[index(found.path.lowerBound)..<index(found.path.upperBound)],
            query: found.query.map(string))
    }

    private struct Offsets {
        var scheme: Scheme
        var host: Range<Int>
        var port: Int?
        var path: Range<Int>
        var query: Range<Int>?
    }

    private static func commonOffsets(_ b: UnsafeBufferPointer<UInt8>) -> Offsets? {
        let n = b.count
        let colon = UInt8(ascii: ":")
        let slash = UInt8(ascii: "/")
        // `flashair:` followed by anything but `//HOST` is the card's shorthand.
        if n >= 9, equalIgnoringASCIICase(b, 0..<9, "flashair:") {
            guard n > 11, b[9] == slash, b[10] == slash, b[11] < 0x80, b[11] != slash else { return nil }
        }
        guard let c = first(colon, in: b, 0..<n), c + 2 < n, b[c + 1] == slash, b[c + 2] == slash,
            let scheme = commonSchemes.first(where: { equalIgnoringASCIICase(b, 0..<c, $0.bytes) })?.scheme
        else { return nil }
        let start = c + 3
        var end = n
        var query: Range<Int>?
        if scheme.speaksHTTP || scheme.isCamera {
            if let hash = first(UInt8(ascii: "#"), in: b, start..<end) { end = hash }
            if let q = first(UInt8(ascii: "?"), in: b, start..<end) {
                query = q + 1..<end
                end = q
            }
        } else if scheme == .smb, let q = first(UInt8(ascii: "?"), in: b, start..<end) {
            // `smb://HOST/SHARE/PATH?encrypt=required`: SMB names cannot hold `?` (and may hold `#`).
            query = q + 1..<end
            end = q
        }
        let authorityEnd = first(slash, in: b, start..<end) ?? end
        guard start < authorityEnd, b[start] != UInt8(ascii: "["),
            first(UInt8(ascii: "@"), in: b, start..<authorityEnd) == nil
        else { return nil }
        var host = start..<authorityEnd
        var port: Int?
        if let last = lastIndex(colon, in: b, host) {
            var value = 0
            for i in last + 1..<authorityEnd {
                guard b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(b[i] - UInt8(ascii: "0"))
                if value > 65535 { return nil }
            }
            guard last + 1 < authorityEnd, value >= 1 else { return nil }
            host = start..<last
            port = value
            guard first(colon, in: b, host) == nil else { return nil }
        }
        guard !host.isEmpty, host.allSatisfy({ hostByte.contains(b[$0]) }) else { return nil }
        return Offsets(scheme: scheme, host: host, port: port, path: authorityEnd..<end, query: query)
    }

    private static func first(_ byte: UInt8, in b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        var i = range.lowerBound
        while i < range.upperBound {
            if b[i] == byte { return i }
            i += 1
        }
        return nil
    }

    private static func lastIndex(_ byte: UInt8, in b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        var i = range.upperBound
        while i > range.lowerBound {
            i -= 1
            if b[i] == byte { return i }
        }
        return nil
    }

    private static func equalIgnoringASCIICase<C: Collection<UInt8>>(
        _ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ other: C
    ) -> Bool {
        guard range.count == other.count else { return false }
        var i = range.lowerBound
        for o in other {
            if b[i].asciiLowercased != o { return false }
            i += 1
        }
        return true
    }

    private static func equalIgnoringASCIICase(
        _ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ other: StaticString
    ) -> Bool {
        equalIgnoringASCIICase(b, range, UnsafeBufferPointer(start: other.utf8Start, count: other.utf8CodeUnitCount))
    }

    /// Whether `text` holds the byte (its contiguous bytes scanned as such).
    static func contains(_ byte: UInt8, in text: Substring) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.contains(byte) } ?? text.utf8.contains(byte)
    }

    /// The last non-empty component of a path of ASCII bytes ("" for none); nil
    /// when the path holds other bytes (a Character may then span a `/`, and
    /// `split` decides).
    static func lastASCIIComponent(_ path: String) -> String? {
        guard path.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let u = path.utf8
        let slash = UInt8(ascii: "/")
        var end = u.endIndex
        while end > u.startIndex && u[u.index(before: end)] == slash { end = u.index(before: end) }
        var start = end
        while start > u.startIndex && u[u.index(before: start)] != slash { start = u.index(before: start) }
        return String(path[start..<end])
    }

    /// `scheme://[user[:shown]@]host[:port]PATH[?query]` with the path and user
    /// percent-encoded, written into one buffer.
    static func compose(
        scheme: String, user: String?, shown: String?, host: String, port: Int?, path: String,
        escapedPath: String?, query: String?
    ) -> String {
        var capacity = scheme.utf8.count + 3 + host.utf8.count + 2 + 21
        capacity += (user?.utf8.count ?? 0) * 3 + (shown?.utf8.count ?? 0) + 2
        capacity += escapedPath?.utf8.count ?? path.utf8.count * 3
        capacity += (query?.utf8.count ?? 0) + 1
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var w = ByteWriter(buffer: buffer)
            w.append(scheme)
            w.append(StaticString("://"))
            if let user {
                w.append(user, encodingAllBut: unreserved)
                if let shown {
                    w.append(UInt8(ascii: ":"))
                    w.append(shown)
                }
                w.append(UInt8(ascii: "@"))
            }
            if RemoteURL.contains(UInt8(ascii: ":"), in: host[...]) {
                w.append(UInt8(ascii: "["))
                w.append(host)
                w.append(UInt8(ascii: "]"))
            } else {
                w.append(host)
            }
            if let port {
                w.append(UInt8(ascii: ":"))
                w.append(decimal: port)
            }
            if let escapedPath { w.append(escapedPath) } else { w.append(path, encodingAllBut: pathSegmentOrSlash) }
            if let query {
                w.append(UInt8(ascii: "?"))
                w.append(query)
            }
            return w.count
        }
    }

    /// `scheme://host:port`, the host in lower case: the key connections are grouped by.
    static func composeHostKey(scheme: String, host: String, port: Int) -> String {
        let ascii = host.utf8.withContiguousStorageIfAvailable { !$0.contains { $0 >= 0x80 } } ?? false
        let lower = ascii ? host : host.lowercased()
        return String(unsafeUninitializedCapacity: scheme.utf8.count + 3 + lower.utf8.count + 21) { buffer in
            var w = ByteWriter(buffer: buffer)
            w.append(scheme)
            w.append(StaticString("://"))
            if ascii {
                for b in lower.utf8 {
                    w.append(b.asciiLowercased)
                }
            } else {
                w.append(lower)
            }
            w.append(UInt8(ascii: ":"))
            w.append(decimal: port)
            return w.count
        }
    }
}

/// Appends bytes to a buffer sized beforehand (`String(unsafeUninitializedCapacity:)`).
private struct ByteWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    var count = 0

    mutating func append(_ b: UInt8) {
        precondition(count < buffer.count)
        buffer[count] = b
        count += 1
    }

    mutating func append(_ text: StaticString) {
        for i in 0..<text.utf8CodeUnitCount { append(text.utf8Start[i]) }
    }

    mutating func append(_ text: String) {
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            precondition(count + bytes.count <= buffer.count)
            guard let from = bytes.baseAddress, let to = buffer.baseAddress else { return true }
            (to + count).update(from: from, count: bytes.count)
            count += bytes.count
            return true
        }
        if copied == nil { for b in text.utf8 { append(b) } }
    }

    /// `text` with every byte outside `allowed` written as `%XX`.
    mutating func append(_ text: String, encodingAllBut allowed: ByteSet) {
        if text.utf8.withContiguousStorageIfAvailable({ $0.allSatisfy { allowed.contains($0) } }) == true {
            return append(text)
        }
        let hex: StaticString = "0123456789ABCDEF"
        for b in text.utf8 {
            if allowed.contains(b) {
                append(b)
            } else {
                append(UInt8(ascii: "%"))
                append(hex.utf8Start[Int(b >> 4)])
                append(hex.utf8Start[Int(b & 0xF)])
            }
        }
    }

    mutating func append(decimal n: Int) {
        if n < 0 { append(UInt8(ascii: "-")) }
        let v = n.magnitude
        var divisor: UInt = 1
        while divisor <= v / 10 { divisor *= 10 }
        while divisor > 0 {
            append(UInt8(ascii: "0") + UInt8(v / divisor % 10))
            divisor /= 10
        }
    }
}
