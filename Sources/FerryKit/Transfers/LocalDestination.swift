import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A download's local destination as the caller wrote it, made usable: `~`
/// expanded, missing parent folders created (``DownloadOptions/createParents``)
/// by the rule below, an empty name refused.
///
/// The rule for missing folders: they are created only inside a folder that
/// exists and is not `/` itself. `x/y/FILE` with `x` missing is made inside the
/// current folder; `/nonexistent/dir/FILE` is refused, naming `/nonexistent`,
/// since a folder directly under `/` is hardly ever what a typo meant to create
/// (curl creates nothing without `--create-dirs`).
package enum LocalDestination {
    /// The destination path to use: `~` expanded. Folders are made by `makeReady`,
    /// when the transfer runs.
    static func prepare(_ destination: String, _ options: DownloadOptions) -> String {
        options.outputDescriptor != nil ? destination : LocalPath.expandingTilde(destination)
    }

    /// Checks `destination` before anything is written: an empty name is refused,
    /// and the missing folders above it are made by the rule (when `createParents`).
    /// Nothing to do for a download written to a descriptor (`outputDescriptor`).
    static func makeReady(_ destination: String, _ options: DownloadOptions) throws(FerryError) {
        guard options.outputDescriptor == nil else { return }
        guard !destination.isEmpty else {
            throw FerryError(
                .localIO, operation: "download", target: "''", detail: "no file named: the destination is empty")
        }
        guard options.createParents else { return }
        try makeFolders(LocalPath.parent(destination), operation: "download", for: destination)
    }

    /// Makes `folder` and the folders missing above it, by the rule: the missing
    /// ones must start inside an existing folder that is not `/`. The error names
    /// the topmost missing folder, or the file that stands where a folder should
    /// (and, as its target, `file`, the file the folders are for, when given).
    package static func makeFolders(_ folder: String, operation: String, for file: String? = nil) throws(FerryError) {
        var missing: [String] = []
        var current = folder
        while current.count > 1 && current.hasSuffix("/") { current.removeLast() }
        while true {
            var st = stat()
            if stat(current, &st) == 0 {
                guard st.st_mode & S_IFMT == S_IFDIR else {
                    throw FerryError(
                        .localIO, operation: operation, target: file ?? current,
                        detail: file == nil ? "is a file, not a folder" : "\(current) is a file, not a folder")
                }
                break
            }
            let e = errno
            guard e == ENOENT || e == ENOTDIR else { throw FerryError.posix(e, operation: operation, path: current) }
            missing.append(current)
            let up = LocalPath.parent(current)
            if up == current { break }
            current = up
        }
        guard let top = missing.last else { return }
        if current == "/" {
            throw FerryError(
                .notFound, operation: operation, target: file ?? top,
                detail: (file == nil ? "no such folder" : "no such folder \(top)")
                    + "; Ferry creates missing folders only inside an existing folder other than /")
        }
        for dir in missing.reversed() {
            if mkdir(dir, 0o777) != 0 && errno != EEXIST {
                throw FerryError.posix(errno, operation: "mkdir", path: dir)
            }
        }
    }
}
