import Foundation

/// Paths as the page names them: absolute, relative to the source's root
/// (`/DCIM/100FERRY`), checked before anything touches a backend.
enum WebPath {
    /// Cleans a path from the page: collapses `//`, drops a trailing `/`.
    ///
    /// - Returns: `nil` for anything that could leave the root or confuse a
    ///   backend: a relative path, NUL or other control characters, a `.` or
    ///   `..` component, also when percent-encoded again (`%2e%2e`,
    ///   `%252e`), or a backslash (a path separator on Windows-made cards).
    static func clean(_ text: String?) -> String? {
        guard let text, text.hasPrefix("/") else { return nil }
        var parts: [Substring] = []
        for part in text.split(separator: "/", omittingEmptySubsequences: true) {
            guard isValidName(String(part)) else { return nil }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// Whether `name` may be one path component: not empty, not `.` or `..`
    /// however encoded, no `/`, `\`, NUL or control characters.
    static func isValidName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 255 else { return false }
        for byte in name.utf8
        where byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "\\") {
            return false
        }
        // Decode repeatedly: `%2e`, `%252e` ... all count as dots.
        var decoded = name
        for _ in 0..<4 {
            if decoded == "." || decoded == ".." { return false }
            guard decoded.contains("%"), let next = decoded.removingPercentEncoding, next != decoded else { break }
            if next.contains("/") || next.contains("\\") || next.contains("\0") { return false }
            decoded = next
        }
        return decoded != "." && decoded != ".."
    }

    /// The folder holding `path` (`/` for top-level items and the root).
    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// The last component (empty for the root).
    static func name(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? ""
    }
}
