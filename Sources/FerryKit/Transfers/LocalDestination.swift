import Foundation

/// A download's local destination as the caller wrote it, made usable: `~`
/// expanded, missing parent folders created (``DownloadOptions/createParents``).
enum LocalDestination {
    /// The destination path to use. A parent folder that cannot be created is
    /// left for the download to report (naming the file and the reason).
    static func prepare(_ destination: String, _ options: DownloadOptions) -> String {
        let path = destination.hasPrefix("~") ? (destination as NSString).expandingTildeInPath : destination
        if options.createParents {
            let parent = (path as NSString).deletingLastPathComponent
            if !parent.isEmpty, !FileManager.default.fileExists(atPath: parent) {
                try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            }
        }
        return path
    }
}
