import FerryKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `ferry get URL... [-o DEST] [-j N] [--overwrite] [--json]`
enum GetCommand: Command {
    static let spec = CommandSpec(
        name: "get",
        summary: "download files (resumes by default)",
        usage: "ferry get URL... [-o DEST] [-j N] [--overwrite|--skip-existing] [--quiet] [--json]",
        options: [
            .init(long: "output", short: "o", takesValue: true, help: "file, or folder to download into", valueName: "DEST"),
            .init(long: "jobs", short: "j", takesValue: true, help: "transfers at once (default 4)", valueName: "N"),
            .init(long: "overwrite", short: nil, takesValue: false, help: "replace files that exist"),
            .init(long: "skip-existing", short: nil, takesValue: false, help: "leave files that exist alone"),
            .init(long: "no-resume", short: nil, takesValue: false, help: "ignore .part files and start over"),
            .init(long: "retries", short: nil, takesValue: true, help: "failed tries in a row before giving up (default 5)", valueName: "N"),
            .init(long: "insecure", short: "k", takesValue: false, help: "accept TLS certificates that do not verify"),
            .init(long: "json", short: nil, takesValue: false, help: "print JSON lines of progress and results"),
        ],
        minPositionals: 1,
        maxPositionals: nil,
        details: """
            Each file is written to NAME.part beside its destination and renamed only
            when complete and verified. Run the same command again after an interruption
            (Ctrl-C, a crash, a lost connection) and it resumes from the bytes on disk.
            An existing destination is never replaced unless --overwrite is given.
            """)

    struct Item: Sendable {
        var url: RemoteURL
        var destination: String
    }

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        if args.has("overwrite") && args.has("skip-existing") {
            throw UsageError(message: "--overwrite and --skip-existing exclude each other")
        }
        let jobs = try args.int("jobs", default: 4, in: 1...64)
        let urls = try args.positionals.map(parseURL)
        for u in urls where u.scheme == .file {
            throw FerryError(.unsupportedScheme, target: u.path, detail: "get wants a remote URL (http, https, ftp, flashair ...)")
        }
        let items = try plan(urls, output: args.value("output"))

        var options = DownloadOptions()
        options.overwrite = args.has("overwrite") ? .overwrite : args.has("skip-existing") ? .skip : .fail
        options.resume = !args.has("no-resume")
        options.maxRetries = try args.int("retries", default: 5, in: 0...100)
        options.verifyTLS = !args.has("insecure")
        Ferry.setConnectionLimits(total: max(16, jobs), perHost: jobs)

        let mode: ProgressReporter.Mode =
            args.has("json") ? .json : (args.has("quiet") || !console.stderrIsTerminal) ? .silent : .bars
        let reporter = ProgressReporter(mode: mode, console: console, totalFiles: items.count)
        let registry = TransferRegistry()
        let interrupt = InterruptHandler { registry.cancelAll() }
        defer { interrupt.remove() }

        let opts = options
        var failures = 0
        await withTaskGroup(of: Bool.self) { group in
            var next = 0
            func launch() {
                let item = items[next]
                next += 1
                group.addTask {
                    await runOne(item, options: opts, reporter: reporter, registry: registry, interrupt: interrupt)
                }
            }
            for _ in 0..<min(jobs, items.count) { launch() }
            for await ok in group {
                if !ok { failures += 1 }
                if next < items.count && !interrupt.fired { launch() }
            }
        }
        reporter.close()
        if interrupt.fired {
            console.error("ferry get: interrupted; partial files kept as .part, run the same command again to resume")
            return 1
        }
        if failures > 0 && items.count > 1 && mode != .json {
            console.error("ferry get: \(failures) of \(items.count) downloads failed")
        }
        return failures == 0 ? 0 : 1
    }

    /// Runs one download to its end; false when it failed.
    static func runOne(
        _ item: Item, options: DownloadOptions, reporter: ProgressReporter, registry: TransferRegistry,
        interrupt: InterruptHandler
    ) async -> Bool {
        if interrupt.fired { return false }
        let label = (item.destination as NSString).lastPathComponent
        let transfer = Ferry.download(item.url, to: item.destination, options: options)
        registry.add(transfer)
        reporter.add(transfer, label: label)
        let outcome: Result<TransferResult, FerryError>
        do throws(FerryError) {
            outcome = .success(try await transfer.result)
        } catch {
            outcome = .failure(error)
        }
        registry.remove(transfer)
        reporter.finish(transfer, label: label, result: outcome)
        if case .failure(let e) = outcome {
            if reporter.mode != .json { reporter.console.error("ferry get: \(e)") }
            return false
        }
        return true
    }

    /// Where each URL goes: `-o` names a file for one URL, or a folder.
    static func plan(_ urls: [RemoteURL], output: String?) throws -> [Item] {
        func name(for url: RemoteURL) -> String {
            let n = url.lastComponent
            return n.isEmpty || n == "." || n == ".." ? "index.html" : n
        }
        guard let output else {
            return urls.map { Item(url: $0, destination: name(for: $0)) }
        }
        let isFolder = output.hasSuffix("/") || isDirectory(output) || urls.count > 1
        if isFolder {
            if !isDirectory(output) {
                do {
                    try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
                } catch {
                    throw FerryError(.localIO, operation: "mkdir", target: output, detail: "\(error.localizedDescription)")
                }
            }
            var seen: Set<String> = []
            return try urls.map { url in
                let dest = (output as NSString).appendingPathComponent(name(for: url))
                guard seen.insert(dest).inserted else {
                    throw UsageError(message: "two URLs would both be saved as \(dest); download them separately with -o")
                }
                return Item(url: url, destination: dest)
            }
        }
        return [Item(url: urls[0], destination: output)]
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDir: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
    }
}
