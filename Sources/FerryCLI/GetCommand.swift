import FerryKit
import Foundation

/// `ferry get URL... [-o DEST | DIR | -] [-r] [-j N] [--only EXTS] [--overwrite|--skip-existing] [--json]`
enum GetCommand: Command {
    enum Keys {
        static let output = ValueOption(
            "output", short: "o", help: "file, or folder to download into; - for standard output", valueName: "DEST")
        static let recursive = Flag("recursive", short: "r", help: "download folders with everything in them")
        static let only = SyncCommand.extensionsOption(help: "with -r, only these extensions, any case (jpg,cr2)")
        static let overwrite = Flag("overwrite", help: "replace files that differ")
        static let skipExisting = Flag("skip-existing", help: "leave files that exist alone, even when they differ")
        static let noResume = Flag("no-resume", help: "ignore .part files and start over")
        static let all = Flag("all", short: "a", help: "with -r, include hidden and system files")
        static let transfer = TransferOptionGroup(
            jobs: TransferKeys.jobs, retries: TransferKeys.retries, overwrite: overwrite, skipExisting: skipExisting)
    }

    static let spec = CommandSpec(
        name: "get",
        summary: "download files or folder trees (resumes by default)",
        usage: "ferry get URL... [-o DEST | DIR | -] [-r] [--only EXTS] [-j N] [--overwrite|--skip-existing] [--json]",
        options: [
            Keys.output, Keys.recursive, Keys.only, TransferKeys.jobs, Keys.overwrite, Keys.skipExisting,
            Keys.noResume, TransferKeys.retries, Keys.all, TransferKeys.json, Glob.ignoreCase, TransferKeys.resume,
        ] + connectionOptions,
        minPositionals: 1,
        maxPositionals: nil,
        details: """
            Each file is written to NAME.part beside its destination and renamed only
            when complete and verified; it takes the source's modification time. Run
            the same command again after an interruption (Ctrl-C, a crash, a lost
            connection) and it resumes from the bytes on disk; a file already here
            (same size and time) is left alone without a byte transferred. A file that
            differs is kept and reported (exit 1) unless --overwrite or --skip-existing.
            With -r, a folder URL is copied into DEST (default: a local folder of the
            same name). An existing local folder as the last argument saves into it,
            as cp does. A pattern (*, ?, [...]) in the last part of a URL, quoted for
            the shell, is matched against the folder's listing. Missing folders above
            DEST are created, but only inside an existing folder other than /
            (-o /nonexistent/dir/FILE is refused, naming /nonexistent). -o - writes the
            files to standard output one after another, as cat does (progress and
            messages on stderr): no .part, no resume from an earlier run, nothing on disk;
            ./- names a file called -. Without -j, a web server whose answers take
            15 ms or more (far away) gets 8 transfers at once instead of 4.
            """)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        try await run(args, console: console, as: "get")
    }

    /// The usage mistakes seen in the options alone: both of --overwrite and
    /// --skip-existing, a number out of range, `-o ''`, `-o -` with -r or --json,
    /// --only without -r.
    static func validate(_ args: ParsedArguments) throws {
        try Keys.transfer.validate(args)
        let output = args.value(Keys.output)
        if output == "" {
            throw UsageError(message: "-o '' names no file; name a file, a folder, or - for standard output")
        }
        if output == "-" {
            if args.has(Keys.recursive) { throw UsageError(message: "-r cannot write to standard output (-o -)") }
            if args.has(TransferKeys.json) {
                throw UsageError(message: "--json and -o - would both write to standard output")
            }
        }
    }

    /// Runs `get` as `command` (`cat` is `get -o -`): messages name that command.
    static func run(_ args: ParsedArguments, console: Console, as command: String) async throws -> Int32 {
        let transfer = try Keys.transfer.values(args)
        let jobs = transfer.jobs
        TransferKeys.sayResumingIsTheDefault(args, command: command, console: console)
        var positionals = args.positionals
        var output = args.value(Keys.output)
        let toStandardOutput = output == "-"
        // `get URL DIR/`, `get URL .`: an existing local folder as the last argument, as cp takes it.
        if !toStandardOutput, positionals.count >= 2, let last = positionals.last, !last.contains(":"),
            isDirectory(last) || bareHostURL(last) == nil
        {
            guard output == nil, isDirectory(last) else {
                throw UsageError(
                    message: "\(last) is no URL and no existing folder; name where to save with -o \(last)")
            }
            output = last.hasSuffix("/") ? last : last + "/"
            positionals.removeLast()
        }
        let urls = try positionals.map { try remoteURL($0, for: command) }
        let only = try args.value(Keys.only)
        if only != nil && !args.has(Keys.recursive) { throw UsageError(message: "--only goes with -r") }
        var options = transfer.download
        options.resume = !args.has(Keys.noResume)
        // Without -j, a far web server gets twice the default (RoundTripWidth).
        Ferry.setConnectionLimits(
            total: max(16, jobs), perHost: jobs, widenFarServers: !args.given(TransferKeys.jobs))

        // Standard output: no bars while it is the terminal (they would mix with the bytes), as curl.
        let quiet = args.has(CommonOptions.quiet) || (toStandardOutput && isatty(STDOUT_FILENO) != 0)
        let out = Output.make(
            json: args.has(TransferKeys.json), quiet: quiet, console: console,
            verb: toStandardOutput ? "wrote" : "saved", command: command,
            labelSuffix: toStandardOutput ? " to standard output" : "",
            waitingText: urls.first.flatMap {
                waitingText(for: $0, connections: try? connectionSettings(args).maxConnections)
            })
        var planner = GetPlanner(
            output: output, recursive: args.has(Keys.recursive), includeHidden: args.has(Keys.all), only: only,
            options: options, args: args, out: out)
        let failedEarly = try await planner.plan(urls)
        return await TransferRunner.run(
            planner.files, jobs: jobs, verb: "downloaded", multi: planner.multi, output: out, console: console,
            command: command, failedBefore: failedEarly, inOrder: toStandardOutput)
    }

    /// Makes a local folder and the ones missing above it, by the rule every
    /// download follows (``LocalDestination``: only inside an existing folder other than `/`).
    static func makeLocalFolder(_ path: String) throws {
        guard !isDirectory(path) else { return }
        try LocalDestination.makeFolders(LocalPath.expandingTilde(path), operation: "mkdir")
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDir: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
    }
}
