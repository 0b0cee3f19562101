import FerryKit
import Foundation

/// One file to move: how to start it, and what to call it on screen.
struct TransferItem: Sendable {
    var label: String
    var start: @Sendable () -> Transfer
}

/// Runs transfers `jobs` at a time with progress display and Ctrl-C handling;
/// shared by `get` and `put`.
enum TransferRunner {
    /// Returns the exit code: 0 when all succeeded, 1 otherwise.
    static func run(_ items: [TransferItem], jobs: Int, command: String, args: ParsedArguments, console: Console) async
        -> Int32
    {
        let mode: ProgressReporter.Mode =
            args.has("json") ? .json : (args.has("quiet") || !console.stderrIsTerminal) ? .silent : .bars
        let reporter = ProgressReporter(mode: mode, console: console, totalFiles: items.count, command: command)
        let registry = TransferRegistry()
        let interrupt = InterruptHandler { registry.cancelAll() }
        defer { interrupt.remove() }

        var failures = 0
        await withTaskGroup(of: Bool.self) { group in
            var next = 0
            func launch() {
                let item = items[next]
                next += 1
                group.addTask {
                    await runOne(item, command: command, reporter: reporter, registry: registry, interrupt: interrupt)
                }
            }
            // Keep more started than may run: the engine's per-host limit holds
            // them back and admits the next one the moment a connection is free.
            // Finished files wait for their group commit (Durability) outside
            // that limit; a window of only a few would leave the connections
            // idle while a flush runs, so small files get a wide one.
            for _ in 0..<min(TransferRunner.window(jobs: jobs), items.count) { launch() }
            for await ok in group {
                if !ok { failures += 1 }
                if next < items.count && !interrupt.fired { launch() }
            }
        }
        reporter.close()
        if interrupt.fired {
            console.error("ferry \(command): interrupted; partial files kept, run the same command again to resume")
            return 1
        }
        if failures > 0 && items.count > 1 && mode != .json {
            console.error("ferry \(command): \(failures) of \(items.count) transfers failed")
        }
        return failures == 0 ? 0 : 1
    }

    /// How many transfers are started at once for `jobs` connections: enough that
    /// finished files waiting for their group commit do not idle the connections,
    /// within a quarter of the open-file limit (each started download holds one
    /// descriptor).
    static func window(jobs: Int) -> Int {
        var limit = rlimit()
        let files = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(clamping: limit.rlim_cur) : 1024
        return max(jobs * 2 + 2, min(jobs + 256, files / 4))
    }

    private static func runOne(
        _ item: TransferItem, command: String, reporter: ProgressReporter, registry: TransferRegistry,
        interrupt: InterruptHandler
    ) async -> Bool {
        if interrupt.fired { return false }
        let transfer = item.start()
        registry.add(transfer)
        reporter.add(transfer, label: item.label)
        let outcome: Result<TransferResult, FerryError>
        do throws(FerryError) {
            outcome = .success(try await transfer.result)
        } catch {
            outcome = .failure(error)
        }
        registry.remove(transfer)
        reporter.finish(transfer, label: item.label, result: outcome)
        if case .failure = outcome { return false }
        return true
    }
}
