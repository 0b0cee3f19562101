import FerryKit
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A ``RemoteFileSystem`` whose files live in memory: the source of sync and web
/// tests that are not about a protocol (issue 27 item 8). Nothing to start, no
/// port, no packet; a listing is a dictionary lookup.
///
/// Files are put in with ``add(_:_:modified:readOnly:)`` (folders above them
/// appear by themselves). A download goes through ``LocalFileSystem``'s own
/// `.part`, journal, overwrite rule and rename, from a spool copy of the bytes
/// that carries the file's time, so it behaves as any backend's download; its
/// ``TransferResult/source`` is that spool copy's path. `delete`, `mkdir`,
/// `rmdir` and `rename` act on the tree; `upload` is not offered (the
/// protocol's default refuses it).
public final class MemoryFileSystem: RemoteFileSystem, Sendable {
    public let url: RemoteURL

    private struct Node: Sendable {
        /// Nil for a folder.
        var data: Data?
        var modified: Date
        var readOnly: Bool
        /// Changes with every `add`, so a spool copy is rewritten only when stale.
        var version: Int
    }

    private struct State {
        var nodes: [String: Node] = [
            "/": Node(data: nil, modified: MemoryFileSystem.epoch, readOnly: false, version: 0)
        ]
        var nextVersion = 1
        var spooled: [String: Int] = [:]
        var calls: [String: Int] = [:]
    }

    private let state = Mutex(State())
    private let spool: TempDir
    /// Copies the spooled bytes as every local download does.
    private let copier: LocalFileSystem

    /// The time files get unless one is given: 2024-05-01 12:00:00 UTC.
    public static let epoch = Date(timeIntervalSince1970: 1_714_564_800)

    /// A file system named by `url` (only a name: nothing is ever connected to).
    public init(url: RemoteURL? = nil) throws {
        self.url = try url ?? RemoteURL(parsing: "sftp://memory/")
        spool = try TempDir(prefix: "memory-fs")
        copier = LocalFileSystem(url: try RemoteURL(parsing: spool.path))
    }

    /// Puts a file at `path` (absolute), replacing one there; missing folders above it are made.
    public func add(_ path: String, _ data: Data, modified: Date = MemoryFileSystem.epoch, readOnly: Bool = false) {
        let path = Self.normalized(path)
        state.withLock { s in
            Self.makeParents(of: path, in: &s)
            s.nodes[path] = Node(data: data, modified: modified, readOnly: readOnly, version: s.nextVersion)
            s.nextVersion += 1
        }
    }

    /// Makes a folder at `path` and the missing ones above it.
    public func addFolder(_ path: String, modified: Date = MemoryFileSystem.epoch) {
        let path = Self.normalized(path)
        state.withLock { s in
            Self.makeParents(of: path, in: &s)
            if s.nodes[path] == nil { s.nodes[path] = Node(data: nil, modified: modified, readOnly: false, version: 0) }
        }
    }

    /// The bytes of the file at `path`; nil when there is none.
    public func contents(_ path: String) -> Data? {
        state.withLock { $0.nodes[Self.normalized(path)]?.data }
    }

    /// The paths of every file, sorted.
    public var filePaths: [String] {
        state.withLock { s in s.nodes.filter { $0.value.data != nil }.keys.sorted() }
    }

    /// How often each operation was asked for so far (`list`, `stat`, `download`, ...).
    public var calls: [String: Int] { state.withLock { $0.calls } }

    // MARK: RemoteFileSystem

    public func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        let path = Self.normalized(path)
        return try state.withLock { s throws(FerryError) -> [RemoteEntry] in
            s.calls["list", default: 0] += 1
            guard let node = s.nodes[path] else { throw notFound("list", path) }
            guard node.data == nil else {
                throw FerryError(.localIO, operation: "list", target: shown(path), detail: "not a folder")
            }
            return s.nodes.filter { $0.key != "/" && Self.parent($0.key) == path }
                .map { entry($0.key, $0.value) }
                .sorted { $0.name < $1.name }
        }
    }

    public func stat(_ path: String) async throws(FerryError) -> RemoteEntry {
        let path = Self.normalized(path)
        return try state.withLock { s throws(FerryError) -> RemoteEntry in
            s.calls["stat", default: 0] += 1
            guard let node = s.nodes[path] else { throw notFound("stat", path) }
            return entry(path, node)
        }
    }

    public func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
        let path = Self.normalized(path)
        let local = spool.path + path
        let (node, stale) = state.withLock { s -> (Node?, Bool) in
            s.calls["download", default: 0] += 1
            guard let node = s.nodes[path], node.data != nil else { return (nil, false) }
            // Rewritten only when the file changed: a resumed download reads the same copy.
            defer { s.spooled[path] = node.version }
            return (node, s.spooled[path] != node.version)
        }
        if let node, let data = node.data, stale {
            try? FileManager.default.createDirectory(
                atPath: (local as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let temporary = local + ".\(node.version).spooling"
            if FileManager.default.createFile(atPath: temporary, contents: data) {
                try? FileManager.default.setAttributes([.modificationDate: node.modified], ofItemAtPath: temporary)
                _ = Glibc.rename(temporary, local)
            }
        } else if node == nil {
            // Not here (or a folder): the copy fails as a missing source does.
            try? FileManager.default.removeItem(atPath: local)
        }
        return copier.download(local, to: destination, options: options)
    }

    public func delete(_ path: String) async throws(FerryError) {
        let path = Self.normalized(path)
        try state.withLock { s throws(FerryError) in
            s.calls["delete", default: 0] += 1
            guard let node = s.nodes[path] else { throw notFound("delete", path) }
            guard node.data != nil else {
                throw FerryError(.localIO, operation: "delete", target: shown(path), detail: "is a folder; use rmdir")
            }
            guard !node.readOnly else { throw FerryError(.permissionDenied, operation: "delete", target: shown(path)) }
            s.nodes[path] = nil
        }
    }

    public func makeDirectory(_ path: String, createParents: Bool) async throws(FerryError) {
        let path = Self.normalized(path)
        try state.withLock { s throws(FerryError) in
            s.calls["mkdir", default: 0] += 1
            if s.nodes[path] != nil {
                throw FerryError(.destinationExists, operation: "mkdir", target: shown(path))
            }
            if !createParents && s.nodes[Self.parent(path)] == nil { throw notFound("mkdir", Self.parent(path)) }
            Self.makeParents(of: path, in: &s)
            s.nodes[path] = Node(data: nil, modified: Date(), readOnly: false, version: 0)
        }
    }

    public func removeDirectory(_ path: String) async throws(FerryError) {
        let path = Self.normalized(path)
        try state.withLock { s throws(FerryError) in
            s.calls["rmdir", default: 0] += 1
            guard let node = s.nodes[path], node.data == nil else { throw notFound("rmdir", path) }
            guard !s.nodes.keys.contains(where: { Self.parent($0) == path && $0 != "/" }) else {
                throw FerryError(.directoryNotEmpty, operation: "rmdir", target: shown(path))
            }
            s.nodes[path] = nil
        }
    }

    public func rename(_ path: String, to newPath: String, replacing: Bool) async throws(FerryError) {
        let from = Self.normalized(path)
        let to = Self.normalized(newPath.hasPrefix("/") ? newPath : Self.parent(from) + "/" + newPath)
        try state.withLock { s throws(FerryError) in
            s.calls["rename", default: 0] += 1
            guard s.nodes[from] != nil else { throw notFound("rename", from) }
            if s.nodes[to] != nil && !replacing {
                throw FerryError(.destinationExists, operation: "rename", target: shown(to))
            }
            let moved = s.nodes.filter { $0.key == from || $0.key.hasPrefix(from + "/") }
            for (key, node) in moved {
                s.nodes[key] = nil
                s.nodes[to + key.dropFirst(from.count)] = node
            }
        }
    }

    // MARK: Helpers

    private func entry(_ path: String, _ node: Node) -> RemoteEntry {
        let name = path == "/" ? "/" : String(path.split(separator: "/").last ?? "")
        return RemoteEntry(
            name: name, path: path, kind: node.data == nil ? .directory : .file,
            size: node.data.map { Int64($0.count) }, modified: RemoteTimestamp(utc: node.modified),
            isHidden: name.hasPrefix(".") && name != "/", isReadOnly: node.readOnly)
    }

    private func shown(_ path: String) -> String { url.with(path: path).redacted }

    private func notFound(_ operation: String, _ path: String) -> FerryError {
        FerryError(.notFound, operation: operation, target: shown(path))
    }

    private static func makeParents(of path: String, in s: inout State) {
        var folder = parent(path)
        while s.nodes[folder] == nil {
            s.nodes[folder] = Node(data: nil, modified: epoch, readOnly: false, version: 0)
            folder = parent(folder)
        }
    }

    /// `/a/b` for `a/b/`, `/a//b` and `/a/./b`.
    static func normalized(_ path: String) -> String {
        let parts = path.split(separator: "/").filter { $0 != "." }
        return "/" + parts.joined(separator: "/")
    }

    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
