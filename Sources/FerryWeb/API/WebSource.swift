import FerryKit
import Foundation
import Synchronization

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
    /// Shares a one-connection source between the page and an import.
    let share: ConnectionShare
    /// The import history's name for this source, once asked.
    let historyKey = HistoryKey()

    /// The source's key in the import history (a card's CID needs one question to the card).
    final class HistoryKey: Sendable {
        private let value = Mutex<String?>(nil)

        func get(_ fs: any RemoteFileSystem) async throws -> String {
            if let known = value.withLock({ $0 }) { return known }
            let key = try await SyncEngine(fileSystem: fs, directory: "/").sourceKey()
            value.withLock { $0 = key }
            return key
        }
    }

    init(fs: any RemoteFileSystem) {
        self.fs = fs
        self.url = fs.url
        var root = fs.url.path
        while root.hasSuffix("/") { root.removeLast() }
        self.root = root
        share = ConnectionShare(isSingleConnection: fs.capabilities.contains(.oneConnection), url: fs.url)
        if fs.url.scheme == .file {
            realRoot = WebSource.realPath(root.isEmpty ? "/" : root) ?? root
        } else {
            realRoot = nil
        }
    }

    /// A card's own folders at its root: no delete from the page.
    static let systemFolders: Set<String> = ["DCIM", "SD_WLAN", "GUPIXINF"]

    /// Whether the page must not delete `web` (a system folder at a card's root).
    func isProtected(_ web: String) -> Bool {
        url.scheme == .flashair && root.isEmpty && WebPath.parent(web) == "/"
            && WebSource.systemFolders.contains(WebPath.name(web).uppercased())
    }

    /// The page path of a backend path under the root.
    func webPath(_ backend: String) -> String {
        guard !root.isEmpty else { return backend }
        if backend == root { return "/" }
        return backend.hasPrefix(root + "/") ? String(backend.dropFirst(root.count)) : backend
    }

    /// Whether files are on this machine (served straight from disk).
    var isLocal: Bool { url.scheme == .file }

    var capabilities: Capabilities {
        switch url.scheme {
        case .file, .ftp, .ftps, .ftpes, .sftp, .smb, .dav, .davs:
            Capabilities(upload: true, delete: true, mkdir: true, rename: true)
        case .flashair: Capabilities(upload: true, delete: true, mkdir: true, rename: false)
        case .http, .https, .ezshare, .camera, .ptpip:
            Capabilities(upload: false, delete: false, mkdir: false, rename: false)
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
