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
    /// `-o -`: every file goes to standard output, in order.
    var toStandardOutput: Bool { output == "-" }

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
        let intoFolder =
            !toStandardOutput
            && (output.map { $0.hasSuffix("/") || GetCommand.isDirectory($0) || urls.count > 1 } ?? true)
        let base = output ?? "."
        if output != nil && intoFolder { try GetCommand.makeLocalFolder(base) }
        multi = urls.count > 1
        var failed = 0
        var plain: [Target] = []
        plain.reserveCapacity(urls.count)
        files.reserveCapacity(urls.count)
        seen.reserveCapacity(urls.count)
        var opener = FileSystemOpener(args)
        for url in urls {
            let fs = try opener.open(url)
            // A URL without a pattern is not handed to the (async) expansion at all.
            guard Glob.hasPattern(url) else {
                plain.append(target(url, fs, of: urls.count, base: base))
                continue
            }
            let matched: [RemoteEntry]?
            do {
                matched = try await Glob.expand(
                    url, in: fs, includeHidden: includeHidden, ignoreCase: args.has(Glob.ignoreCase))
            } catch let e as FerryError {
                out.report(.failed(e))
                failed += 1
                continue
            }
            guard let matched else {
                plain.append(target(url, fs, of: urls.count, base: base))
                continue
            }
            multi = true
            // Every match goes into the folder -o names, as `cp *.jpg DIR` does.
            if output != nil && !toStandardOutput { try GetCommand.makeLocalFolder(base) }
            for entry in matched {
                try await add(
                    url.with(path: entry.path), entry: entry, fs: fs, base: base, intoFolder: !toStandardOutput)
            }
        }
        // Every URL is asked about once (a web URL ending in `/` is a folder when its
        // page is a directory index, else a page saved as index.html), eight at a
        // time: a thousand URLs asked one after another cost as much as fetching them.
        for target in await GetPlanner.askAbout(plain) {
            let url = target.url
            let entry: RemoteEntry?
            switch target.answer {
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
            try await add(
                url, entry: entry, fs: target.fs, base: base, intoFolder: intoFolder, single: urls.count == 1,
                name: target.name)
        }
        return failed
    }

    /// One URL of the command line without a pattern (or whose pattern matched
    /// nothing as a pattern), on its way to the plan: one record per URL.
    struct Target: Sendable {
        var url: RemoteURL
        var fs: any RemoteFileSystem
        /// The name its file gets here (``fileName(_:)``).
        var name: String
        /// Whether it is asked about (`stat`, a HEAD over HTTP) before the download.
        var ask: Bool
        /// The answer: the entry, `nil` where the download itself should say, or the
        /// error that means the file cannot be fetched. `nil` until asked.
        var answer: Result<RemoteEntry?, FerryError> = .success(nil)
    }

    /// The record of `url` of `count` URLs. Of many web URLs, one whose file is not
    /// here yet is not asked about: its download tells what a HEAD would (size,
    /// Last-Modified), and a HEAD each doubled the requests of `get URL1 ... URL1000`.
    private func target(_ url: RemoteURL, _ fs: any RemoteFileSystem, of count: Int, base: String) -> Target {
        let name = GetPlanner.fileName(url)
        let web = url.scheme == .http || url.scheme == .https
        let skip =
            web && count > 1 && !recursive && !url.isFolderPath
            && !FileManager.default.fileExists(atPath: localJoin(base, name))
        return Target(url: url, fs: fs, name: name, ask: !skip)
    }

    /// How many questions (`stat`, a HEAD over HTTP) are asked at once.
    static let questionsAtOnce = 8

    /// The targets with the answer of `stat` of each that is asked about, eight at
    /// a time, in the order given: the entry, `nil` where the download itself should
    /// say (a web URL with a query names a page its path alone may not; an error that
    /// is not about the file), or the error that means the file cannot be fetched.
    static func askAbout(_ targets: [Target]) async -> [Target] {
        // Only the URLs with a question get a task: `get URL1 ... URL1000` of
        // files not here yet asks nothing.
        let asked = targets.indices.filter { i in
            let url = targets[i].url
            return targets[i].ask && !((url.scheme == .http || url.scheme == .https) && url.query != nil)
        }
        var answered = targets
        guard !asked.isEmpty else { return answered }
        let found = await asked.concurrentMap(width: questionsAtOnce) { i -> Result<RemoteEntry?, FerryError> in
            let target = targets[i]
            do throws(FerryError) {
                return .success(try await target.fs.stat(target.url.path))
            } catch let e where [.notFound, .connectionFailed, .authenticationFailed].contains(e.code) {
                return .failure(e)
            } catch {
                return .success(nil)
            }
        }
        for (i, answer) in zip(asked, found) { answered[i].answer = answer }
        return answered
    }

    private mutating func add(
        _ url: RemoteURL, entry: RemoteEntry?, fs: any RemoteFileSystem, base: String, intoFolder: Bool,
        single: Bool = false, name: String? = nil
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
        let name = name ?? GetPlanner.fileName(url)
        let destination = intoFolder ? localJoin(base, name) : base
        // Into a folder the planner made (or `.`): no parent to create per file.
        try addFile(
            url, entry: entry, fs: fs, destination: output == nil ? name : destination,
            parentExists: (intoFolder || output == nil)
                && !destinationStartsWithTilde(output == nil ? name : destination))
    }

    private mutating func addFile(
        _ url: RemoteURL, entry: RemoteEntry?, fs: any RemoteFileSystem, destination: String,
        parentExists: Bool = false
    ) throws {
        if toStandardOutput {
            // Written as it arrives: nothing to compare, no .part, no time to set.
            var opts = options
            opts.outputDescriptor = STDOUT_FILENO
            opts.resume = false
            let shown = GetPlanner.standardOutput
            files.append(
                PlannedFile(
                    label: GetPlanner.fileName(url), source: url.redacted, destination: shown, size: entry?.size,
                    leave: nil,
                    start: { [opts] in
                        entry.map { fs.download($0, to: shown, options: opts) }
                            ?? fs.download(url.path, to: shown, options: opts)
                    }))
            return
        }
        guard seen.insert(destination).inserted else {
            throw UsageError(
                message: "two files would both be saved as \(destination); download them separately with -o")
        }
        let leave = entry.flatMap { LeftFile.why(ExistingFile.download($0, to: destination), options.overwrite) }
        var planned = options
        if parentExists { planned.createParents = false }
        let opts = planned
        files.append(
            PlannedFile(
                label: localName(destination), source: url.redacted, destination: destination, size: entry?.size,
                leave: leave,
                start: {
                    entry.map { fs.download($0, to: destination, options: opts) }
                        ?? fs.download(url.path, to: destination, options: opts)
                },
                completed: { result in
                    // A listing's time is stamped; without one the file already carries
                    // the time the server sent with the bytes (`sourceModified`, set on
                    // the open file before its flush).
                    guard !result.skipped, let entry else { return }
                    ExistingFile.stampModificationTime(destination, from: entry)
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

    /// How a download to `-o -` names its destination.
    static let standardOutput = "standard output"

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
