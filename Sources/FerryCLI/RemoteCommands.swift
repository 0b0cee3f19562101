import FerryKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` on every URL argument (a pattern in the last component stands
/// for every match), reporting what each did ("deleted", "created folder") and
/// each failure, and going on; 1 when any failed. Bad URLs stop everything
/// first (exit 2).
func forEachURL(
    _ args: ParsedArguments, command: String, operation: String, console: Console, expandPatterns: Bool = false,
    _ body: (any RemoteFileSystem, RemoteURL) async throws -> String
) async throws -> Int32 {
    let urls = try args.positionals.map { try remoteURL($0, for: command) }
    let out = Output.make(
        json: args.has(CommonOptions.json), quiet: args.has(CommonOptions.quiet), console: console, verb: "",
        command: command)
    defer { out.close() }
    var failed = 0
    func one(_ fs: any RemoteFileSystem, _ url: RemoteURL) async throws {
        do {
            out.report(.did(action: try await body(fs, url), target: url.redacted))
        } catch let e as UsageError {
            throw e
        } catch {
            out.report(.failed(FerryError.wrap(error, operation: operation, target: url.redacted)))
            failed += 1
        }
    }
    var opener = FileSystemOpener(args)
    for url in urls {
        do {
            let fs = try opener.open(url)
            if expandPatterns,
                let matches = try await Glob.expand(url, in: fs, ignoreCase: args.has(Glob.ignoreCase))
            {
                for entry in matches { try await one(fs, url.with(path: entry.path)) }
            } else {
                try await one(fs, url)
            }
        } catch let e as UsageError {
            throw e
        } catch {
            out.report(.failed(FerryError.wrap(error, operation: operation, target: url.redacted)))
            failed += 1
        }
    }
    return failed == 0 ? 0 : 1
}

/// `ferry rm URL... [-r [--yes]]`
enum RemoveCommand: Command {
    static let recursive = Flag(
        "recursive", short: "r", help: "delete folders with everything in them (says how much, asks first)")
    static let yes = Flag("yes", short: "y", help: "with -r, delete without asking (required without a terminal)")
    static let spec = CommandSpec(
        name: "rm", summary: "delete remote files (and folders with -r)", usage: "ferry rm URL... [-r [--yes]]",
        options: [recursive, yes, Glob.ignoreCase] + connectionOptions, minPositionals: 1, maxPositionals: nil,
        details: """
            A pattern (*, ?, [...]) in the last part of a URL deletes every file of that folder it matches.
            With -r, a folder is deleted with everything in it: Ferry lists the tree first,
            says how many files and how many bytes it holds and asks on a terminal; without
            a terminal (a script, cron) it deletes only with --yes. Files go first, then the
            folders, deepest first, then the folder itself.
            """)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        let tree = args.has(recursive)
        return try await forEachURL(args, command: "rm", operation: "delete", console: console, expandPatterns: true) {
            fs, url in
            if tree, let entry = try? await fs.stat(url.path), entry.isDirectory {
                return try await removeTree(fs, url, args, console: console)
            }
            if tree, url.isFolderPath || url.path == "/" {
                return try await removeTree(fs, url, args, console: console)
            }
            try await fs.delete(url.path)
            return "deleted"
        }
    }

    /// Deletes a folder and everything in it, after saying how much and, on a
    /// terminal, asking.
    static func removeTree(
        _ fs: any RemoteFileSystem, _ url: RemoteURL, _ args: ParsedArguments, console: Console
    ) async throws -> String {
        let (folders, files) = try await fs.walk(url.path, includeHidden: true)
        let bytes = files.reduce(Int64(0)) { $0 + ($1.size ?? 0) }
        let what =
            "\(files.count) file\(files.count == 1 ? "" : "s") (\(Format.bytes(bytes))) in "
            + "\(folders.count + 1) folder\(folders.count == 0 ? "" : "s")"
        if !args.has(yes) {
            guard isatty(0) != 0 && isatty(2) != 0 else {
                throw UsageError(
                    message:
                        "rm -r would delete \(what) under \(url.redacted); without a terminal to ask, add --yes to delete"
                )
            }
            console.drawError(Format.printable("ferry rm: delete \(url.redacted) with \(what)? [y/N] "))
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            guard answer == "y" || answer == "yes" else { return "kept (not confirmed)" }
        }
        for file in files { try await fs.delete(file.path) }
        let deepestFirst = folders.sorted {
            ($0.path.split(separator: "/").count, $1.path) > ($1.path.split(separator: "/").count, $0.path)
        }
        for folder in deepestFirst { try await fs.removeDirectory(folder.path) }
        if url.path != "/" { try await fs.removeDirectory(url.path) }
        return "deleted \(what)"
    }
}

/// `ferry mkdir URL... [-p]`
enum MakeDirectoryCommand: Command {
    static let parents = Flag("parents", short: "p", help: "create missing parent folders too")
    static let spec = CommandSpec(
        name: "mkdir", summary: "create remote folders", usage: "ferry mkdir URL... [-p]",
        options: [parents] + connectionOptions, minPositionals: 1, maxPositionals: nil)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        try await forEachURL(args, command: "mkdir", operation: "mkdir", console: console) { fs, url in
            try await fs.makeDirectory(url.path, createParents: args.has(parents))
            return "created folder"
        }
    }
}

/// `ferry rmdir URL...`
enum RemoveDirectoryCommand: Command {
    static let spec = CommandSpec(
        name: "rmdir", summary: "remove empty remote folders", usage: "ferry rmdir URL...",
        options: connectionOptions, minPositionals: 1, maxPositionals: nil)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        try await forEachURL(args, command: "rmdir", operation: "rmdir", console: console) { fs, url in
            try await fs.removeDirectory(url.path)
            return "removed folder"
        }
    }
}

/// `ferry mv URL NEWNAME [--overwrite]`
enum MoveCommand: Command {
    static let overwrite = Flag("overwrite", help: "replace a file that already has the new name")
    static let spec = CommandSpec(
        name: "mv", summary: "rename or move a remote file or folder", usage: "ferry mv URL NEWNAME [--overwrite]",
        options: [overwrite] + connectionOptions, minPositionals: 2, maxPositionals: 2,
        details: """
            NEWNAME is a name in the same folder, or an absolute path on the same server.
            A file that already has the new name is never replaced unless --overwrite is
            given (on FTP, whose RNTO would replace it, Ferry looks first).
            """)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        let url = try remoteURL(args.positionals[0], for: "mv")
        var newName = args.positionals[1]
        if newName.contains("://") {
            let target = try remoteURL(newName, for: "mv")
            guard target.hostKey == url.hostKey else {
                throw UsageError(message: "mv works within one server; download and upload to copy between servers")
            }
            newName = target.path
        }
        let destination = newName.hasPrefix("/") ? newName : remoteJoin(remoteParent(url.path), newName)
        try await openFileSystem(url, args).rename(url.path, to: destination, replacing: args.has(overwrite))
        let out = Output.make(
            json: false, quiet: args.has(CommonOptions.quiet), console: console, verb: "", command: "mv")
        out.report(.did(action: "renamed", target: "\(url.redacted) to \(url.with(path: destination).redacted)"))
        out.close()
        return 0
    }
}
