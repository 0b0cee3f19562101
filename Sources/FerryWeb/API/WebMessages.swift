import FerryKit
import Foundation

/// Error texts for the page: the backend's own words, without this machine's
/// folders (a local source's root becomes `/`, the home folder `~`).
enum WebMessages {
    /// The text of `error` as the page may show it.
    static func text(_ error: any Error, source: WebSource?, importDirectory: String? = nil) -> String {
        clean(FerryError.wrap(error).description, source: source, importDirectory: importDirectory)
    }

    /// `text` with local folders hidden; the import folder is named by its last component.
    static func clean(_ text: String, source: WebSource?, importDirectory: String? = nil) -> String {
        var out = text
        if let importDirectory, importDirectory.count > 1 {
            out = out.replacingOccurrences(
                of: importDirectory, with: LocalPath.lastComponent(importDirectory))
        }
        if let source, source.isLocal, !source.root.isEmpty {
            out = out.replacingOccurrences(of: source.root + "/", with: "/")
            out = out.replacingOccurrences(of: source.root, with: "/")
        }
        let cwd = FileManager.default.currentDirectoryPath
        if cwd.count > 1 { out = out.replacingOccurrences(of: cwd + "/", with: "") }
        // By name: `ProcessInfo.processInfo.environment` builds a dictionary of
        // every variable on each access, and every error shown passes here.
        if let home = getenv("HOME").map({ String(cString: $0) }), home.count > 1 {
            out = out.replacingOccurrences(of: home, with: "~")
        }
        return out
    }
}
