import FerryKit
import Foundation

/// The `--json` line that opens a pass.
struct JSONPassStart: Encodable {
    var type = "pass-start"
    var pass: Int
    var source: String
    var sourceKey: String
}

/// One file in `--json` output.
struct JSONItem: Encodable, JSONFileOutcome {
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

    init(failed error: FerryError, item: SyncItem, shown: String) {
        self.init(type: "failed", item: item, shown: shown)
        describe(error)
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
    var backedUp: Int
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
        backedUp = s.backedUp
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

/// The human summary of a sync pass.
enum SyncText {
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
        if s.backedUp > 0 { lines.append("  backed up: \(plural(s.backedUp, "file")), each verified by its SHA-256") }
        if !s.deleted.isEmpty { lines.append("  deleted from the source: \(plural(s.deleted.count, "file"))") }
        if !s.kept.isEmpty { lines.append("  kept on the source: \(plural(s.kept.count, "file"))") }
        return lines.joined(separator: "\n") + "\n"
    }

    static func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
}
