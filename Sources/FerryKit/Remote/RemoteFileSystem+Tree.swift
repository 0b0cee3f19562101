import Foundation

extension RemoteFileSystem {
    /// Every file under `path`, depth first, folders before their contents in the
    /// returned order of `folders`. Symbolic links are listed, not followed.
    ///
    /// - Parameter includeHidden: include hidden entries (FlashAir system files).
    public func walk(_ path: String, includeHidden: Bool = false) async throws -> (
        folders: [RemoteEntry], files: [RemoteEntry]
    ) {
        var folders: [RemoteEntry] = []
        var files: [RemoteEntry] = []
        var pending = [path]
        var seen: Set<String> = []
        while let folder = pending.popLast() {
            guard seen.insert(folder).inserted else { continue }
            try Task.checkCancellation()
            let entries = try await list(folder).sorted { $0.name < $1.name }
            for e in entries where includeHidden || !e.isHidden {
                switch e.kind {
                case .directory:
                    folders.append(e)
                    pending.append(e.path)
                case .file:
                    files.append(e)
                case .symlink, .other:
                    continue
                }
            }
        }
        return (folders, files)
    }
}

/// Joins remote path components with single slashes.
public func remoteJoin(_ base: String, _ name: String) -> String {
    if name.hasPrefix("/") { return name }
    if base.hasSuffix("/") { return base + name }
    return base + "/" + name
}

/// The parent folder of a remote path (`/` for `/a`).
public func remoteParent(_ path: String) -> String {
    var p = path
    while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
    guard let slash = p.lastIndex(of: "/") else { return "/" }
    let parent = String(p[..<slash])
    return parent.isEmpty ? "/" : parent
}
