import FerryKit
import Foundation
import Synchronization

/// Turns a sync's events into output events: the one place that keeps track
/// of the sync's running transfers and names destinations relative to DIR.
/// Called from the engine's tasks concurrently; its own state is under a lock.
final class SyncReporter: Sendable {
    let output: any CommandOutput
    let directory: String
    let watching: Bool
    /// Running transfers by remote path.
    private let transfers = Mutex<[String: Transfer]>([:])

    init(output: any CommandOutput, directory: String, watching: Bool) {
        self.output = output
        self.directory = directory
        self.watching = watching
    }

    /// A destination as shown: relative to DIR. A file the date layout stages
    /// until its date is known (`DIR/.ferry-sync-incoming/...`) is shown where
    /// it will go: `<date taken>/NAME`.
    func shown(_ path: String) -> String {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        let relative = path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
        if relative.hasPrefix(SyncReporter.staging) { return "<date taken>/" + SyncNaming.stagedName(relative) }
        return relative
    }

    /// Where the engine stages date-layout files whose date it learns from the download.
    static let staging = ".ferry-sync-incoming/"

    func handle(_ event: SyncEvent) {
        switch event {
        case .passStarted(let pass, let source, let key):
            output.report(.passStarted(pass: pass, source: source, sourceKey: key))
        case .planned(let item):
            output.report(.syncFile(.planned, item: item, shown: shown(item.destination)))
        case .recorded(let item):
            output.report(.syncFile(.recorded, item: item, shown: shown(item.destination)))
        case .downloadStarted(let item, let transfer):
            transfers.withLock { $0[item.remotePath] = transfer }
            output.report(.started(transfer, label: shown(item.destination)))
        case .imported(let item, let result):
            finish(item, .success(result))
        case .failed(let item, let error):
            finish(item, .failure(error))
        case .deletedFromSource(let item):
            output.report(.syncFile(.deletedFromSource, item: item, shown: shown(item.destination)))
        case .keptOnSource(let item, let reason):
            output.report(.syncFile(.keptOnSource(reason: reason), item: item, shown: shown(item.destination)))
        case .passFinished(let s):
            output.report(.passFinished(s, watching: watching))
        case .sourceUnavailable(let error):
            output.report(
                .notice(
                    "ferry sync: the source is not answering (\(error)); waiting for it",
                    json: ["type": "watch", "event": "unavailable", "error": error.description]))
        case .sourceAvailable:
            output.report(
                .notice("ferry sync: the source answers again", json: ["type": "watch", "event": "available"]))
        case .differentCard(let previous, let current):
            output.report(
                .notice(
                    "ferry sync: a different card answers (CID \(current ?? "unknown"), was \(previous ?? "unknown"))",
                    json: [
                        "type": "watch", "event": "different-card", "previous": previous ?? "",
                        "current": current ?? "",
                    ]))
        case .cardRestarted:
            output.report(
                .notice(
                    "ferry sync: the card restarted; looking again", json: ["type": "watch", "event": "card-restarted"])
            )
        case .waiting:
            output.report(.notice("", json: ["type": "watch", "event": "waiting"]))
        }
    }

    private func finish(_ item: SyncItem, _ result: Result<TransferResult, FerryError>) {
        let label = shown(item.destination)
        if let t = transfers.withLock({ $0.removeValue(forKey: item.remotePath) }) {
            output.report(.finished(t, label: label, result: result, syncItem: item))
        } else if case .failure(let error) = result {
            output.report(.failed(error, syncItem: item, shown: label))
        }
    }
}
