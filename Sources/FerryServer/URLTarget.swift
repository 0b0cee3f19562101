/// Splitting and decoding of request targets (RFC 3986 percent-encoding).
enum URLTarget {
    /// Splits `target` at the first `?` into the raw path and the raw query.
    static func split(_ target: String) -> (path: String, query: String?) {
        guard let mark = target.firstIndex(of: "?") else { return (target, nil) }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }

    /// Decodes `%XX` escapes (and `+` when `plusAsSpace`) and reads the bytes
    /// as UTF-8, replacing invalid sequences with U+FFFD. A `%` not followed
    /// by two hex digits is kept as is.
    static func percentDecode(_ string: Substring, plusAsSpace: Bool) -> String {
        let utf8 = Array(string.utf8)
        guard utf8.contains(UInt8(ascii: "%")) || (plusAsSpace && utf8.contains(UInt8(ascii: "+"))) else {
            return String(string)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var i = 0
        while i < utf8.count {
            let byte = utf8[i]
            if byte == UInt8(ascii: "%"), i + 2 < utf8.count,
                let high = hexValue(utf8[i + 1]), let low = hexValue(utf8[i + 2])
            {
                bytes.append(high << 4 | low)
                i += 3
            } else if plusAsSpace, byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
                i += 1
            } else {
                bytes.append(byte)
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func percentDecode(_ string: String, plusAsSpace: Bool) -> String {
        percentDecode(string[...], plusAsSpace: plusAsSpace)
    }

    /// Splits a raw query at `&` (and `;` is NOT a separator) into decoded items.
    /// Empty items (`a=1&&b=2`) are skipped.
    static func queryItems(_ query: String) -> [HTTPRequest.QueryItem] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { item in
            if let equals = item.firstIndex(of: "=") {
                return HTTPRequest.QueryItem(
                    name: percentDecode(item[..<equals], plusAsSpace: true),
                    value: percentDecode(item[item.index(after: equals)...], plusAsSpace: true))
            }
            return HTTPRequest.QueryItem(name: percentDecode(item, plusAsSpace: true), value: nil)
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
