import FerryKit
import Foundation

/// Where each file of a `get` goes, and whether it needs transferring at all.
struct GetPlanner {
    let output: String?
    let recursive: Bool
    let includeHidden: Bool
    let only: Set<String>?
    let options: DownloadOptions
    let args: ParsedArguments
    let out: any CommandOutput
    private(set) var files: [PlannedFile] = []
    /// More than one file may move: the run ends with a summary.
    private(set) var multi = false
    private var seen: Set<String> = []

    init(
        output: String?, recursive: Bool, includeHidden: Bool, only: Set<String>?, options: DownloadOptions,
        args: ParsedArguments, out: any CommandOutput
    ) {
        self.output = output
        self.recursive = recursive
        self.includeHidden = includeHidden
        self.only = only
        self.options = options
        self.args = args
        self.out = out
    }

    /// Plans every URL; returns how many could not be planned (reported already).
    mutating func plan(_ urls: [RemoteURL]) async throws -> Int {
        let intoFolder = output.map { $0.hasSuffix("/") || GetCommand.isDirectory($0) || urls.count > 1 } ?? true
        let base = output ?? "."
        if output != nil && intoFolder { try GetCommand.makeLocalFolder(base) }
        multi = urls.count > 1
        var failed = 0
        var plain: [(url: RemoteURL, fs: any RemoteFileSystem)] = []
        var opener = FileSystemOpener(args)
        for url in urls {
            let fs = try opener.open(url)
            let matched: [RemoteEntry]?
            do {
                matched = try await Glob.expand(url, in: fs, includeHidden: includeHidden)
            } catch let e as FerryError {
                out.report(.failed(e))
                failed += 1
                continue
            }
            guard let matched else {
                plain.append((url, fs))
                continue
            }
            multi = true
            // Every match goes into the folder -o names, as `cp *.jpg DIR` does.
            if output != nil { try GetCommand.makeLocalFolder(base) }
            for entry in matched {
                try await add(url.with(path: entry.path), entry: entry, fs: fs, base: base, intoFolder: true)
            }
        }
        // Every URL is asked about once (a web URL ending in `/` is a folder when its
        // page is a directory index, else a page saved as index.html), eight at a
        // time: a thousand URLs asked one after another cost as much as fetching them.
        // Of many web URLs, one whose file is not here yet needs no HEAD: its download
        // tells what a HEAD would (size, Last-Modified), and a HEAD each doubled
        // the requests of `get URL1 ... URL1000`.
        let answers = await GetPlanner.askAbout(
            plain.map { url, fs in
                let web = url.scheme == .http || url.scheme == .https
                let skip =
                    web && urls.count > 1 && !recursive && !url.isFolderPath
                    && !FileManager.default.fileExists(atPath: localJoin(base, GetPlanner.fileName(url)))
                return (url, skip ? nil : fs)
            })
        for ((url, fs), answer) in zip(plain, answers) {
            let entry: RemoteEntry?
            switch answer {
            case .success(let e): entry = e
            case .failure(let e):
                out.report(.failed(ListCommand.notACard(e.context(operation: "get", target: url.redacted), url)))
                failed += 1
                continue
            }
            let isFolder = entry?.isDirectory ?? (url.isFolderPath && url.scheme != .http && url.scheme != .https)
            if isFolder && !recursive {
                throw UsageError(message: "\(GetPlanner.folderName(url)) is a folder; use -r to download it")
            }
            try await add(url, entry: entry, fs: fs, base: base, intoFolder: intoFolder, single: urls.count == 1)
        }
        return failed
    }

    /// How many questions (`stat`, a HEAD over HTTP) are asked at once.
    static let questionsAtOnce = 8

    /// `stat` of each URL, eight at a time, in the order given: the entry, `nil` where
    /// the download itself should say (a web URL with a query names a page its path
    /// alone may not; an error that is not about the file), or the error that means
    /// the file cannot be fetched.
    /// A URL given without a file system is not asked about (`nil`).
    static func askAbout(_ urls: [(url: RemoteURL, fs: (any RemoteFileSystem)?)]) async
        -> [Result<RemoteEntry?, FerryError>]
    {
        await urls.concurrentMap(width: questionsAtOnce) { url, fs in
            guard let fs else { return .success(nil) }
            let web = url.scheme == .http || url.scheme == .https
            if web && url.query != nil { return .success(nil) }
            do throws(FerryError) {
                return .success(try await fs.stat(url.path))
            } catch let e where [.notFound, .connectionFailed, .authenticationFailed].contains(e.code) {
                return .failure(e)
            } catch {
                return .success(nil)
            }
        }
    }

    private mutating func add(
        _ url: RemoteURL, entry: RemoteEntry?, fs: any RemoteFileSystem, base: String, intoFolder: Bool,
        single: Bool = false
    ) async throws {
        if let entry, entry.isDirectory {
            guard recursive else {
                out.report(.notice("ferry get: \(entry.name) is a folder; use -r (left out)", json: [:]))
                return
            }
            multi = true
            let root = output != nil && single ? base : localJoin(base, GetPlanner.folderName(url))
            let tree = try await fs.walk(url.path, includeHidden: includeHidden)
            try GetCommand.makeLocalFolder(root)
            let prefix = url.path.hasSuffix("/") ? url.path : url.path + "/"
            for folder in tree.folders {
                try GetCommand.makeLocalFolder(localJoin(root, String(folder.path.dropFirst(prefix.count))))
            }
            var wanted: [(entry: RemoteEntry, destination: String)] = []
            for file in tree.files where file.path.hasPrefix(prefix) {
                if let only {
                    var filter = SyncOptions()
                    filter.extensions = only
                    if !filter.accepts(name: file.name) { continue }
                }
                wanted.append((file, localJoin(root, String(file.path.dropFirst(prefix.count)))))
            }
            for (file, destination) in await GetPlanner.askSizes(wanted, fs: fs) {
                try addFile(url.with(path: file.path), entry: file, fs: fs, destination: destination)
            }
            return
        }
        let name = GetPlanner.fileName(url)
        let destination = intoFolder ? localJoin(base, name) : base
        try addFile(url, entry: entry, fs: fs, destination: output == nil ? name : destination)
    }

    private mutating func addFile(
        _ url: RemoteURL, entry: RemoteEntry?, fs: any RemoteFileSystem, destination: String
    ) throws {
        guard seen.insert(destination).inserted else {
            throw UsageError(
                message: "two files would both be saved as \(destination); download them separately with -o")
        }
        let leave = entry.flatMap { LeftFile.why(ExistingFile.download($0, to: destination), options.overwrite) }
        let opts = options
        files.append(
            PlannedFile(
                label: localName(destination), source: url.redacted, destination: destination, size: entry?.size,
                leave: leave,
                start: {
                    entry.map { fs.download($0, to: destination, options: opts) }
                        ?? fs.download(url.path, to: destination, options: opts)
                },
                completed: { result in
                    guard !result.skipped else { return }
                    if let entry {
                        ExistingFile.stampModificationTime(destination, from: entry)
                    } else if let time = result.sourceModified {
                        ExistingFile.stampModificationTime(destination, to: time)
                    }
                }))
    }

    /// Sizes a listing did not give (a web server's folder page that rounds them,
    /// `1.2M`) are asked for (`stat`, a HEAD over HTTP) where a file is already at the
    /// destination: the size decides whether it is the same file. Eight at a time;
    /// nothing is asked on a first run.
    static func askSizes(_ files: [(entry: RemoteEntry, destination: String)], fs: any RemoteFileSystem) async
        -> [(entry: RemoteEntry, destination: String)]
    {
        var result = files
        let unknown = files.indices.filter {
            files[$0].entry.size == nil && !files[$0].entry.isDirectory
                && FileManager.default.fileExists(atPath: files[$0].destination)
        }
        let sizes = await unknown.concurrentMap(width: questionsAtOnce) { i in
            try? await fs.stat(files[i].entry.path).size
        }
        for (i, size) in zip(unknown, sizes) { result[i].entry.size = size }
        return result
    }

    /// The local name of a file URL; a URL ending in `/` names a web page: index.html.
    static func fileName(_ url: RemoteURL) -> String {
        let n = url.isFolderPath ? "" : url.lastComponent
        return n.isEmpty || n == "." || n == ".." ? "index.html" : n
    }

    static func folderName(_ url: RemoteURL) -> String {
        let n = url.lastComponent
        return n.isEmpty ? (url.host.isEmpty ? "download" : url.host) : n
    }
}
