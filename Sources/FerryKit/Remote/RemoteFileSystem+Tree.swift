import Foundation

extension RemoteFileSystem {
    /// Every file under `path`, depth first in name order, folders before their
    /// contents in the returned order of `folders`. Symbolic links are listed, not
    /// followed.
    ///
    /// Up to `width` folders are listed at once (each listing is a round trip or
    /// more; a tree of a hundred folders on a link with latency would otherwise
    /// wait for each in turn). The engine's per-server limit still applies: a
    /// FlashAir card sees one request at a time.
    ///
    /// - Parameters:
    ///   - path: The folder to start from.
    ///   - includeHidden: include hidden entries (FlashAir system files).
    ///   - width: How many folders are listed at once.
    /// - Returns: Every folder and every file below `path`.
    /// - Throws: `FerryError` from the first listing that failed.
    public func walk(_ path: String, includeHidden: Bool = false, width: Int = 4) async throws(FerryError) -> (
        folders: [RemoteEntry], files: [RemoteEntry]
    ) {
        var listed: [String: [RemoteEntry]] = [:]
        // A task group that cannot throw, with each listing's outcome as a value:
        // `withThrowingTaskGroup` throws `any Error`, and this throws `FerryError`.
        typealias Listed = Result<(String, [RemoteEntry]), FerryError>
        let failure: FerryError? = await withTaskGroup(of: Listed.self) { group in
            var pending = [path]
            var seen: Set<String> = [path]
            var running = 0
            func launch() {
                while running < max(1, width), let folder = pending.popLast() {
                    running += 1
                    group.addTask {
                        do throws(FerryError) {
                            let entries = try await self.list(folder).filter { includeHidden || !$0.isHidden }
                            return .success((folder, entries.sorted { $0.name < $1.name }))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
            }
            launch()
            while let outcome = await group.next() {
                running -= 1
                switch outcome {
                case .failure(let error):
                    group.cancelAll()
                    return error
                case .success(let (folder, entries)):
                    listed[folder] = entries
                    for e in entries where e.kind == .directory && seen.insert(e.path).inserted {
                        pending.append(e.path)
                    }
                    launch()
                }
            }
            return nil
        }
        if let failure { throw failure }
        var folders: [RemoteEntry] = []
        var files: [RemoteEntry] = []
        var visited: Set<String> = []
        func visit(_ folder: String) {
            guard visited.insert(folder).inserted else { return }
            for e in listed[folder] ?? [] {
                switch e.kind {
                case .directory:
                    folders.append(e)
                    visit(e.path)
                case .file:
                    files.append(e)
                case .symlink, .other:
                    continue
                }
            }
        }
        visit(path)
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
