import FerryKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The backend the UI shows, and the mapping from the page's paths (relative
/// to the root) to the backend's paths, with every path confined to the root.
struct WebSource: Sendable {
    /// What the page may offer; an operation the backend turns down still
    /// answers with the backend's own error.
    struct Capabilities: Encodable, Sendable, Hashable {
        var upload: Bool
        var delete: Bool
        var mkdir: Bool
        var rename: Bool
    }

    /// The file system.
    let fs: any RemoteFileSystem
    /// The URL it was opened with; its password never leaves the server (use `url.redacted`).
    let url: RemoteURL
    /// The backend path of the root, without a trailing `/` (empty for `/`).
    let root: String
    /// For local sources, the root with symbolic links resolved.
    private let realRoot: String?

    init(fs: any RemoteFileSystem) {
        self.fs = fs
        self.url = fs.url
        var root = fs.url.path
        while root.hasSuffix("/") { root.removeLast() }
        self.root = root
        if fs.url.scheme == .file {
            realRoot = WebSource.realPath(root.isEmpty ? "/" : root) ?? root
        } else {
            realRoot = nil
        }
    }

    /// Whether files are on this machine (served straight from disk).
    var isLocal: Bool { url.scheme == .file }

    var capabilities: Capabilities {
        switch url.scheme {
        case .file, .ftp, .ftps, .ftpes, .sftp: Capabilities(upload: true, delete: true, mkdir: true, rename: true)
        case .flashair: Capabilities(upload: true, delete: true, mkdir: true, rename: false)
        case .http, .https: Capabilities(upload: false, delete: false, mkdir: false, rename: false)
        }
    }

    /// The backend path of a page path that ``WebPath/clean(_:)`` accepted.
    ///
    /// - Throws: `FerryError.permissionDenied` when a local path leads out of
    ///   the root through a symbolic link.
    func backendPath(_ path: String) throws -> String {
        let full = path == "/" ? (root.isEmpty ? "/" : root) : root + path
        guard let realRoot else { return full }
        // Resolve the longest existing prefix: new names (upload, mkdir) are checked through their folder.
        var probe = full
        var rest = ""
        while true {
            if let real = WebSource.realPath(probe) {
                let resolved = real + rest
                // Bytes, as the file system compares them: Swift's `==`/`hasPrefix` take
                // `cafe\u{301}` (a sibling folder) for `caf\u{E9}` (the root).
                let bytes = resolved.utf8
                let inside =
                    realRoot == "/" || bytes.elementsEqual(realRoot.utf8) || bytes.starts(with: (realRoot + "/").utf8)
                guard inside else {
                    throw FerryError(
                        .permissionDenied, operation: "open", target: path,
                        detail: "a symbolic link leads out of the root")
                }
                return full
            }
            guard let slash = probe.lastIndex(of: "/"), probe != "/" else { return full }
            rest = String(probe[slash...]) + rest
            probe = slash == probe.startIndex ? "/" : String(probe[..<slash])
        }
    }

    /// `realpath(3)`, or nil when the path does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
