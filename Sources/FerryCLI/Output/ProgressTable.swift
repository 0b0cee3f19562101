import FerryKit
import Foundation
import Synchronization

/// The rows a terminal shows while files move: running transfers, queued ones,
/// and a total line with the size, speed and time left. Thread-safe.
final class ProgressTable: Sendable {
    private struct Row {
        var label: String
        var transfer: Transfer
        var started: ContinuousClock.Instant
        /// The order rows are shown in: the order they were added.
        var sequence: Int
    }

    private struct State {
        var rows: [Int: Row] = [:]
        var added = 0
        var linesDrawn = 0
        var doneFiles = 0
        var doneBytes: Int64 = 0
        var totalFiles = 0
        var totalBytes: Int64?
        var closed = false
    }

    private let state = Mutex(State())
    let waitingText: String?

    init(waitingText: String?) {
        self.waitingText = waitingText
    }

    var closed: Bool {
        get { state.withLock { $0.closed } }
        set { state.withLock { $0.closed = newValue } }
    }

    var totalFiles: Int { state.withLock { $0.totalFiles } }

    func begin(files: Int, bytes: Int64?) {
        state.withLock {
            $0.totalFiles = files
            $0.totalBytes = bytes
        }
    }

    func add(_ transfer: Transfer, label: String) {
        state.withLock {
            $0.rows[transfer.id] = Row(label: label, transfer: transfer, started: .now, sequence: $0.added)
            $0.added += 1
        }
    }

    func finish(_ transfer: Transfer, bytes: Int64) {
        state.withLock { s in
            // A removal from the middle of an ordered list is O(n) a file with a few
            // hundred started (bench/RESULTS.md, issue 19, branch cli); the order is
            // sorted out when drawn.
            s.rows.removeValue(forKey: transfer.id)
            s.doneFiles += 1
            s.doneBytes += bytes
        }
    }

    /// A file that was not transferred counts as done.
    func left() {
        state.withLock { $0.doneFiles += 1 }
    }

    /// Returns the number of lines drawn last time and records `count` as the new one.
    func takeLinesDrawn(_ count: Int) -> Int {
        state.withLock { s in
            defer { s.linesDrawn = count }
            return s.linesDrawn
        }
    }

    func lines(width: Int, now: ContinuousClock.Instant = .now) -> [String] {
        let (rows, doneFiles, doneBytes, totalFiles, totalBytes) = state.withLock { s in
            (s.rows.values.sorted { $0.sequence < $1.sequence }, s.doneFiles, s.doneBytes, s.totalFiles, s.totalBytes)
        }
        let progress = rows.map { ($0, $0.transfer.currentProgress) }
        let moving = progress.filter { $0.1.bytesDone > 0 || $0.1.bytesPerSecond > 0 }
        let waiting = progress.filter { !($0.1.bytesDone > 0 || $0.1.bytesPerSecond > 0) }
        var activeBytes: Int64 = 0
        var speed = 0.0
        for (_, p) in progress {
            activeBytes += p.bytesDone
            speed += p.bytesPerSecond
        }
        // Nothing moves for a second: the first waiting one waits for the source's connection.
        let stalled =
            moving.isEmpty && waitingText != nil
            && (waiting.first.map { now - $0.0.started > .seconds(1) } ?? false)
        var lines: [String] = []
        for (row, p) in moving.prefix(8) {
            if let retry = p.retry {
                // One terminal line: a wrapped line would break the redraw.
                lines.append(
                    String(
                        (ProgressTable.name(row.label) + "  " + ProgressTable.retrying(retry)).prefix(
                            max(20, width - 1))))
                continue
            }
            lines.append(
                ProgressTable.bar(label: row.label, progress: p, paused: row.transfer.state == .paused, width: width))
        }
        for (i, (row, p)) in waiting.prefix(max(0, 8 - lines.count)).enumerated() {
            var text = i == 0 && stalled ? waitingText ?? "queued" : "queued"
            if let retry = p.retry { text = ProgressTable.retrying(retry) }
            lines.append(String((ProgressTable.name(row.label) + "  " + text).prefix(max(20, width - 1))))
        }
        if rows.count > 8 { lines.append("  ... and \(rows.count - 8) more") }
        if totalFiles > 1 && !rows.isEmpty {
            var total = "total: \(doneFiles)/\(totalFiles) files, \(Format.bytes(doneBytes + activeBytes))"
            if let totalBytes { total += " of \(Format.bytes(totalBytes))" }
            total += ", \(Format.rate(speed))"
            if let totalBytes, speed > 0 {
                let left = Double(max(0, totalBytes - doneBytes - activeBytes)) / speed
                total += ", ETA \(Format.duration(.milliseconds(Int64(left * 1000))))"
            }
            lines.append(total)
        }
        return lines
    }

    /// `retrying (2 of 5) in 4 s: timed out ...`
    static func retrying(_ r: TransferProgress.Retry) -> String {
        let seconds = Double(r.delay / .milliseconds(1)) / 1000
        var text = "retrying (\(r.number) of \(r.of)) in \(Format.seconds(seconds))"
        if !r.reason.isEmpty { text += ": " + r.reason }
        return text
    }

    static func name(_ label: String) -> String {
        label.count > 28 ? "…" + label.suffix(27) : label.padding(toLength: 28, withPad: " ", startingAt: 0)
    }

    static func bar(label: String, progress p: TransferProgress, paused: Bool, width: Int) -> String {
        let name = name(label)
        // One width from the first frame on: no speed yet reads `--`, no time left `--:--`.
        var right = Format.bytes(p.bytesDone).leftPadded(to: 7)
        if let total = p.totalBytes { right += "/" + Format.bytes(total) }
        let speed = p.bytesPerSecond > 0 ? Format.rate(p.bytesPerSecond) : "-- B/s"
        right += paused ? "  " + "paused".leftPadded(to: 9) : "  " + speed.leftPadded(to: 9)
        if p.totalBytes != nil { right += "  ETA " + (paused ? "--:--" : p.eta.map(Format.duration) ?? "--:--") }
        let barWidth = max(10, min(40, width - name.count - right.count - 10))
        var bar: String
        if let f = p.fraction {
            let filled = Int(f * Double(barWidth))
            bar = String(repeating: "=", count: filled) + (filled < barWidth ? ">" : "")
            bar = bar.padding(toLength: barWidth, withPad: " ", startingAt: 0)
            return "\(name) \(String(format: "%3d", Int(f * 100)))% [\(bar)] \(right)"
        }
        // Size unknown: no fraction to draw, only bytes and speed.
        return "\(name)      \(right)"
    }
}
