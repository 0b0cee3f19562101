import FerryKit
import Foundation
import Synchronization

/// `ferry sync URL DIR [--watch] [--interval S] [--only jpg,cr2] [--since DATE]
/// [--layout tree|date] [--delete-after] [--dry-run] [--json] [-j N]`
enum SyncCommand: Command {
    enum Keys {
        static let watch = Flag("watch", short: "w", help: "keep importing as files appear (Ctrl-C stops)")
        static let interval = ValueOption<Duration?>(
            "interval", help: "watch: seconds between looks (card: 1, op=121; else: 10, a listing)", valueName: "S",
            default: nil, wants: "seconds from 0.05 to 86400"
        ) { text in
            guard let s = Double(text), s >= 0.05, s <= 86_400 else { return nil }
            return Duration.milliseconds(Int64(s * 1000))
        }
        static let only = extensionsOption(help: "only these extensions, any case (jpg,cr2,mov)")
        static let since = ValueOption<Date?>(
            "since", help: "only files modified since DATE (YYYY-MM-DD[THH:MM[:SS]], local time)", valueName: "DATE",
            default: nil, wants: "YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]"
        ) { text in
            guard let date = SyncCommand.parseDate(text) else { return nil }
            return .some(date)
        }
        static let layout = ValueOption<LayoutChoice?>(
            "layout",
            help:
                "tree: keep the remote folders (default); date: DIR/YYYY-MM-DD/NAME by the day taken; "
                + "or a folder TEMPLATE",
            valueName: "L",
            choices: ["tree", "date"], default: nil
        ) { text in
            if let l = SyncOptions.Layout(rawValue: text) { return .named(l) }
            guard text.contains("{") else {
                throw UsageError(message: "--layout is tree, date or a template with {tokens}, not \"\(text)\"")
            }
            return .template(try SyncCommand.template(text, "--layout"))
        }
        static let rename = ValueOption<NameTemplate?>(
            "rename", help: "name files by a TEMPLATE (tokens above)", valueName: "TEMPLATE", default: nil
        ) { try SyncCommand.template($0, "--rename") }
        static let tag = ValueOption("tag", help: "a job code for templates' {tag} (wedding)", valueName: "TEXT")
        static let backup = ValueOption(
            "backup", help: "write a second, verified copy of every import to DIR2", valueName: "DIR2")
        static let deleteAfter = Flag(
            "delete-after", help: "delete each file from the source once its copy is verified")
        static let dryRun = Flag("dry-run", short: "n", help: "say what would happen; change nothing")
        static let jobs = ValueOption(
            "jobs", short: "j", help: "downloads at once from a server", default: 4, in: 1...64)
        static let retries = TransferKeys.retries
        static let all = Flag("all", short: "a", help: "include hidden and system files")
        static let json = Flag("json", help: "print JSON lines (progress, files, summaries)")
        /// Nothing is ever overwritten: no --overwrite, no --skip-existing.
        static let transfer = TransferOptionGroup(jobs: jobs, retries: retries, overwrite: nil, skipExisting: nil)
    }

    /// `--layout`: a named layout or a folder template.
    enum LayoutChoice: Sendable, Equatable {
        case named(SyncOptions.Layout)
        case template(NameTemplate)
    }

    static let spec = CommandSpec(
        name: "sync",
        summary: "import new files from a card or server, once each; --watch keeps going",
        usage:
            "ferry sync URL DIR [--watch] [--interval S] [--only jpg,cr2,...] [--since DATE] "
            + "[--layout tree|date|TEMPLATE] [--rename TEMPLATE] [--tag TEXT] [--backup DIR2] [--delete-after] "
            + "[--dry-run] [-j N] "
            + "[--json] [--quiet]",
        options: [
            Keys.watch, Keys.interval, Keys.only, Keys.since, Keys.layout, Keys.rename, Keys.tag, Keys.backup,
            Keys.deleteAfter,
            Keys.dryRun, Keys.jobs, Keys.retries, Keys.all, Keys.json,
        ] + connectionOptions,
        minPositionals: 2, maxPositionals: 2,
        details: """
            Imports every file under URL that was not imported before into DIR, and
            remembers it in DIR/.ferry-sync.sqlite, keyed by the source (a card's CID,
            otherwise scheme, host and folder), the remote path, size and time. A file
            imported once is not fetched again, even after you delete or move it; one
            that changed on the source is fetched again under a new name
            (IMG_0001 (2).JPG). A file already in DIR with the same size and time is
            recorded, not fetched; one with the same size but another time comes
            beside it under a new name. Nothing is ever overwritten. Interrupted
            downloads resume.

            --layout TEMPLATE and --rename TEMPLATE file and name photos by tokens:
            {taken:FORMAT} (the date taken, strftime: %Y %m %d %H %M %S), {today:FORMAT},
            {name} {stem} {ext}, {folder} (the source folder), {make} {model} (the
            camera), {seq} {seq:4} (this import), {dayseq} (this import's day), {tag}
            (--tag). A raw file's JPEG and sidecars share its folder and stem.

            --delete-after deletes a file from the source only when Ferry wrote its
            local copy and that copy still has the size and SHA-256 recorded when it
            was written (checked again before the delete); never a file that was
            already in DIR, never read-only files, and on a card only when uploads
            are enabled (op=118). Deleting on a card sets its
            WRITEPROTECT, which keeps the camera from writing until the card restarts
            (it protects the card's FAT from two writers). A card always gets one
            connection.
            Exit 1 when any file failed.
            """)

    /// The usage mistakes the options alone show: --delete-after from an ez Share
    /// card, a value that is not one, --backup into DIR, --interval without
    /// --watch, --dry-run with --watch.
    static func validate(_ args: ParsedArguments) throws {
        _ = try options(args)
    }

    /// The sync's options as the arguments give them, or the usage error they make.
    static func options(_ args: ParsedArguments) throws -> SyncOptions {
        var options = SyncOptions()
        options.dryRun = args.has(Keys.dryRun)
        options.deleteAfter = args.has(Keys.deleteAfter)
        if options.deleteAfter, let url = try? RemoteURL(parsing: args.positionals[0]), url.scheme == .ezshare {
            throw UsageError(
                message:
                    "--delete-after cannot delete from an ez Share card: it is read-only over Wi-Fi; "
                    + "delete in the camera once the import is done")
        }
        options.includeHidden = args.has(Keys.all)
        let transfer = try Keys.transfer.values(args)
        options.jobs = transfer.jobs
        if let maxRetries = transfer.maxRetries { options.download.maxRetries = maxRetries }
        options.download.verifyTLS = transfer.verifyTLS
        if let only = try args.value(Keys.only) { options.extensions = only }
        if let since = try args.value(Keys.since) { options.since = since }
        switch try args.value(Keys.layout) {
        case .named(let l)?: options.layout = l
        case .template(let t)?: options.folderTemplate = t
        case nil: break
        }
        if let rename = try args.value(Keys.rename) { options.nameTemplate = rename }
        options.tag = args.value(Keys.tag)
        if let backup = args.value(Keys.backup) {
            let absolute = { (d: String) in
                LocalPath.standardized(d.hasPrefix("/") ? d : FileManager.default.currentDirectoryPath + "/" + d)
            }
            guard absolute(backup) != absolute(args.positionals[1]) else {
                throw UsageError(message: "--backup needs another folder than DIR")
            }
            options.backupDirectory = backup
        }
        if let interval = try args.value(Keys.interval) { options.interval = interval }
        if args.given(Keys.interval) && !args.has(Keys.watch) {
            throw UsageError(message: "--interval goes with --watch")
        }
        if args.has(Keys.watch) && options.dryRun {
            throw UsageError(message: "--dry-run shows one pass; it does not go with --watch")
        }
        return options
    }

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        let url = try RemoteURL(parsing: args.positionals[0])
        let directory = args.positionals[1]
        let options = try SyncCommand.options(args)
        let connection = try connectionSettings(args)
        warnIfHostKeyUnchecked(url, connection)
        if (url.scheme == .flashair || url.scheme == .ezshare)
            && (options.jobs > 1 && args.given(Keys.jobs) || connection.maxConnections ?? 1 > 1)
            && !args.has(CommonOptions.quiet)
        {
            console.error("ferry sync: a Wi-Fi SD card gets one connection at a time; -j is ignored.")
        }
        let engine = try SyncEngine(url: url, directory: directory, options: options, connection: connection)

        let watching = args.has(Keys.watch)
        let output = Output.make(
            json: args.has(Keys.json), quiet: args.has(CommonOptions.quiet), console: console, verb: "imported",
            command: "sync", announce: watching)  // watching into a log (the journal): a line per file
        let reporter = SyncReporter(output: output, directory: engine.directory, watching: watching)
        // Ctrl-C is caught before the sync starts; it cancels the sync's task, which
        // stops the transfers and keeps their partial files.
        let running = Mutex<Task<SyncPassSummary?, any Error>?>(nil)
        let interrupt = InterruptHandler { running.withLock { $0?.cancel() } }
        defer { interrupt.remove() }
        let task = Task { () async throws(FerryError) -> SyncPassSummary? in
            if watching { return try await engine.watch(events: reporter.handle) }
            return try await engine.runPass(events: reporter.handle)
        }
        running.withLock { $0 = task }
        if interrupt.fired { task.cancel() }
        let outcome = await task.result
        output.close()
        switch outcome {
        case .success(let summary):
            if summary?.interrupted == true {
                console.error("ferry sync: interrupted; partial files kept, run the same command again to resume.")
                return CLI.interruptedExitCode
            }
            guard let summary else { return interrupt.fired ? 0 : 1 }
            return summary.succeeded ? 0 : 1
        case .failure(let failure):
            let error = FerryError.wrap(failure)
            if error.code == .cancelled && interrupt.fired {
                console.error("ferry sync: interrupted.")
                return CLI.interruptedExitCode
            }
            throw error
        }
    }

    /// `--only jpg,cr2`: the extensions, or a usage error.
    static func extensions(_ text: String) throws -> Set<String> {
        let set = SyncOptions.extensions(from: text)
        guard !set.isEmpty else { throw UsageError(message: "--only wants extensions: jpg,cr2") }
        return set
    }

    /// `--only EXTS` of `sync` and `get`: a set of extensions, nil when absent.
    static func extensionsOption(help: String) -> ValueOption<Set<String>?> {
        ValueOption("only", help: help, valueName: "EXTS", default: nil) { try SyncCommand.extensions($0) }
    }

    /// `2024-05-01`, `2024-05-01T13:45`, `2024-05-01 13:45:10` (local time), or with `Z` (UTC).
    static func parseDate(_ text: String, zone: TimeZone = .current) -> Date? {
        var body = text.trimmingCharacters(in: .whitespaces)
        var tz = zone
        if body.hasSuffix("Z") {
            body.removeLast()
            tz = TimeZone(identifier: "UTC")!
        }
        let parts = body.split(whereSeparator: { "-T :".contains($0) }).map { Int($0) }
        guard [3, 5, 6].contains(parts.count), !parts.contains(nil) else { return nil }
        let n = parts.map { $0! }
        guard
            RemoteTimestamp(
                year: n[0], month: n[1], day: n[2], hour: n.count > 3 ? n[3] : 0, minute: n.count > 4 ? n[4] : 0,
                second: n.count > 5 ? n[5] : 0, zone: .floating) != nil
        else { return nil }
        var c = DateComponents()
        (c.year, c.month, c.day) = (n[0], n[1], n[2])
        (c.hour, c.minute, c.second) = (n.count > 3 ? n[3] : 0, n.count > 4 ? n[4] : 0, n.count > 5 ? n[5] : 0)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = tz
        return calendar.date(from: c)
    }

    /// A template option's value, or a usage error saying what is wrong with it.
    static func template(_ text: String, _ option: String) throws -> NameTemplate {
        do {
            return try NameTemplate(text)
        } catch {
            throw UsageError(message: "\(option) \(error.detail ?? "is not a template")")
        }
    }
}
