import FerryKit
import Foundation

/// One file of a `get` or `put`: transfer it, or leave the destination as it is.
struct PlannedFile: Sendable {
    /// What to call it on screen.
    var label: String
    /// Source and destination as shown.
    var source: String
    var destination: String
    /// The size, when the listing gave it.
    var size: Int64?
    /// Why the destination is left as it is; nil to transfer.
    var leave: LeftFile.Why?
    /// Starts the transfer.
    var start: @Sendable () -> Transfer
    /// Runs after a successful transfer (a download takes the source's time).
    var completed: @Sendable (TransferResult) -> Void = { _ in }
}

/// Runs the files of a `get` or `put` `jobs` at a time, reporting to one output,
/// with Ctrl-C handling and one summary at the end.
enum TransferRunner {
    /// Returns the exit code: 0 when every file is transferred or already here,
    /// 1 when one failed or differs, 130 after Ctrl-C.
    static func run(
        _ files: [PlannedFile], jobs: Int, verb: String, multi: Bool, output: any CommandOutput, console: Console,
        command: String, failedBefore: Int = 0, inOrder: Bool = false
    ) async -> Int32 {
        let started = ContinuousClock.now
        let registry = TransferRegistry()
        let interrupt = InterruptHandler { registry.cancelAll() }
        defer { interrupt.remove() }
        var summary = RunSummary(verb: verb)
        summary.failed = failedBefore
        // Usually every file moves: no copy of the list then.
        let moving = files.contains { $0.leave != nil } ? files.filter { $0.leave == nil } : files
        if multi {
            let sizes = moving.map(\.size)
            output.report(
                .begin(files: files.count, bytes: sizes.contains(nil) ? nil : sizes.reduce(0) { $0 + ($1 ?? 0) }))
        }
        for file in files {
            guard let why = file.leave else { continue }
            output.report(
                .left(
                    LeftFile(
                        label: file.label, source: file.source, destination: file.destination, size: file.size, why: why
                    )))
            switch why {
            case .alreadyHere: summary.alreadyHere += 1
            case .differs: summary.differs += 1
            case .keptExisting: summary.kept += 1
            }
        }
        // Keep more started than may run: the engine's per-host limit holds
        // them back and admits the next one the moment a connection is free.
        // Finished files wait for their group commit (Durability) outside
        // that limit; a window of only a few would leave the connections
        // idle while a flush runs, so small files get a wide one.
        // Files written to one stream (standard output) go one after another, in order.
        await forEachConcurrently(moving, width: inOrder ? 1 : TransferRunner.window(jobs: jobs)) { file in
            await runOne(file, output: output, registry: registry, interrupt: interrupt)
        } each: { outcome in
            switch outcome {
            case .success(let r)?:
                if r.skipped {
                    summary.kept += 1
                } else {
                    summary.transferred += 1
                    summary.bytes += r.bytesTransferred
                }
            case .failure?: summary.failed += 1
            case nil: break
            }
            return !interrupt.fired
        }
        summary.seconds = (ContinuousClock.now - started) / .seconds(1)
        summary.interrupted = interrupt.fired
        output.close()
        if multi { output.report(.summary(summary)) }
        if interrupt.fired {
            console.error(
                "ferry \(command): interrupted; partial files (.part) kept: run the same command again to resume.")
            return CLI.interruptedExitCode
        }
        return summary.failed == 0 && summary.differs == 0 ? 0 : 1
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

    /// Runs one transfer; nil when Ctrl-C stopped it (not counted as a failure).
    private static func runOne(
        _ file: PlannedFile, output: any CommandOutput, registry: TransferRegistry, interrupt: InterruptHandler
    ) async -> Result<TransferResult, FerryError>? {
        if interrupt.fired { return nil }
        let transfer = file.start()
        registry.add(transfer)
        output.report(.started(transfer, label: file.label))
        let outcome: Result<TransferResult, FerryError>
        do throws(FerryError) {
            let result = try await transfer.result
            file.completed(result)
            outcome = .success(result)
        } catch {
            outcome = .failure(error)
        }
        registry.remove(transfer)
        if case .failure(let e) = outcome, e.code == .cancelled, interrupt.fired { return nil }
        output.report(.finished(transfer, label: file.label, result: outcome))
        return outcome
    }
}
