import FerryKit
import Foundation

/// `ferry get URL... [-o DEST] [-r] [-j N] [--overwrite] [--json]`
enum GetCommand: Command {
    static let spec = CommandSpec(
        name: "get",
        summary: "download files or folder trees (resumes by default)",
        usage: "ferry get URL... [-o DEST] [-r] [-j N] [--overwrite|--skip-existing] [--quiet] [--json]",
        options: [
            .init(
                long: "output", short: "o", takesValue: true, help: "file, or folder to download into",
                valueName: "DEST"),
            .init(long: "recursive", short: "r", takesValue: false, help: "download folders with everything in them"),
            .init(long: "jobs", short: "j", takesValue: true, help: "transfers at once (default 4)", valueName: "N"),
            .init(long: "overwrite", short: nil, takesValue: false, help: "replace files that exist"),
            .init(long: "skip-existing", short: nil, takesValue: false, help: "leave files that exist alone"),
            .init(long: "no-resume", short: nil, takesValue: false, help: "ignore .part files and start over"),
            .init(
                long: "retries", short: nil, takesValue: true,
                help: "failed tries in a row before giving up (default 5)", valueName: "N"),
            .init(long: "all", short: "a", takesValue: false, help: "with -r, include hidden and system files"),
            .init(long: "json", short: nil, takesValue: false, help: "print JSON lines of progress and results"),
        ] + connectionOptions,
        minPositionals: 1,
        maxPositionals: nil,
        details: """
            Each file is written to NAME.part beside its destination and renamed only
            when complete and verified. Run the same command again after an interruption
            (Ctrl-C, a crash, a lost connection) and it resumes from the bytes on disk.
            An existing destination is never replaced unless --overwrite is given.
            With -r, a folder URL is copied into DEST (default: a local folder of the same name).
            """)

    /// One file to fetch.
    struct Item: Sendable {
        var fs: any RemoteFileSystem
        var url: RemoteURL
        var destination: String
        /// The file as listed by `-r`, so the backend need not ask for its size again.
        var listed: RemoteEntry? = nil
    }

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        if args.has("overwrite") && args.has("skip-existing") {
            throw UsageError(message: "--overwrite and --skip-existing exclude each other")
        }
        let jobs = try args.int("jobs", default: 4, in: 1...64)
        let urls = try args.positionals.map { try remoteURL($0, for: "get") }
        var options = DownloadOptions()
        options.overwrite = args.has("overwrite") ? .overwrite : args.has("skip-existing") ? .skip : .fail
        options.resume = !args.has("no-resume")
        options.maxRetries = try args.int("retries", default: 5, in: 0...100)
        options.verifyTLS = !args.has("insecure")
        Ferry.setConnectionLimits(total: max(16, jobs), perHost: jobs)

        let items = try await plan(urls, output: args.value("output"), recursive: args.has("recursive"), args: args)
        let opts = options
        let transfers = items.map { item in
            TransferItem(label: localName(item.destination)) {
                if let entry = item.listed {
                    item.fs.download(entry, to: item.destination, options: opts)
                } else {
                    item.fs.download(item.url.path, to: item.destination, options: opts)
                }
            }
        }
        return await TransferRunner.run(transfers, jobs: jobs, command: "get", args: args, console: console)
    }

    /// Where each file goes: `-o` names a file for one URL, or a folder.
    static func plan(_ urls: [RemoteURL], output: String?, recursive: Bool, args: ParsedArguments) async throws
        -> [Item]
    {
        func name(for url: RemoteURL) -> String {
            // A URL ending in `/` names a folder's page, not a file called like the folder.
            let n = url.isFolderPath ? "" : url.lastComponent
            return n.isEmpty || n == "." || n == ".." ? "index.html" : n
        }
        var items: [Item] = []
        var seen: Set<String> = []
        func add(_ item: Item) throws {
            guard seen.insert(item.destination).inserted else {
                throw UsageError(
                    message: "two files would both be saved as \(item.destination); download them separately with -o")
            }
            items.append(item)
        }
        let intoFolder = output.map { $0.hasSuffix("/") || isDirectory($0) || urls.count > 1 } ?? true
        let base = output ?? "."
        if output != nil && intoFolder { try makeLocalFolder(base) }
        for url in urls {
            let fs = try openFileSystem(url, args)
            if recursive, try await isRemoteFolder(fs, url) {
                let root =
                    output != nil && urls.count == 1 ? base : localJoin(base, folderName(url))
                let tree = try await fs.walk(url.path, includeHidden: args.has("all"))
                try makeLocalFolder(root)
                let prefix = url.path.hasSuffix("/") ? url.path : url.path + "/"
                for folder in tree.folders {
                    try makeLocalFolder(
                        localJoin(root, String(folder.path.dropFirst(prefix.count))))
                }
                for file in tree.files where file.path.hasPrefix(prefix) {
                    let relative = String(file.path.dropFirst(prefix.count))
                    try add(
                        Item(
                            fs: fs, url: url.with(path: file.path),
                            destination: localJoin(root, relative), listed: file))
                }
                continue
            }
            let destination = intoFolder ? localJoin(base, name(for: url)) : base
            try add(Item(fs: fs, url: url, destination: output == nil ? name(for: url) : destination))
        }
        return items
    }

    static func isRemoteFolder(_ fs: any RemoteFileSystem, _ url: RemoteURL) async throws -> Bool {
        if url.path == "/" || url.path.hasSuffix("/") { return true }
        return try await fs.stat(url.path).isDirectory
    }

    static func folderName(_ url: RemoteURL) -> String {
        let n = url.lastComponent
        return n.isEmpty ? (url.host.isEmpty ? "download" : url.host) : n
    }

    static func makeLocalFolder(_ path: String) throws {
        guard !isDirectory(path) else { return }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw FerryError(.localIO, operation: "mkdir", target: path, detail: error.localizedDescription)
        }
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDir: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
    }
}
