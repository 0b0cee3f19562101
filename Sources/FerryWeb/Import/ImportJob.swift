import FerryKit
import Foundation
import Synchronization

/// The import the page starts: a ``SyncEngine`` pass on the server, into the
/// folder `ferry serve --import-to` names, with the history `ferry sync` keeps
/// there. It runs on the server, so it survives a reload, a closed tab and a
/// second browser: every page polls ``status``.
///
/// A cancelled or failed import leaves its partial files as `.part` (the
/// transfer contract); the same import started again resumes them.
final class ImportJob: Sendable {
    /// What the page shows.
    struct Status: Encodable, Sendable {
        enum State: String, Encodable, Sendable { case idle, running, done, failed, cancelled }
        struct Failure: Encodable, Sendable {
            var path: String
            var reason: String
        }
        var state: State = .idle
        var done = 0
        var total = 0
        var failed = 0
        var bytesDone: Int64 = 0
        var bytesTotal: Int64 = 0
        var bytesPerSecond: Double = 0
        /// Seconds left, when a speed is known.
        var eta: Double?
        /// The page path of the file downloading now.
        var current: String?
        var failures: [Failure] = []
        var deleted = 0
        /// Files the engine had to start over (a pause for the page must never cause one).
        var restarts = 0
        /// Times a download was paused so the page's requests or the viewer's prefetch could use the card's connection.
        var pauses = 0
        /// Times a prefetch's download was paused so the page's requests could use the card's connection.
        var prefetchPauses = 0
        var layout = "tree"
        var deleteAfter = false
        /// The destination folder's name.
        var destination: String
        /// The destination folder's full local path, for the person to find the
        /// photos (shown in the import options, with a way to copy it).
        var destinationPath: String
        /// A reason for the whole import failing (the source did not answer ...).
        var error: String?
        /// The source stopped answering (a card out of range, switched off): the
        /// import waits for it and goes on by itself when it answers again.
        var waitingForSource = false
        /// Times the import went on after the source came back.
        var reconnects = 0
    }

    /// What an import does after a pass, from how it ended: the decision alone,
    /// without the source (``ImportJobDecisionTests``).
    enum AfterPass: Equatable, Sendable {
        case done, failed, cancelled
        /// Files failed because the source stopped answering: wait for it, then
        /// another pass (the history skips what arrived, `.part` files resume).
        case waitForSource
    }

    /// Errors that mean the source is gone for now, not that a file is wrong.
    static func meansSourceLost(_ code: FerryError.Code) -> Bool {
        code == .connectionFailed || code == .timedOut || code == .notAnswering
    }

    /// The next step after a pass that was cancelled or not, with the failures'
    /// codes (or the error that ended the pass), and the reconnects so far.
    static func afterPass(
        cancelled: Bool, failures: [FerryError.Code], passError: FerryError.Code?, reconnects: Int
    ) -> AfterPass {
        if cancelled { return .cancelled }
        let lost = failures.contains(where: meansSourceLost) || passError.map(meansSourceLost) == true
        if lost && reconnects < maxReconnects { return .waitForSource }
        return passError != nil || !failures.isEmpty ? .failed : .done
    }

    /// At most this many passes after the source came back: a card that drops
    /// out every few seconds ends the import with its failures, not a loop.
    static let maxReconnects = 20
    /// How long the import waits for the source before it ends with its failures.
    static let sourceWaitLimit: Duration = .seconds(600)

    /// What an import was asked to do, kept for a restart: in memory, and in
    /// ``requestFile`` beside the history, so Restart works after the server restarts.
    struct Request: Sendable, Codable, Equatable {
        /// The files picked (backend paths); nil: every new file of ``scope``.
        var files: Set<String>?
        /// Which files "every new file" means; a request written before scopes
        /// existed took the whole source, every kind (``ImportScope/everything``).
        var scope: ImportScope
        var layout: SyncOptions.Layout
        var deleteAfter: Bool
        /// Names and folders from templates, as `ferry sync --layout TEMPLATE
        /// --rename TEMPLATE --tag CODE` (``NameTemplate``); nil: the layout's
        /// folders and the file's own name.
        var templates = Templates()

        /// The templates of an import, as the page gives them (checked when the request is made).
        struct Templates: Sendable, Codable, Equatable {
            var folder: NameTemplate?
            var name: NameTemplate?
            var tag: String?

            private enum CodingKeys: String, CodingKey { case folder, name, tag }

            init(folder: NameTemplate? = nil, name: NameTemplate? = nil, tag: String? = nil) {
                self.folder = folder
                self.name = name
                self.tag = tag
            }

            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                folder = try c.decodeIfPresent(String.self, forKey: .folder).flatMap { try? NameTemplate($0) }
                name = try c.decodeIfPresent(String.self, forKey: .name).flatMap { try? NameTemplate($0) }
                tag = try c.decodeIfPresent(String.self, forKey: .tag)
            }

            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encodeIfPresent(folder?.text, forKey: .folder)
                try c.encodeIfPresent(name?.text, forKey: .name)
                try c.encodeIfPresent(tag, forKey: .tag)
            }
        }

        private enum CodingKeys: String, CodingKey { case files, scope, layout, deleteAfter, templates }

        init(
            files: Set<String>?, scope: ImportScope = .everything, layout: SyncOptions.Layout, deleteAfter: Bool,
            templates: Templates = Templates()
        ) {
            self.files = files
            self.scope = scope
            self.layout = layout
            self.deleteAfter = deleteAfter
            self.templates = templates
        }

        /// The engine's options for this request.
        var options: SyncOptions {
            var options = SyncOptions()
            options.layout = layout
            options.deleteAfter = deleteAfter
            options.folderTemplate = templates.folder
            options.nameTemplate = templates.name
            options.tag = templates.tag
            return options
        }

        /// Whether the file at backend path `path` is one this request takes.
        func takes(_ path: String) -> Bool { files.map { $0.contains(path) } ?? scope.includes(path) }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            files = try c.decodeIfPresent([String].self, forKey: .files).map(Set.init)
            scope = try c.decodeIfPresent(ImportScope.self, forKey: .scope) ?? .everything
            guard let layout = SyncOptions.Layout(rawValue: try c.decode(String.self, forKey: .layout)) else {
                throw DecodingError.dataCorruptedError(forKey: .layout, in: c, debugDescription: "unknown layout")
            }
            self.layout = layout
            deleteAfter = try c.decode(Bool.self, forKey: .deleteAfter)
            templates = try c.decodeIfPresent(Templates.self, forKey: .templates) ?? Templates()
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encodeIfPresent(files?.sorted(), forKey: .files)
            try c.encode(scope, forKey: .scope)
            try c.encode(layout.rawValue, forKey: .layout)
            try c.encode(deleteAfter, forKey: .deleteAfter)
            if templates != Templates() { try c.encode(templates, forKey: .templates) }
        }
    }

    /// The file in the import folder that keeps the last request.
    static let requestFileName = ".ferry-import-request.json"
    var requestFile: String { directory + "/" + Self.requestFileName }

    private struct Box {
        var status: Status
        var last: Request?
        var task: Task<Void, Never>?
        /// Running downloads: transfer id → (page path, bytes done, size, bytes moved for it).
        var running: [Int: (path: String, done: Int64, size: Int64, moved: Int64)] = [:]
        var finishedBytes: Int64 = 0
        /// Bytes received over the network by this import, across files (not those
        /// resumed from a `.part`), and the speed of the last seconds of them.
        var moved: Int64 = 0
        var rate = RateWindow()
        /// Files of this pass that failed because the source stopped answering.
        var lost: [(failure: Status.Failure, code: FerryError.Code)] = []
        /// The pass running now (`runPass`).
        var pass: Task<SyncPassSummary, any Error>?
    }

    /// The destination folder.
    let directory: String
    private let box: Mutex<Box>

    init(directory: String) {
        self.directory = directory
        var box = Box(status: Status(destination: LocalPath.lastComponent(directory), destinationPath: directory))
        if let data = FileManager.default.contents(atPath: directory + "/" + Self.requestFileName) {
            box.last = try? JSONDecoder().decode(Request.self, from: data)
        }
        self.box = Mutex(box)
    }

    /// Writes the request beside the history, atomically (a temporary file renamed).
    private func save(_ request: Request) {
        guard let data = try? JSONEncoder().encode(request) else { return }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try? data.write(to: URL(fileURLWithPath: requestFile), options: .atomic)
    }

    /// The import's state now: the speed and time left as of this moment (they
    /// fall while nothing moves, as when the card stopped answering).
    var status: Status {
        box.withLock { b in
            Self.estimate(&b, at: .now)
            return b.status
        }
    }

    /// Whether an import runs.
    var isRunning: Bool { box.withLock { $0.status.state == .running } }

    /// The files of `source` that the history knows as imported, answered by the
    /// rule `ferry sync` plans by (a rewritten file of the same size is new).
    func imported(key: String) -> SyncHistory.ImportedFiles {
        guard let history = try? SyncHistory.open(directory: directory, create: false),
            let files = try? history.imported(source: key)
        else { return SyncHistory.ImportedFiles() }
        return files
    }

    /// The files of `source` in `scope` the history does not hold (path and size), leaving out the
    /// import folder itself when it lies inside a local source (as `ferry sync` does).
    func newFiles(in source: WebSource, scope: ImportScope, known: SyncHistory.ImportedFiles) async throws
        -> [RemoteEntry]
    {
        try await sourceFiles(source, under: scope.folder).filter { scope.includes($0.path) && !known.contains($0) }
    }

    /// Where the first `limit` new files of `request` would go, as a dry run of
    /// the import says it (``SyncEngine``'s own: the date taken read from the
    /// first 64 KiB of each photo, one range request on a card, templates
    /// rendered as the import renders them): (backend path, destination
    /// relative to the import folder; `<date taken>/NAME` where the date is
    /// known only from the download).
    func preview(source: WebSource, key: String, _ request: Request, limit: Int) async throws
        -> [(path: String, destination: String)]
    {
        let known = imported(key: key)
        let new = try await requested(source, request)
            .filter { !known.contains($0) }
            .sorted { $0.path < $1.path }
            .prefix(limit)
        guard !new.isEmpty else { return [] }
        var options = request.options
        options.dryRun = true
        options.deleteAfter = false
        options.paths = Set(new.map(\.path))
        let engine = SyncEngine(fileSystem: source.fs, directory: directory, options: options)
        let summary = try await engine.runPass()
        // The engine's own spelling of the folder (`/tmp//x` is `/tmp/x` to it).
        let prefix = engine.directory.hasSuffix("/") ? engine.directory : engine.directory + "/"
        return summary.items.map { item in
            var shown =
                item.destination.hasPrefix(prefix) ? String(item.destination.dropFirst(prefix.count)) : item.destination
            if shown.hasPrefix(SyncEngine.stagingFolder + "/") {
                shown = "<date taken>/" + SyncNaming.stagedName(shown)
            }
            return (item.remotePath, shown)
        }.sorted { $0.path < $1.path }
    }

    /// The files of `source` that `request` takes, imported or not: the picked
    /// ones, or every file of its scope (only its folder is walked).
    private func requested(_ source: WebSource, _ request: Request) async throws -> [RemoteEntry] {
        let under = request.files == nil ? request.scope.folder : nil
        return try await sourceFiles(source, under: under).filter { request.takes($0.path) }
    }

    /// Every file of `source` (below the backend path `folder`, when given),
    /// leaving out the import folder inside a local source.
    private func sourceFiles(_ source: WebSource, under folder: String? = nil) async throws -> [RemoteEntry] {
        let inside = directory + "/"
        let root = folder ?? (source.root.isEmpty ? "/" : source.root)
        return try await source.fs.walk(root).files.filter { e in
            !(source.isLocal && e.path.hasPrefix(inside))
        }
    }

    /// Starts an import of `files` (backend paths), or of every new file when nil.
    ///
    /// - Returns: false when one runs already.
    func start(source: WebSource, key: String, _ request: Request) -> Bool {
        box.withLock { b -> Bool in
            guard b.status.state != .running else { return false }
            b.status = Status(
                state: .running, destination: b.status.destination, destinationPath: b.status.destinationPath)
            b.lost = []
            b.status.layout = request.layout.rawValue
            b.status.deleteAfter = request.deleteAfter
            if b.last != request { save(request) }
            b.last = request
            b.running = [:]
            b.finishedBytes = 0
            b.moved = 0
            b.rate.reset()
            b.rate.record(0, at: .now)
            // Detached: the import is no request of the page (it must not inherit its priority).
            b.task = Task.detached {
                // Behind the page's requests and the viewer's prefetch on a card (the engine's queue).
                await TransferPriority.$current.withValue(.bulk) {
                    await self.run(source: source, key: key, request)
                }
            }
            return true
        }
    }

    /// The last import's request (for Restart, from any page).
    var lastRequest: Request? { box.withLock { $0.last } }

    /// Cancels the running import; its partial files stay as `.part` for a restart.
    func cancel() {
        let task = box.withLock { b -> Task<Void, Never>? in
            guard b.status.state == .running else { return nil }
            return b.task
        }
        task?.cancel()
    }

    private func run(source: WebSource, key: String, _ request: Request) async {
        var reconnects = 0
        var first = true
        while true {
            let pass = await runPass(source: source, key: key, request, first: first)
            first = false
            let codes = box.withLock { b in b.lost.map(\.code) }
            switch Self.afterPass(
                cancelled: pass.cancelled, failures: codes + pass.failures, passError: pass.error?.code,
                reconnects: reconnects)
            {
            case .done:
                finish(.done, error: nil)
                return
            case .cancelled:
                finish(.cancelled, error: nil)
                return
            case .failed:
                finish(
                    .failed,
                    error: pass.error.map { WebMessages.text($0, source: source, importDirectory: directory) })
                return
            case .waitForSource:
                guard await waitForSource(source) else {
                    finish(
                        Task.isCancelled ? .cancelled : .failed,
                        error: Task.isCancelled
                            ? nil : pass.error.map { WebMessages.text($0, source: source, importDirectory: directory) })
                    return
                }
                reconnects += 1
                box.withLock { b in
                    b.lost = []
                    b.status.reconnects = reconnects
                }
            }
        }
    }

    /// One pass over what is still to import: the files the history does not know
    /// yet (on a later pass, those the source lost on the way).
    private func runPass(source: WebSource, key: String, _ request: Request, first: Bool) async -> (
        cancelled: Bool, failures: [FerryError.Code], error: FerryError?
    ) {
        // The plan's size, for the page's totals: new files = listed and not in the history.
        let known = imported(key: key)
        let candidates: [RemoteEntry]
        // Files imported earlier whose delete from the source has not happened (an
        // import killed in its delete phase): delete-after deletes them too, when
        // their copies still match what the history recorded (the engine checks).
        var earlier: [RemoteEntry] = []
        do {
            let requested = try await requested(source, request)
            candidates = requested.filter { !known.contains($0) }
            if request.deleteAfter { earlier = requested.filter { known.contains($0) } }
        } catch {
            return (Task.isCancelled, [], error as? FerryError ?? FerryError(.unexpected, detail: "\(error)"))
        }
        if first {
            box.withLock { b in
                b.status.total = candidates.count
                b.status.bytesTotal = candidates.reduce(0) { $0 + ($1.size ?? 0) }
            }
        }
        var options = request.options
        options.paths = Set(candidates.map(\.path) + earlier.map(\.path))
        let engine = SyncEngine(fileSystem: source.fs, directory: directory, options: options)
        // Its own task, so the first file lost with the source stops the rest of
        // the pass (each would spend its retries on a source that is gone) without
        // cancelling the import; cancelling the import cancels the pass.
        let pass = Task { try await engine.runPass { event in self.handle(event, source: source) } }
        box.withLock { $0.pass = pass }
        defer { box.withLock { $0.pass = nil } }
        do {
            let summary = try await withTaskCancellationHandler {
                try await pass.value
            } onCancel: {
                pass.cancel()
            }
            return (Task.isCancelled, summary.failures.map(\.error.code), nil)
        } catch {
            return (Task.isCancelled, [], error as? FerryError ?? FerryError(.unexpected, detail: "\(error)"))
        }
    }

    /// Waits until the source answers again (a listing of its root, asked every
    /// two seconds with a short connect timeout); false when the import was
    /// cancelled or ``sourceWaitLimit`` passed.
    private func waitForSource(_ source: WebSource) async -> Bool {
        box.withLock { b in
            b.status.waitingForSource = true
            b.status.current = nil
            b.running = [:]
        }
        defer { box.withLock { $0.status.waitingForSource = false } }
        let deadline = ContinuousClock.now + Self.sourceWaitLimit
        var settings = RequestSettings.current
        settings.connectTimeout = .seconds(3)
        while ContinuousClock.now < deadline {
            do { try await Task.sleep(for: .seconds(2)) } catch { return false }
            let answered = await RequestSettings.$current.withValue(settings) { () async -> Bool in
                do {
                    _ = try await source.fs.list("/")
                    return true
                } catch {
                    return false
                }
            }
            if answered { return !Task.isCancelled }
        }
        return false
    }

    private func handle(_ event: SyncEvent, source: WebSource) {
        switch event {
        case .downloadStarted(let item, let transfer):
            let path = source.webPath(item.remotePath)
            box.withLock { b in
                b.running[transfer.id] = (path, 0, item.size ?? 0, 0)
                b.status.current = path
            }
            Task {
                for await p in transfer.progress {
                    self.box.withLock { b in
                        guard let before = b.running[transfer.id]?.done else { return }
                        // Bytes resumed from a `.part` arrive as the first figure: not moved now.
                        let got = max(0, p.bytesDone - max(before, p.resumedFrom))
                        b.moved += got
                        b.running[transfer.id]?.moved += got
                        b.running[transfer.id]?.done = p.bytesDone
                        self.refresh(&b)
                    }
                }
            }
        case .imported(let item, let result):
            box.withLock { b in
                b.status.done += 1
                b.status.restarts += result.restarts
                b.finishedBytes += result.size
                if let id = b.running.first(where: { $0.value.path == source.webPath(item.remotePath) })?.key {
                    // The last bytes of a file may come after its last progress figure.
                    b.moved += max(0, result.bytesTransferred - b.running[id]!.moved)
                    b.running[id] = nil
                }
                refresh(&b)
            }
        case .failed(let item, let error):
            guard error.code != .cancelled else { return }
            let stop = box.withLock { b -> Task<SyncPassSummary, any Error>? in
                let path = source.webPath(item.remotePath)
                let failure = Status.Failure(
                    path: path, reason: WebMessages.text(error, source: source, importDirectory: directory))
                var stop: Task<SyncPassSummary, any Error>?
                if Self.meansSourceLost(error.code) {
                    // Tried again once the source is back; a failure only if it never is.
                    b.lost.append((failure, error.code))
                    stop = b.pass
                } else {
                    b.status.failed += 1
                    b.status.failures.append(failure)
                }
                if let id = b.running.first(where: { $0.value.path == path })?.key { b.running[id] = nil }
                refresh(&b)
                return stop
            }
            // Outside the lock: cancelling runs the transfers' handlers.
            stop?.cancel()
        case .deletedFromSource:
            box.withLock { $0.status.deleted += 1 }
        default:
            break
        }
    }

    private func refresh(_ b: inout Box) {
        b.status.bytesDone = b.finishedBytes + b.running.values.reduce(0) { $0 + $1.done }
        let now = ContinuousClock.now
        b.rate.record(b.moved, at: now)
        Self.estimate(&b, at: now)
        if b.running.isEmpty { b.status.current = nil }
    }

    /// The speed of the bytes moved over the last seconds, across files
    /// (``RateWindow``), and the time left at that speed; none while it is
    /// unknown or nothing moves.
    private static func estimate(_ b: inout Box, at now: ContinuousClock.Instant) {
        if b.status.waitingForSource {
            // Nothing moves until the source is back: no speed, no time left.
            b.status.bytesPerSecond = 0
            b.status.eta = nil
            return
        }
        guard b.status.state == .running, let rate = b.rate.bytesPerSecond(at: now) else { return }
        b.status.bytesPerSecond = rate
        b.status.eta = rate > 0 ? Double(max(0, b.status.bytesTotal - b.status.bytesDone)) / rate : nil
    }

    private func finish(_ state: Status.State, error: String?) {
        box.withLock { b in
            b.status.state = state
            b.status.error = error
            // Files lost with the source that never came back are failures after all.
            if state == .failed {
                b.status.failed += b.lost.count
                b.status.failures += b.lost.map(\.failure)
            }
            b.lost = []
            b.status.waitingForSource = false
            b.status.current = nil
            b.status.eta = nil
            b.running = [:]
            b.status.bytesDone = b.finishedBytes
        }
    }
}
