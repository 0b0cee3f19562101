import FerryKit
import Foundation
import Synchronization

/// Shows transfers: bars on a terminal, JSON lines with `--json`, nothing with `--quiet`.
final class ProgressReporter: Sendable {
    enum Mode: Sendable { case bars, json, silent }

    private struct Row {
        var label: String
        var transfer: Transfer
    }

    private struct State {
        var rows: [Int: Row] = [:]
        var order: [Int] = []
        var linesDrawn = 0
        var doneFiles = 0
        var doneBytes: Int64 = 0
        var lastJSON: [Int: ContinuousClock.Instant] = [:]
        var closed = false
    }

    let mode: Mode
    let console: Console
    let totalFiles: Int
    /// The command name for messages ("get", "put").
    let command: String
    private let state = Mutex(State())
    /// Serialises erase-print-redraw sequences, so a message is never drawn over.
    private let drawing = Mutex(())
    private let ticker = Mutex<Task<Void, Never>?>(nil)

    init(mode: Mode, console: Console, totalFiles: Int, command: String) {
        self.mode = mode
        self.console = console
        self.totalFiles = totalFiles
        self.command = command
        guard mode != .silent else { return }
        let interval: Duration = mode == .bars ? .milliseconds(100) : .milliseconds(500)
        ticker.withLock {
            $0 = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    self?.tick()
                }
            }
        }
    }

    /// Starts showing a transfer.
    func add(_ transfer: Transfer, label: String) {
        state.withLock {
            $0.rows[transfer.id] = Row(label: Format.printable(label), transfer: transfer)
            $0.order.append(transfer.id)
        }
    }

    /// Stops showing a transfer and reports its end.
    func finish(_ transfer: Transfer, label: String, result: Result<TransferResult, FerryError>) {
        state.withLock { s in
            s.rows[transfer.id] = nil
            s.order.removeAll { $0 == transfer.id }
            s.lastJSON[transfer.id] = nil
            s.doneFiles += 1
            if case .success(let r) = result { s.doneBytes += r.size }
        }
        switch mode {
        case .json:
            console.json(JSONResult(transfer: transfer, result: result))
        case .bars:
            drawing.withLock { _ in
                clearBars()
                switch result {
                case .success(let r):
                    let verb = r.skipped ? "skipped (exists)" : "done"
                    var line = "\(label): \(verb), \(Format.bytes(r.size))"
                    if !r.skipped {
                        let secs = max(r.duration / .seconds(1), 0.001)
                        line +=
                            " in \(String(format: "%.1f", secs)) s (\(Format.rate(Double(r.bytesTransferred) / secs)))"
                        if r.resumedFrom > 0 { line += ", resumed at \(Format.bytes(r.resumedFrom))" }
                    }
                    console.error(line)
                case .failure(let e):
                    console.error("ferry \(command): \(e)")
                }
                draw()
            }
        case .silent:
            if case .failure(let e) = result { console.error("ferry \(command): \(e)") }
        }
    }

    /// Prints one line on stderr, never under or over the bars.
    func message(_ text: String) {
        guard mode == .bars else {
            console.error(text)
            return
        }
        drawing.withLock { _ in
            clearBars()
            console.error(text)
            if !state.withLock({ $0.closed }) { draw() }
        }
    }

    /// Stops showing a transfer without reporting its end (the caller reports it).
    func remove(_ transfer: Transfer) {
        state.withLock {
            $0.rows[transfer.id] = nil
            $0.order.removeAll { $0 == transfer.id }
            $0.lastJSON[transfer.id] = nil
        }
    }

    /// Erases the bars and stops the ticker.
    func close() {
        ticker.withLock {
            $0?.cancel()
            $0 = nil
        }
        drawing.withLock { _ in
            state.withLock { $0.closed = true }
            if mode == .bars { clearBars() }
        }
    }

    private func tick() {
        switch mode {
        case .bars:
            drawing.withLock { _ in
                if !state.withLock({ $0.closed }) { draw() }
            }
        case .json: emitJSONProgress()
        case .silent: break
        }
    }

    private func emitJSONProgress() {
        let rows = state.withLock { s in s.order.compactMap { s.rows[$0] } }
        for row in rows where row.transfer.state == .running {
            console.json(JSONProgress(transfer: row.transfer, progress: row.transfer.currentProgress))
        }
    }

    private func clearBars() {
        let n = state.withLock { s -> Int in
            defer { s.linesDrawn = 0 }
            return s.linesDrawn
        }
        guard n > 0 else { return }
        console.drawError(String(repeating: "\u{1B}[1A\u{1B}[2K", count: n) + "\r")
    }

    private func draw() {
        let width = ProgressReporter.terminalWidth()
        var lines: [String] = []
        let (rows, doneFiles, doneBytes) = state.withLock { s in
            (s.order.compactMap { s.rows[$0] }, s.doneFiles, s.doneBytes)
        }
        var activeBytes: Int64 = 0
        var speed = 0.0
        // Many transfers are started ahead of their turn: show the moving ones first.
        let progress = rows.map { ($0, $0.transfer.currentProgress) }
        let ordered = progress.filter { $0.1.bytesDone > 0 } + progress.filter { $0.1.bytesDone == 0 }
        for (_, p) in progress {
            activeBytes += p.bytesDone
            speed += p.bytesPerSecond
        }
        for (row, p) in ordered.prefix(8) {
            lines.append(
                ProgressReporter.bar(label: row.label, progress: p, paused: row.transfer.state == .paused, width: width)
            )
        }
        if rows.count > 8 { lines.append("  ... and \(rows.count - 8) more") }
        if totalFiles > 1 {
            lines.append(
                "total: \(doneFiles)/\(totalFiles) files, \(Format.bytes(doneBytes + activeBytes)), \(Format.rate(speed))"
            )
        }
        let previous = state.withLock { s -> Int in
            defer { s.linesDrawn = lines.count }
            return s.linesDrawn
        }
        var text = String(repeating: "\u{1B}[1A", count: previous) + "\r"
        for l in lines { text += "\u{1B}[2K" + l + "\n" }
        // Fewer lines than before: erase the leftovers.
        if previous > lines.count {
            for _ in lines.count..<previous { text += "\u{1B}[2K\n" }
            text += String(repeating: "\u{1B}[1A", count: previous - lines.count)
        }
        console.drawError(text)
    }

    static func bar(label: String, progress p: TransferProgress, paused: Bool, width: Int) -> String {
        let name = label.count > 28 ? "…" + label.suffix(27) : label.padding(toLength: 28, withPad: " ", startingAt: 0)
        var right = Format.bytes(p.bytesDone)
        if let total = p.totalBytes { right += "/" + Format.bytes(total) }
        right += paused ? "  paused" : "  " + Format.rate(p.bytesPerSecond)
        if let eta = p.eta, !paused { right += "  ETA " + Format.duration(eta) }
        let barWidth = max(10, min(40, width - name.count - right.count - 10))
        var bar: String
        if let f = p.fraction {
            let filled = Int(f * Double(barWidth))
            bar = String(repeating: "=", count: filled) + (filled < barWidth ? ">" : "")
            bar = bar.padding(toLength: barWidth, withPad: " ", startingAt: 0)
            return "\(name) \(String(format: "%3d", Int(f * 100)))% [\(bar)] \(right)"
        }
        bar = String(repeating: " ", count: barWidth)
        return "\(name)  ?? [\(bar)] \(right)"
    }

    static func terminalWidth() -> Int {
        var ws = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 20 { return Int(ws.ws_col) }
        return 100
    }
}

/// One `--json` progress line.
struct JSONProgress: Encodable {
    var type = "progress"
    var source: String
    var destination: String
    var bytes: Int64
    var total: Int64?
    var fraction: Double?
    var bytesPerSecond: Double
    var etaSeconds: Double?

    init(transfer: Transfer, progress p: TransferProgress) {
        source = transfer.source
        destination = transfer.destination
        bytes = p.bytesDone
        total = p.totalBytes
        fraction = p.fraction
        bytesPerSecond = (p.bytesPerSecond * 10).rounded() / 10
        etaSeconds = p.eta.map { $0 / .seconds(1) }
    }
}

/// One `--json` result line per file.
struct JSONResult: Encodable {
    var type = "result"
    var ok: Bool
    var source: String
    var destination: String
    var size: Int64?
    var bytesTransferred: Int64?
    var bytesSent: Int64?
    var resumedFrom: Int64?
    var skipped: Bool?
    var seconds: Double?
    var error: String?
    var errorCode: String?
    var serverCode: Int?

    init(transfer: Transfer, result: Result<TransferResult, FerryError>) {
        source = transfer.source
        destination = transfer.destination
        switch result {
        case .success(let r):
            ok = true
            size = r.size
            bytesTransferred = r.bytesTransferred
            bytesSent = r.bytesSent
            resumedFrom = r.resumedFrom
            skipped = r.skipped
            seconds = r.duration / .seconds(1)
        case .failure(let e):
            ok = false
            error = e.description
            errorCode = e.code.description
            serverCode = e.serverCode
        }
    }
}
