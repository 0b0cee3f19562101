import FerryKit
import Foundation
import Synchronization

/// Terminal text: with `bars`, progress bars and one line per finished file on
/// stderr; without, only what people must see (failures, what a command did,
/// the summary unless `--quiet`).
final class TerminalOutput: CommandOutput {
    let console: Console
    let bars: Bool
    let quiet: Bool
    /// "saved", "uploaded", "imported".
    let verb: String
    /// Said after a finished file's name (" to standard output").
    let labelSuffix: String
    /// The command name for messages ("get", "put").
    let command: String
    /// What a transfer that waits for a connection is shown as, when a source
    /// has a known limit ("waiting for the card (1 connection)").
    let waitingText: String?
    /// Say every finished file even without bars (`put`, as `rm` says each delete), unless quiet.
    let announce: Bool
    private let table: ProgressTable
    /// Serialises erase-print-redraw sequences, so a message is never drawn over.
    private let drawing = Mutex(())
    private let ticker = Ticker()

    init(
        console: Console, bars: Bool, quiet: Bool, verb: String, command: String, labelSuffix: String = "",
        waitingText: String? = nil,
        announce: Bool = false
    ) {
        self.announce = announce
        self.console = console
        self.bars = bars
        self.quiet = quiet
        self.verb = verb
        self.labelSuffix = labelSuffix
        self.command = command
        self.waitingText = waitingText
        table = ProgressTable(waitingText: waitingText)
        guard bars else { return }
        ticker.start(every: .milliseconds(100)) { [weak self] in self?.redraw() }
    }

    func report(_ event: OutputEvent) {
        switch event {
        case .begin(let files, let bytes):
            table.begin(files: files, bytes: bytes)
        case .started(let transfer, let label):
            // Rows are drawn only with bars; without, the table counts files alone.
            if bars { table.add(transfer, label: Format.printable(label)) }
        case .finished(let transfer, let label, let result, _):
            table.finish(transfer, bytes: (try? result.get())?.size ?? 0)
            switch result {
            case .success(let r):
                if bars || (announce && !quiet) { line(finishedLine(label: label, r)) }
            case .failure(let e):
                line("ferry \(command): \(Hints.describe(e))")
            }
        case .left(let file):
            table.left()
            switch file.why {
            case .alreadyHere:
                if bars && table.totalFiles <= 1 {
                    line("\(file.label): already here\(file.size.map { " (\(Format.bytes($0)))" } ?? "")")
                }
            case .differs(let reason):
                line(
                    "ferry \(command): \(file.destination) differs from \(file.source) (\(reason)); kept it: "
                        + Hints.text(.replaceOrKeep))
            case .keptExisting:
                if bars { line("\(file.label): kept (exists)") }
            }
        case .did(let action, let target):
            if !quiet { line("\(action) \(target)") }
        case .failed(let error, _, _):
            line("ferry \(command): \(Hints.describe(error))")
        case .notice(let text, _):
            if !text.isEmpty { line(text) }
        case .summary(let s):
            if !quiet { line(s.text) }
        case .syncFile(let kind, let item, let shown):
            syncFile(kind, item: item, shown: shown)
        case .passStarted:
            break
        case .passFinished(let s, let watching):
            if watching && s.pass > 1 && s.imported == 0 && s.failures.isEmpty && s.deleted.isEmpty && s.recorded == 0 {
                break
            }
            console.show(SyncText.text(s, watching: watching))
        }
    }

    private func syncFile(_ kind: SyncFileEvent, item: SyncItem, shown: String) {
        switch kind {
        case .planned:
            let size = item.size.map { " (\(Format.bytes($0)))" } ?? ""
            switch item.action {
            case .download: console.show("would import \(item.remotePath) -> \(shown)\(size)\n")
            case .downloadChanged:
                console.show("would import again (changed) \(item.remotePath) -> \(shown)\(size)\n")
            case .recordExisting: console.show("would record \(shown) (already here)\n")
            }
        case .recorded:
            break
        case .deletedFromSource:
            if !quiet { console.show("deleted from the source: \(item.remotePath)\n") }
        case .keptOnSource(let reason):
            line("ferry sync: kept \(item.remotePath) on the source: \(reason)")
        }
    }

    private func finishedLine(label: String, _ r: TransferResult) -> String {
        if r.skipped { return "\(label): kept (exists)" }
        let secs = max(r.duration / .seconds(1), 0.001)
        var line = "\(verb) \(label)\(labelSuffix) (\(Format.bytes(r.size)) in \(Format.seconds(secs)), "
        line += Format.rate(Double(r.bytesTransferred) / secs)
        if r.resumedFrom > 0 { line += ", resumed at \(Format.bytes(r.resumedFrom))" }
        return line + ")"
    }

    /// Prints one line on stderr, never under or over the bars.
    private func line(_ text: String) {
        guard bars else {
            console.error(text)
            return
        }
        drawing.withLock { _ in
            clear()
            console.error(text)
            if !table.closed { draw() }
        }
    }

    func close() {
        ticker.stop()
        drawing.withLock { _ in
            table.closed = true
            if bars { clear() }
        }
    }

    private func redraw() {
        drawing.withLock { _ in
            if !table.closed { draw() }
        }
    }

    private func clear() {
        let n = table.takeLinesDrawn(0)
        guard n > 0 else { return }
        console.drawError(String(repeating: "\u{1B}[1A\u{1B}[2K", count: n) + "\r")
    }

    private func draw() {
        let lines = table.lines(width: TerminalOutput.terminalWidth())
        let previous = table.takeLinesDrawn(lines.count)
        // Nothing drawn and nothing to draw: leave the cursor alone (a question
        // on the line, as rm -r asks, would be overwritten by a carriage return).
        if previous == 0 && lines.isEmpty { return }
        var text = String(repeating: "\u{1B}[1A", count: previous) + "\r"
        for l in lines { text += "\u{1B}[2K" + l + "\n" }
        // Fewer lines than before: erase the leftovers.
        if previous > lines.count {
            for _ in lines.count..<previous { text += "\u{1B}[2K\n" }
            text += String(repeating: "\u{1B}[1A", count: previous - lines.count)
        }
        console.drawError(text)
    }

    static func terminalWidth() -> Int {
        var ws = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 20 { return Int(ws.ws_col) }
        return 100
    }
}
