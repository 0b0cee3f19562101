import Foundation

/// Lookups for the backends that learn of a file only from its folder's listing
/// (cameras, FlashAir, ez Share): an entry in its parent's listing, a folder
/// that must be one.
enum ListedEntry {
    /// The entry of `p` (normalized, not the root) in its parent folder's listing.
    /// A missing parent, or one without the name, is `notFound` for `operation` on `shown`.
    static func stat(
        _ p: String, operation: String = "stat", shown: @autoclosure () -> String,
        find: (_ name: String, _ entries: [RemoteEntry]) -> RemoteEntry? = { name, entries in
            entries.first { $0.name == name }
        },
        list: (_ parent: String) async throws(FerryError) -> [RemoteEntry]
    ) async throws(FerryError) -> RemoteEntry {
        let (parent, name) = RemotePath.split(p)
        let entries: [RemoteEntry]
        do {
            entries = try await list(parent)
        } catch  where error.code == .notFound {
            throw FerryError(.notFound, operation: operation, target: shown())
        }
        guard let found = find(name, entries) else {
            throw FerryError(.notFound, operation: operation, target: shown())
        }
        return found
    }

    /// What `lookup` finds for a folder, when it is a folder: `notFound` with
    /// "no such folder" when it is missing, "is a file, not a folder" for a file.
    static func folder<Entry>(
        operation: String, shown: @autoclosure () -> String, isDirectory: (Entry) -> Bool,
        _ lookup: () async throws(FerryError) -> Entry
    ) async throws(FerryError) -> Entry {
        let entry: Entry
        do {
            entry = try await lookup()
        } catch  where error.code == .notFound {
            throw FerryError(.notFound, operation: operation, target: shown(), detail: "no such folder")
        }
        guard isDirectory(entry) else {
            throw FerryError(.notFound, operation: operation, target: shown(), detail: "is a file, not a folder")
        }
        return entry
    }
}
