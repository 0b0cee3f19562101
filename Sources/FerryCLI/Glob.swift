import FerryKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Shell-style patterns (`*`, `?`, `[...]`) in the last component of a remote
/// URL: matched against the folder's listing, never sent to the server.
enum Glob {
    /// Whether the last component of the URL's path holds a pattern, as `expand`
    /// decides; without waiting (a plain URL needs no async call per URL).
    static func hasPattern(_ url: RemoteURL) -> Bool { pattern(of: url.path) != nil }

    /// The last component of `path` when it is a pattern; nil otherwise (no
    /// pattern byte anywhere is decided by one scan).
    private static func pattern(of path: String) -> String? {
        guard mayHoldPattern(path), !path.hasSuffix("/"), let slash = path.lastIndex(of: "/") else { return nil }
        let last = String(path[path.index(after: slash)...])
        return isPattern(last) ? last : nil
    }

    /// Whether `text` holds a `*`, `?` or `[` byte at all (one scan of its bytes).
    private static func mayHoldPattern(_ text: String) -> Bool {
        text.utf8.contains { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "[") }
    }

    /// Whether `name` holds a pattern character.
    static func isPattern(_ name: String) -> Bool {
        guard mayHoldPattern(name) else { return false }
        if name.contains(where: { $0 == "*" || $0 == "?" }) { return true }
        // A bracket is a pattern only when closed: `[2J` alone is part of a name.
        guard let open = name.firstIndex(of: "[") else { return false }
        return name[name.index(after: open)...].dropFirst().contains("]")
    }

    /// Whether `name` matches `pattern`, as a shell matches (a leading dot only by a leading dot).
    static func matches(_ pattern: String, _ name: String, ignoreCase: Bool = false) -> Bool {
        fnmatch(pattern, name, FNM_PERIOD | (ignoreCase ? Glob.caseFold : 0)) == 0
    }

    /// glibc's `FNM_CASEFOLD` (a GNU extension the Swift module does not import).
    static let caseFold: Int32 = 1 << 4

    /// `--ignore-case`: for the commands that match patterns.
    static let ignoreCase = Flag(
        "ignore-case", help: "patterns match names in any case (always on FlashAir cards: FAT names have no case)")

    /// The entries of the URL's folder whose names match its last component, by
    /// name; nil when the last component is no pattern. No match is `notFound`.
    static func expand(
        _ url: RemoteURL, in fs: any RemoteFileSystem, includeHidden: Bool = false, ignoreCase: Bool = false
    ) async throws -> [RemoteEntry]? {
        // A FAT card's names match in any case, as the card itself finds them.
        let fold = ignoreCase || url.scheme == .flashair
        let path = url.path
        guard let pattern = pattern(of: path) else { return nil }
        let folder = remoteParent(path)
        guard !isPattern(folder) else {
            throw UsageError(message: "patterns work in the last part of a path only, not in \(folder)")
        }
        let entries = try await fs.list(folder)
            .filter { (includeHidden || !$0.isHidden) && matches(pattern, $0.name, ignoreCase: fold) }
            .sorted { $0.name < $1.name }
        guard !entries.isEmpty else {
            throw FerryError(
                .notFound, operation: "match", target: url.with(path: folder).redacted,
                detail: "no name matches \(pattern)")
        }
        return entries
    }
}
