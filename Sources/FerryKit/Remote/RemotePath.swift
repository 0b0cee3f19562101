import Foundation

/// Paths on a server as Ferry's path-based backends (FTP, SFTP, WebDAV) write them:
/// absolute, `/`-separated, no trailing `/` but the root's (`//` is the
/// server's own root where a login starts elsewhere).
enum RemotePath {
    /// A path in Ferry's form: leading `/`, no trailing `/` (except the root).
    static func normalize(_ path: String) -> String {
        var p = path.hasPrefix("/") ? path : "/" + path
        while p.count > 1 && p.hasSuffix("/") && p != "//" { p.removeLast() }
        return p
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
