import FerryKit
import Foundation
import Synchronization

/// `ferry sync URL DIR [--watch] [--interval S] [--only jpg,cr2] [--since DATE]
/// [--layout tree|date] [--delete-after] [--dry-run] [--json] [-j N]`
enum SyncCommand: Command {
    static let spec = CommandSpec(
        name: "sync",
        summary: "import new files from a card or server, once each; --watch keeps going",
        usage:
            "ferry sync URL DIR [--watch] [--interval S] [--only jpg,cr2,...] [--since DATE] "
            + "[--layout tree|date] [--delete-after] [--dry-run] [-j N] [--json] [--quiet]",
        options: [
            .init(long: "watch", short: "w", takesValue: false, help: "keep importing as files appear (Ctrl-C stops)"),
            .init(
                long: "interval", short: nil, takesValue: true,
                help: "watch: seconds between looks (card: 1, op=121; else: 10, a listing)", valueName: "S"),
            .init(
                long: "only", short: nil, takesValue: true, help: "only these extensions, any case (jpg,cr2,mov)",
                valueName: "EXTS"),
            .init(
                long: "since", short: nil, takesValue: true,
                help: "only files modified since DATE (YYYY-MM-DD[THH:MM[:SS]], local time)", valueName: "DATE"),
            .init(
                long: "layout", short: nil, takesValue: true,
                help: "tree: keep the remote folders (default); date: DIR/YYYY-MM-DD/NAME", valueName: "L"),
            .init(
                long: "delete-after", short: nil, takesValue: false,
                help: "delete each file from the source once its copy is verified"),
            .init(long: "dry-run", short: "n", takesValue: false, help: "say what would happen; change nothing"),
            .init(
                long: "jobs", short: "j", takesValue: true, help: "downloads at once from a server (default 4)",
                valueName: "N"),
            .init(
                long: "retries", short: nil, takesValue: true,
                help: "failed tries in a row before giving up on a file (default 5)", valueName: "N"),
            .init(long: "all", short: "a", takesValue: false, help: "include hidden and system files"),
            .init(long: "json", short: nil, takesValue: false, help: "print JSON lines (progress, files, summaries)"),
        ] + connectionOptions,
        minPositionals: 2, maxPositionals: 2,
        details: """
            Imports every file under URL that was not imported before into DIR, and
            remembers it in DIR/.ferry-sync.sqlite, keyed by the source (a card's CID,
            otherwise scheme, host and folder), the remote path, size and time. A file
            imported once is not fetched again, even after you delete or move it; one
            that changed on the source is fetched again under a new name
            (IMG_0001 (2).JPG). A file already in DIR with the same size is recorded,
            not fetched. Nothing is ever overwritten. Interrupted downloads resume.

            --delete-after deletes a file from the source only after its local copy is
            complete and its size verified; never read-only files, and on a card only
            when uploads are enabled (op=118). Deleting on a card sets its
            WRITEPROTECT, which keeps the camera from writing until the card restarts
            (it protects the card's FAT from two writers). A card always gets one
            connection.
            Exit 1 when any file failed.
            """)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        let url = try parseURL(args.positionals[0])
        let directory = args.positionals[1]
        var options = SyncOptions()
        options.dryRun = args.has("dry-run")
        options.deleteAfter = args.has("delete-after")
        options.includeHidden = args.has("all")
        options.jobs = try args.int("jobs", default: 4, in: 1...64)
        options.download.maxRetries = try args.int("retries", default: 5, in: 0...100)
        options.download.verifyTLS = !args.has("insecure")
        if let only = args.value("only") {
            options.extensions = SyncOptions.extensions(from: only)
            guard !options.extensions.isEmpty else { throw UsageError(message: "--only wants extensions: jpg,cr2") }
        }
        if let since = args.value("since") {
            guard let date = parseDate(since) else {
                throw UsageError(message: "--since wants YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], not \"\(since)\"")
            }
            options.since = date
        }
        if let layout = args.value("layout") {
            guard let l = SyncOptions.Layout(rawValue: layout) else {
                throw UsageError(message: "--layout is tree or date, not \"\(layout)\"")
            }
            options.layout = l
        }
        if let interval = args.value("interval") {
            guard let s = Double(interval), s >= 0.05, s <= 86_400 else {
                throw UsageError(message: "--interval wants seconds from 0.05 to 86400, not \"\(interval)\"")
            }
            options.interval = .milliseconds(Int64(s * 1000))
        }
        if args.value("interval") != nil && !args.has("watch") {
            throw UsageError(message: "--interval goes with --watch")
        }
        if args.has("watch") && options.dryRun {
            throw UsageError(message: "--dry-run shows one pass; it does not go with --watch")
        }
        if url.scheme == .http || url.scheme == .https {
            throw UsageError(message: "HTTP servers cannot list folders; sync from a card, an FTP server or a folder")
        }
        let connection = try connectionOptions(args)
        if url.scheme == .flashair
            && (options.jobs > 1 && args.value("jobs") != nil || connection.maxConnections ?? 1 > 1)
            && !args.has("quiet")
        {
            console.error("ferry sync: a FlashAir card gets one connection at a time; -j is ignored")
        }
        let engine = try SyncEngine(url: url, directory: directory, options: options, connection: connection)

        let mode: ProgressReporter.Mode =
            args.has("json") ? .json : (args.has("quiet") || !console.stderrIsTerminal) ? .silent : .bars
        let output = SyncOutput(
            mode: mode, console: console, directory: engine.directory, watching: args.has("watch"),
            quiet: args.has("quiet"))
        let watching = args.has("watch")
        // Ctrl-C is caught before the sync starts; it cancels the sync's task, which
        // stops the transfers and keeps their partial files.
        let running = Mutex<Task<SyncPassSummary?, any Error>?>(nil)
        let interrupt = InterruptHandler { running.withLock { $0?.cancel() } }
        defer { interrupt.remove() }
        let task = Task { () async throws(FerryError) -> SyncPassSummary? in
            if watching { return try await engine.watch(events: output.handle) }
            return try await engine.runPass(events: output.handle)
        }
        running.withLock { $0 = task }
        if interrupt.fired { task.cancel() }
        let outcome = await task.result
        output.close()
        switch outcome {
        case .success(let summary):
            if summary?.interrupted == true {
                console.error("ferry sync: interrupted; partial files kept, run the same command again to resume")
                return 1
            }
            guard let summary else { return interrupt.fired ? 0 : 1 }
            return summary.succeeded ? 0 : 1
        case .failure(let failure):
            let error = FerryError.wrap(failure)
            if error.code == .cancelled && interrupt.fired {
                console.error("ferry sync: interrupted")
                return 1
            }
            throw error
        }
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
}

/// Shows a sync as it happens: progress bars and a summary per pass on a
/// terminal, JSON lines with `--json`, only summaries and problems otherwise.
/// Called from the engine's tasks concurrently; its own state is under a lock.
final class SyncOutput: Sendable {
    let mode: ProgressReporter.Mode
    let console: Console
    let directory: String
    let watching: Bool
    let quiet: Bool
    private let reporter: ProgressReporter
    /// Running transfers by remote path.
    private let transfers = Mutex<[String: Transfer]>([:])

    init(mode: ProgressReporter.Mode, console: Console, directory: String, watching: Bool, quiet: Bool) {
        self.mode = mode
        self.console = console
        self.directory = directory
        self.watching = watching
        self.quiet = quiet
        reporter = ProgressReporter(mode: mode, console: console, totalFiles: 0, command: "sync")
    }

    func close() { reporter.close() }

    /// A destination as shown: relative to DIR.
    func shown(_ path: String) -> String {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }

    private func take(_ item: SyncItem) -> Transfer? {
        transfers.withLock { $0.removeValue(forKey: item.remotePath) }
    }

    func handle(_ event: SyncEvent) {
        if mode == .json {
            json(event)
            return
        }
        switch event {
        case .passStarted, .recorded, .waiting:
            break
        case .planned(let item):
            let size = item.size.map { " (\(Format.bytes($0)))" } ?? ""
            switch item.action {
            case .download: console.show("would import \(item.remotePath) -> \(shown(item.destination))\(size)\n")
            case .downloadChanged:
                console.show("would import again (changed) \(item.remotePath) -> \(shown(item.destination))\(size)\n")
            case .recordExisting: console.show("would record \(shown(item.destination)) (already here)\n")
            }
        case .downloadStarted(let item, let transfer):
            transfers.withLock { $0[item.remotePath] = transfer }
            reporter.add(transfer, label: shown(item.destination))
        case .imported(let item, let result):
            if let t = take(item) { reporter.finish(t, label: shown(item.destination), result: .success(result)) }
        case .failed(let item, let error):
            // The reporter prints a transfer's failure itself.
            if let t = take(item) {
                reporter.finish(t, label: shown(item.destination), result: .failure(error))
            } else {
                reporter.message("ferry sync: \(error)")
            }
        case .deletedFromSource(let item):
            if !quiet { console.show("deleted from the source: \(item.remotePath)\n") }
        case .keptOnSource(let item, let reason):
            reporter.message("ferry sync: kept \(item.remotePath) on the source: \(reason)")
        case .passFinished(let s):
            if watching && s.pass > 1 && s.imported == 0 && s.failures.isEmpty && s.deleted.isEmpty && s.recorded == 0 {
                break
            }
            console.show(SyncOutput.text(s, watching: watching))
        case .sourceUnavailable(let error):
            reporter.message("ferry sync: the source is not answering (\(error)); waiting for it")
        case .sourceAvailable:
            reporter.message("ferry sync: the source answers again")
        case .differentCard(let previous, let current):
            reporter.message(
                "ferry sync: a different card answers (CID \(current ?? "unknown"), was \(previous ?? "unknown"))")
        case .cardRestarted:
            reporter.message("ferry sync: the card restarted; looking again")
        }
    }

    /// The human summary of one pass.
    static func text(_ s: SyncPassSummary, watching: Bool) -> String {
        var lines: [String] = []
        let head = watching ? "pass \(s.pass): " : ""
        if s.dryRun {
            let downloads = s.items.filter { $0.action != .recordExisting }
            let bytes = downloads.reduce(Int64(0)) { $0 + ($1.size ?? 0) }
            lines.append(
                "dry run: would import \(plural(downloads.count, "file")) (\(Format.bytes(bytes))) and record "
                    + "\(s.recorded) already here; \(s.alreadyImported) imported before, \(s.filtered) filtered out; "
                    + "nothing was changed")
            return lines.joined(separator: "\n") + "\n"
        }
        var line = head + "imported \(plural(s.imported, "file"))"
        if s.imported > 0 {
            let secs = s.duration / .seconds(1)
            line += ", \(Format.bytes(s.bytes)) in \(String(format: "%.1f", secs)) s (\(Format.rate(s.bytesPerSecond)))"
            if s.changed > 0 { line += ", \(s.changed) changed on the source" }
        }
        var skipped: [String] = []
        if s.alreadyImported > 0 { skipped.append("\(s.alreadyImported) imported before") }
        if s.recorded > 0 { skipped.append("\(s.recorded) already here, recorded") }
        if s.filtered > 0 { skipped.append("\(s.filtered) filtered out") }
        if s.deferred > 0 { skipped.append("\(s.deferred) still changing") }
        line += "; skipped \(s.skipped)" + (skipped.isEmpty ? "" : " (" + skipped.joined(separator: ", ") + ")")
        line += "; \(s.failures.count) failed"
        lines.append(line)
        for f in s.failures { lines.append("  failed: \(f.error)") }
        if s.notAttempted > 0 { lines.append("  not started: \(plural(s.notAttempted, "file")) (the source stopped)") }
        if !s.deleted.isEmpty { lines.append("  deleted from the source: \(plural(s.deleted.count, "file"))") }
        if !s.kept.isEmpty { lines.append("  kept on the source: \(plural(s.kept.count, "file"))") }
        return lines.joined(separator: "\n") + "\n"
    }

    static func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

    // MARK: JSON lines

    private func json(_ event: SyncEvent) {
        switch event {
        case .passStarted(let pass, let source, let key):
            console.json(JSONPassStart(pass: pass, source: source, sourceKey: key))
        case .planned(let item):
            console.json(JSONItem(type: "planned", item: item, shown: shown(item.destination)))
        case .downloadStarted(let item, let transfer):
            transfers.withLock { $0[item.remotePath] = transfer }
            reporter.add(transfer, label: shown(item.destination))
        case .imported(let item, let result):
            if let t = take(item) { reporter.remove(t) }
            var j = JSONItem(type: "imported", item: item, shown: shown(item.destination))
            j.bytesTransferred = result.bytesTransferred
            j.resumedFrom = result.resumedFrom
            j.seconds = result.duration / .seconds(1)
            j.size = result.size
            console.json(j)
        case .recorded(let item):
            console.json(JSONItem(type: "recorded", item: item, shown: shown(item.destination)))
        case .failed(let item, let error):
            if let t = take(item) { reporter.remove(t) }
            var j = JSONItem(type: "failed", item: item, shown: shown(item.destination))
            j.error = error.description
            j.errorCode = error.code.description
            j.serverCode = error.serverCode
            console.json(j)
        case .deletedFromSource(let item):
            console.json(JSONItem(type: "deleted", item: item, shown: shown(item.destination)))
        case .keptOnSource(let item, let reason):
            var j = JSONItem(type: "kept", item: item, shown: shown(item.destination))
            j.reason = reason
            console.json(j)
        case .passFinished(let s):
            console.json(JSONSummary(s))
        case .sourceUnavailable(let error):
            console.json(["type": "watch", "event": "unavailable", "error": error.description])
        case .sourceAvailable:
            console.json(["type": "watch", "event": "available"])
        case .differentCard(let previous, let current):
            console.json([
                "type": "watch", "event": "different-card", "previous": previous ?? "", "current": current ?? "",
            ])
        case .cardRestarted:
            console.json(["type": "watch", "event": "card-restarted"])
        case .waiting:
            console.json(["type": "watch", "event": "waiting"])
        }
    }
}

/// The `--json` line that opens a pass.
struct JSONPassStart: Encodable {
    var type = "pass-start"
    var pass: Int
    var source: String
    var sourceKey: String
}

/// One file in `--json` output.
struct JSONItem: Encodable {
    var type: String
    var action: String
    var path: String
    var destination: String
    var size: Int64?
    var modified: String?
    var bytesTransferred: Int64?
    var resumedFrom: Int64?
    var seconds: Double?
    var error: String?
    var errorCode: String?
    var serverCode: Int?
    var reason: String?

    init(type: String, item: SyncItem, shown: String) {
        self.type = type
        action = item.action.rawValue
        path = item.remotePath
        destination = shown
        size = item.size
        modified = item.modified?.iso8601
    }
}

/// The `--json` summary line of one pass.
struct JSONSummary: Encodable {
    struct Failure: Encodable {
        var path: String
        var error: String
        var errorCode: String
    }
    struct Kept: Encodable {
        var path: String
        var reason: String
    }
    var type = "summary"
    var pass: Int
    var source: String
    var sourceKey: String
    var dryRun: Bool
    var listed: Int
    var imported: Int
    var changed: Int
    var bytes: Int64
    var importedBytes: Int64
    var seconds: Double
    var bytesPerSecond: Double
    var skipped: Int
    var alreadyImported: Int
    var recorded: Int
    var filtered: Int
    var deferred: Int
    var failed: Int
    var failures: [Failure]
    var deleted: [String]
    var kept: [Kept]
    var notAttempted: Int
    var interrupted: Bool

    init(_ s: SyncPassSummary) {
        pass = s.pass
        source = s.source
        sourceKey = s.sourceKey
        dryRun = s.dryRun
        listed = s.listed
        imported = s.imported
        changed = s.changed
        bytes = s.bytes
        importedBytes = s.importedBytes
        seconds = s.duration / .seconds(1)
        bytesPerSecond = s.bytesPerSecond.rounded()
        skipped = s.skipped
        alreadyImported = s.alreadyImported
        recorded = s.recorded
        filtered = s.filtered
        deferred = s.deferred
        failed = s.failures.count
        failures = s.failures.map {
            Failure(path: $0.remotePath, error: $0.error.description, errorCode: $0.error.code.description)
        }
        deleted = s.deleted
        kept = s.kept.map { Kept(path: $0.remotePath, reason: $0.reason) }
        notAttempted = s.notAttempted
        interrupted = s.interrupted
    }
}
