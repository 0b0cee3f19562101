import FerryKit
import Foundation

/// `ferry put FILE... URL [--overwrite|--skip-existing] [-r]`
enum PutCommand: Command {
    enum Keys {
        static let recursive = Flag("recursive", short: "r", help: "upload folders with everything in them")
        static let overwrite = Flag("overwrite", help: "replace remote files that differ")
        static let skipExisting = Flag(
            "skip-existing", help: "leave remote files that exist alone, even when they differ")
        static let parents = Flag("parents", short: "p", help: "create missing remote folders")
        static let transfer = TransferOptionGroup(
            jobs: TransferKeys.jobs, retries: nil, overwrite: overwrite, skipExisting: skipExisting)
    }

    static let spec = CommandSpec(
        name: "put",
        summary: "upload files or folder trees",
        usage: "ferry put FILE... URL [--overwrite|--skip-existing] [-r] [-j N] [--json]",
        options: [
            Keys.recursive, Keys.overwrite, Keys.skipExisting, Keys.parents, TransferKeys.jobs, TransferKeys.json,
            TransferKeys.resume,
        ] + connectionOptions,
        minPositionals: 2, maxPositionals: nil,
        details: """
            A URL ending in / means "into this folder, keep the file's name"; so does
            a URL naming an existing remote folder, and any URL when several files are given.
            A remote file of the same size that is at least as new as the local one is
            already here and left alone; one that differs is kept and reported (exit 1)
            unless --overwrite or --skip-existing.
            """)

    /// Both of --overwrite and --skip-existing, or -j out of range.
    static func validate(_ args: ParsedArguments) throws {
        try Keys.transfer.validate(args)
    }

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        let transfer = try Keys.transfer.values(args)
        let jobs = transfer.jobs
        TransferKeys.sayResumingIsTheDefault(args, command: "put", console: console)
        let target = try remoteURL(args.positionals.last!, for: "put")
        let sources = args.positionals.dropLast().map { LocalPath.standardized($0) }
        for s in sources where !FileManager.default.fileExists(atPath: s) {
            throw FerryError(.localIO, operation: "upload", target: s, detail: "no such file")
        }
        let fs = try openFileSystem(target, args)
        var options = transfer.upload
        options.createParents = args.has(Keys.parents)

        var intoFolder = target.path.hasSuffix("/") || sources.count > 1
        if !intoFolder, let e = try? await fs.stat(target.path), e.isDirectory { intoFolder = true }

        var pairs: [(local: String, remote: String, label: String?)] = []
        pairs.reserveCapacity(sources.count)
        var multi = sources.count > 1
        for source in sources {
            let name = LocalPath.lastComponent(source)
            let remote = intoFolder ? remoteJoin(target.path, name) : target.path
            if GetCommand.isDirectory(source) {
                guard args.has(Keys.recursive) else {
                    throw UsageError(message: "\(source) is a folder; use -r to upload it with its contents")
                }
                multi = true
                // Folders first, in order, so each exists before its files.
                try? await fs.makeDirectory(remote, createParents: true)
                let enumerator = FileManager.default.enumerator(atPath: source)
                var files: [(local: String, remote: String, label: String?)] = []
                while let rel = enumerator?.nextObject() as? String {
                    let local = LocalPath.join(source, rel)
                    let remotePath = remoteJoin(remote, rel)
                    if GetCommand.isDirectory(local) {
                        do { try await fs.makeDirectory(remotePath, createParents: true) } catch {
                            if (try? await fs.stat(remotePath))?.isDirectory != true { throw error }
                        }
                    } else {
                        files.append((local, remotePath, nil))
                    }
                }
                pairs += files
            } else {
                // The label is the name taken above: the same call on the same path.
                pairs.append((source, remote, name))
            }
        }
        // What is there already, one listing per remote folder.
        var listings: [String: [String: RemoteEntry]] = [:]
        for folder in Set(pairs.map { remoteParent($0.remote) }) {
            if let entries = try? await fs.list(folder) {
                listings[folder] = Dictionary(entries.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
            }
        }
        let opts = options
        let files = pairs.map { pair in
            let existing = listings[remoteParent(pair.remote)]?[pair.remote]
            let leave = LeftFile.why(ExistingFile.upload(pair.local, to: existing), opts.overwrite)
            let shown = target.with(path: pair.remote).redacted
            return PlannedFile(
                label: pair.label ?? LocalPath.lastComponent(pair.local), source: pair.local,
                destination: shown,
                size: localSize(pair.local), leave: leave,
                start: { fs.upload(pair.local, to: pair.remote, options: opts) })
        }
        let out = Output.make(
            json: args.has(TransferKeys.json), quiet: args.has(CommonOptions.quiet), console: console,
            verb: "uploaded", command: "put", waitingText: waitingText(for: target, connections: nil), announce: true)
        return await TransferRunner.run(
            files, jobs: jobs, verb: "uploaded", multi: multi, output: out, console: console, command: "put")
    }
}

/// The size of a local file, nil when it cannot be read.
func localSize(_ path: String) -> Int64? {
    // `lstat`, as `FileManager.attributesOfItem` reads it, without building its
    // dictionary of every attribute (measured: bench/RESULTS.md, issue 19, branch cli).
    var st = stat()
    return path.withCString { lstat($0, &st) } == 0 ? Int64(st.st_size) : nil
}
