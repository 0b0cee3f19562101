import FerryKit
import Foundation

/// `ferry put FILE... URL [--overwrite|--skip-existing] [-r]`
enum PutCommand: Command {
    static let spec = CommandSpec(
        name: "put",
        summary: "upload files or folder trees",
        usage: "ferry put FILE... URL [--overwrite|--skip-existing] [-r] [-j N] [--json]",
        options: [
            .init(long: "recursive", short: "r", takesValue: false, help: "upload folders with everything in them"),
            .init(long: "overwrite", short: nil, takesValue: false, help: "replace remote files that exist"),
            .init(long: "skip-existing", short: nil, takesValue: false, help: "leave remote files that exist alone"),
            .init(long: "parents", short: "p", takesValue: false, help: "create missing remote folders"),
            .init(long: "jobs", short: "j", takesValue: true, help: "transfers at once (default 4)", valueName: "N"),
            .init(long: "json", short: nil, takesValue: false, help: "print JSON lines of progress and results"),
        ] + connectionOptions,
        minPositionals: 2, maxPositionals: nil,
        details: """
            A URL ending in / means "into this folder, keep the file's name"; so does
            a URL naming an existing remote folder, and any URL when several files are given.
            By default an existing remote file is not replaced.
            """)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        if args.has("overwrite") && args.has("skip-existing") {
            throw UsageError(message: "--overwrite and --skip-existing exclude each other")
        }
        let jobs = try args.int("jobs", default: 4, in: 1...64)
        let target = try remoteURL(args.positionals.last!, for: "put")
        let sources = args.positionals.dropLast().map { ($0 as NSString).standardizingPath }
        for s in sources where !FileManager.default.fileExists(atPath: s) {
            throw FerryError(.localIO, operation: "upload", target: s, detail: "no such file")
        }
        let fs = try openFileSystem(target, args)
        var options = UploadOptions()
        options.overwrite = args.has("overwrite") ? .overwrite : args.has("skip-existing") ? .skip : .fail
        options.createParents = args.has("parents")
        options.verifyTLS = !args.has("insecure")

        var intoFolder = target.path.hasSuffix("/") || sources.count > 1
        if !intoFolder, let e = try? await fs.stat(target.path), e.isDirectory { intoFolder = true }

        var pairs: [(local: String, remote: String)] = []
        for source in sources {
            let name = (source as NSString).lastPathComponent
            let remote = intoFolder ? remoteJoin(target.path, name) : target.path
            if GetCommand.isDirectory(source) {
                guard args.has("recursive") else {
                    throw UsageError(message: "\(source) is a folder; use -r to upload it with its contents")
                }
                // Folders first, in order, so each exists before its files.
                try? await fs.makeDirectory(remote, createParents: true)
                let enumerator = FileManager.default.enumerator(atPath: source)
                var files: [(String, String)] = []
                while let rel = enumerator?.nextObject() as? String {
                    let local = (source as NSString).appendingPathComponent(rel)
                    let remotePath = remoteJoin(remote, rel)
                    if GetCommand.isDirectory(local) {
                        do { try await fs.makeDirectory(remotePath, createParents: true) } catch {
                            if (try? await fs.stat(remotePath))?.isDirectory != true { throw error }
                        }
                    } else {
                        files.append((local, remotePath))
                    }
                }
                pairs += files
            } else {
                pairs.append((source, remote))
            }
        }
        let opts = options
        let items = pairs.map { pair in
            TransferItem(label: (pair.local as NSString).lastPathComponent) {
                fs.upload(pair.local, to: pair.remote, options: opts)
            }
        }
        return await TransferRunner.run(items, jobs: jobs, command: "put", args: args, console: console)
    }
}
