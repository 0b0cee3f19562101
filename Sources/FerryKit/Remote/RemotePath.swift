import Foundation

/// Paths on a server as Ferry's path-based backends (FTP, SFTP, WebDAV) write them:
/// absolute, `/`-separated, no trailing `/` but the root's (`//` is the
/// server's own root where a login starts elsewhere).
///
/// The cards (FlashAir, ez Share), the camera and the web page's paths follow the
/// same rules without a server root: `normalize(_:keepingServerRoot: false)`.
package enum RemotePath {
    /// A path in Ferry's form: leading `/`, no trailing `/` (except the root).
    /// `keepingServerRoot`: `//` stays `//` (an FTP server's own root); false for
    /// a card or camera, where `//` and `///` are `/`.
    ///
    /// The leading `/` is looked for as a byte: `"/\u{301}x".hasPrefix("/")` is
    /// false in Swift (the slash and the combining mark are one Character), and
    /// such a name gained a second `/` (docs/RELIABILITY.md, row 7).
    static func normalize(_ path: String, keepingServerRoot: Bool = true) -> String {
        var p = path.utf8.first == UInt8(ascii: "/") ? path : "/" + path
        while p.count > 1 && p.hasSuffix("/") && (!keepingServerRoot || p != "//") { p.removeLast() }
        return p
    }

    /// `name` in the normalized `folder`: `/` + `a` is `/a`, `/DCIM` + `a` is `/DCIM/a`.
    package static func join(_ folder: String, _ name: String) -> String {
        folder == "/" ? "/" + name : folder + "/" + name
    }

    /// The folder and the name of `path`, normalized without a server root:
    /// `/A/B/c.jpg` is (`/A/B`, `c.jpg`), `/c.jpg` is (`/`, `c.jpg`), the root
    /// (`/`, ``).
    static func split(_ path: String) -> (parent: String, name: String) {
        let p = normalize(path, keepingServerRoot: false)
        guard let slash = p.lastIndex(of: "/") else { return ("/", p) }
        let parent = p[..<slash]
        return (parent.isEmpty ? "/" : String(parent), String(p[p.index(after: slash)...]))
    }

    /// The folder holding `path` ("/" for a top-level name).
    static func parent(of path: String) -> String {
        let p = normalize(path)
        guard let slash = p.lastIndex(of: "/") else { return "/" }
        let head = String(p[..<slash])
        return head.isEmpty ? "/" : head
    }

    /// Where a rename of `path` to `newPath` goes, as every backend's `rename`
    /// reads it: a path (any `/` in it) as given, normalized; a bare name beside
    /// `path`, in the same folder (`mv /DCIM/a.jpg b.jpg` is `/DCIM/b.jpg`; a
    /// top-level `/a.jpg` gives `/b.jpg`, never `//b.jpg`, which is the server's
    /// own root on FTP).
    static func renameTarget(_ newPath: String, from path: String) -> String {
        if newPath.contains("/") { return normalize(newPath) }
        let folder = parent(of: path)
        return normalize(folder.hasSuffix("/") ? folder + newPath : folder + "/" + newPath)
    }

    /// The last component of `path`.
    static func name(of path: String) -> String {
        let p = normalize(path)
        return p.split(separator: "/").last.map(String.init) ?? "/"
    }
}
