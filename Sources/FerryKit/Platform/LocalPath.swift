import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Local path work as plain string functions, the one place Ferry does it.
///
/// Foundation's `NSString` path API is not used anywhere in Ferry:
/// `("a" as NSString).deletingLastPathComponent` crashes this toolchain's
/// Foundation on Linux ("Illegal instruction") for any one-character string,
/// which killed `ferry get URL -o a` (issue 29). These follow POSIX `dirname`
/// and `basename`, work on the bytes a path is made of (`/` is one byte in
/// UTF-8 and never part of another character), and touch no file system
/// except `standardized`'s `~` and `expandingTilde`, which read the home folder.
package enum LocalPath {
    private static let slash = UInt8(ascii: "/")

    /// The folder holding `path`, as `dirname` says: `.` for `a`, `-`, `a/`, `..`
    /// and the empty path; `/` for `/a` and `/`; `a` for `a//b` and `a/b/`.
    package static func parent(_ path: String) -> String {
        var u = Array(path.utf8)
        while u.count > 1 && u.last == slash { u.removeLast() }
        guard let last = u.lastIndex(of: slash) else { return "." }
        var end = last
        while end > 0 && u[end - 1] == slash { end -= 1 }
        if end == 0 { return "/" }
        return String(decoding: u[0..<end], as: UTF8.self)
    }

    /// The last component, as `basename` says: `a` for `a`, `a/`, `./a`, `/a`;
    /// `b` for `a//b`; `/` for `/`; `..` for `..`; empty for the empty path.
    package static func lastComponent(_ path: String) -> String {
        var u = Array(path.utf8)
        while u.count > 1 && u.last == slash { u.removeLast() }
        if u == [slash] { return "/" }
        guard let last = u.lastIndex(of: slash) else { return String(decoding: u, as: UTF8.self) }
        return String(decoding: u[(last + 1)...], as: UTF8.self)
    }

    /// The extension of the last component without its dot (`JPG` for
    /// `IMG_0001.JPG`); empty when it has none (`README`, `.profile`, `a.`).
    package static func pathExtension(_ path: String) -> String {
        let name = lastComponent(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// `base` and `name` joined with one `/`: `a/b` for (`a`, `b`), (`a/`, `b`),
    /// (`a`, `/b`); `name` alone when `base` is empty; `base` when `name` is.
    package static func join(_ base: String, _ name: String) -> String {
        var b = Substring(base)
        var n = Substring(name)
        if b.isEmpty { return name }
        if n.isEmpty { return base }
        while b.count > 1 && b.hasSuffix("/") { b = b.dropLast() }
        while n.hasPrefix("/") { n = n.dropFirst() }
        return b == "/" ? "/" + n : b + "/" + n
    }

    /// `path` with `~` or `~/...` made the home folder (`$HOME`, else the user's
    /// entry in the password database), `~user/...` that user's; unchanged when
    /// it does not start with `~` or the home is unknown.
    package static func expandingTilde(_ path: String) -> String {
        guard path.utf8.first == UInt8(ascii: "~") else { return path }
        let rest = path.dropFirst()
        let user = rest.prefix { $0 != "/" }
        let tail = rest.dropFirst(user.count)
        let home: String?
        if user.isEmpty {
            if let h = getenv("HOME").map({ String(cString: $0) }), !h.isEmpty {
                home = h
            } else {
                home = getpwuid(getuid()).flatMap { $0.pointee.pw_dir.map { String(cString: $0) } }
            }
        } else {
            home = getpwnam(String(user)).flatMap { $0.pointee.pw_dir.map { String(cString: $0) } }
        }
        guard let home else { return path }
        if tail.isEmpty { return home }
        return join(home, String(tail))
    }

    /// `path` written plainly, without reading the disk beyond the home folder:
    /// `~` expanded, repeated `/` made one, `.` components and a trailing `/`
    /// dropped, and `..` taken back against the component before it (at `/`,
    /// `..` stays `/`; a relative path keeps its leading `..`). `.` for `./`,
    /// empty for the empty path. Symbolic links are not resolved.
    package static func standardized(_ path: String) -> String {
        let expanded = expandingTilde(path)
        if expanded.isEmpty { return "" }
        let absolute = expanded.utf8.first == slash
        var parts: [Substring] = []
        for part in expanded.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..":
                if let last = parts.last, last != ".." {
                    parts.removeLast()
                } else if !absolute {
                    parts.append(part)
                }
            default: parts.append(part)
            }
        }
        let body = parts.joined(separator: "/")
        if absolute { return "/" + body }
        return body.isEmpty ? "." : body
    }

    /// `path` made absolute against the current folder, then `standardized`.
    package static func absolute(_ path: String) -> String {
        let expanded = expandingTilde(path)
        if expanded.utf8.first == slash { return standardized(expanded) }
        return standardized(join(FileManager.default.currentDirectoryPath, expanded))
    }
}
