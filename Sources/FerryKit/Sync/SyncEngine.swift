import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Imports new files from a card or server into a local folder, once each, and
/// remembers what it imported (``SyncHistory``, in the folder).
///
/// One pass lists the source (one walk), looks every file up in the history in one
/// transaction, downloads what is new through the transfer engine (resumable
/// `.part` files; one connection for a card), records each file as it lands, and,
/// with ``SyncOptions/deleteAfter``, deletes verified files from the source.
/// ``watch(events:)`` repeats passes as files appear.
///
/// ```swift
/// let engine = try SyncEngine(url: try RemoteURL(parsing: "flashair://192.168.0.1/DCIM"), directory: "Photos")
/// let summary = try await engine.runPass()
/// print(summary.imported, summary.bytesPerSecond)
/// ```
public final class SyncEngine: Sendable {
    /// The source URL (its path is the root of the import).
    public let url: RemoteURL
    /// The destination folder, absolute.
    public let directory: String
    /// What to import and how.
    public let options: SyncOptions
    let fs: any RemoteFileSystem

    /// Whether the source is a card (one connection, op=121 watching, CID identity),
    /// by what it can do rather than which backend it is.
    var isCard: Bool { fs.capabilities.contains(.cardInfo) }

    /// Opens the source a URL names.
    ///
    /// - Parameters:
    ///   - url: A folder on a card, server or local disk.
    ///   - directory: The local folder to import into (created when missing).
    ///   - options: Filters, layout, delete-after, parallel downloads.
    ///   - connection: TLS and credentials. A card always gets one connection;
    ///     a server gets `options.jobs` unless `maxConnections` says otherwise.
    /// - Throws: `unsupportedScheme` for a source Ferry cannot list.
    public convenience init(
        url: RemoteURL, directory: String, options: SyncOptions = .init(), connection: ConnectionOptions = .init()
    ) throws(FerryError) {
        var c = connection
        if url.scheme == .flashair {
            c.maxConnections = 1
        } else if c.maxConnections == nil {
            c.maxConnections = max(1, options.jobs)
        }
        let fs: any RemoteFileSystem
        do {
            fs = try Ferry.fileSystem(for: url, options: c)
        } catch {
            throw error.context(operation: "sync", target: url.redacted)
        }
        self.init(fileSystem: fs, directory: directory, options: options)
    }

    /// Syncs from an already opened file system (its `url` is the root).
    public init(fileSystem: any RemoteFileSystem, directory: String, options: SyncOptions = .init()) {
        self.fs = fileSystem
        self.url = fileSystem.url
        self.options = options
        var d = directory.hasPrefix("/") ? directory : FileManager.default.currentDirectoryPath + "/" + directory
        d = LocalPath.standardized(d)
        self.directory = d
    }

    /// Runs one pass: list, import what is new, delete after if asked.
    ///
    /// Cancelling the calling task stops the downloads; their `.part` files are kept
    /// and the summary says `interrupted`.
    ///
    /// - Throws: when the source cannot be listed, or the folder or its history
    ///   cannot be written. Failures of single files are in the summary instead.
    public func runPass(events: @escaping @Sendable (SyncEvent) -> Void = { _ in }) async throws(FerryError)
        -> SyncPassSummary
    {
        let lock = try await prepareDirectory()
        defer { withExtendedLifetime(lock) {} }
        var state = PassState()
        return try await pass(&state, watching: false, events: events)
    }

    // MARK: One pass

    /// What one pass carries over to the next in watch mode.
    struct PassState: Sendable {
        var pass = 0
        var identity: SyncSourceIdentity?
        /// The previous listing (path → size and time), to leave files that are
        /// still being written for the next pass.
        var previousListing: [String: Fingerprint]?
        /// op=121 before the last listing.
        var lastWrite: Duration?
        /// Whether the source was found not answering (watch).
        var unavailable = false
    }

    /// Size and time of a listed file.
    struct Fingerprint: Sendable, Hashable {
        var size: Int64?
        var modified: RemoteTimestamp?
    }

    /// The files a pass will act on, decided in one history transaction.
    struct Plan: Sendable {
        var downloads: [PlannedDownload] = []
        var recorded: [SyncItem] = []
        /// Files imported earlier: `--delete-after` deletes them from the source if
        /// Ferry wrote their copies and they still have the size and SHA-256 it recorded.
        var verifiedEarlier: [SyncItem] = []
        /// Files that match the history only through a clock shift: kept on the
        /// source by delete-after, with the reason.
        var shiftedOnly: [SyncItem] = []
        /// Files imported earlier, for the backup folder to catch up on
        /// (``SyncOptions/backupDirectory``).
        var importedEarlier: [SyncItem] = []
        var alreadyImported = 0
        var deferred = 0
        /// Every local name the plan uses, so a staged file never takes one.
        var claimed: Set<String> = []
    }

    /// One download and where it goes.
    struct PlannedDownload: Sendable {
        var item: SyncItem
        /// Where the transfer writes. The final name for known places; a staging
        /// file for a date layout without a remote date.
        var target: String
        /// True when `target` is a staging file to be moved into a date folder.
        var staged: Bool
        /// The photo group (``PhotoGroups/key(_:)``) of a staged file placed with
        /// its group; nil for a file placed alone.
        var group: String? = nil
        /// Its number in this import, from 1 (`{seq}`).
        var sequence = 1
    }

    /// Creates the folder and takes its lock; nil for a dry run (which writes nothing).
    func prepareDirectory() async throws(FerryError) -> SyncLock? {
        guard !options.dryRun else { return nil }
        if !LocalFile.isDirectory(directory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw FerryError(.localIO, operation: "sync", target: directory, detail: error.localizedDescription)
            }
        }
        return try await SyncLock.acquire(directory: directory)
    }

    func pass(_ state: inout PassState, watching: Bool, events: @escaping @Sendable (SyncEvent) -> Void)
        async throws(FerryError) -> SyncPassSummary
    {
        state.pass += 1
        // The staging root goes once the pass's downloads are over, when empty
        // (a `.part` of an interrupted photo keeps it).
        defer { rmdir(directory + "/" + SyncEngine.stagingFolder) }
        let identity = try await identify()
        if state.unavailable {
            state.unavailable = false
            events(.sourceAvailable)
        }
        if let previous = state.identity, previous != identity, previous.cid != nil || identity.cid != nil {
            events(.differentCard(previous: previous.cid, current: identity.cid))
            state.previousListing = nil
        }
        state.identity = identity
        var summary = SyncPassSummary(
            pass: state.pass, source: url.redacted, sourceKey: identity.key, dryRun: options.dryRun)
        events(.passStarted(pass: state.pass, source: url.redacted, sourceKey: identity.key))

        // One walk of the source.
        var files: [RemoteEntry]
        do {
            files = try await fs.walk(url.path, includeHidden: options.includeHidden).files
        } catch {
            throw error.context(operation: "list", target: url.redacted)
        }
        // Importing a folder into a folder inside it must not import its own imports.
        if url.scheme == .file {
            let inside = directory + "/"
            files.removeAll { LocalPath.standardized($0.path).hasPrefix(inside) }
        }
        summary.listed = files.count
        // In path order, so that names given out in one pass are the same in the next.
        let wanted = files.filter(accepts).sorted { $0.path < $1.path }
        summary.filtered = files.count - wanted.count

        // One transaction for every lookup (and the records of files found locally).
        let history = try SyncHistory.open(directory: directory, create: !options.dryRun)
        let deferring = watching && !isCard ? state.previousListing : nil
        let plan = try makePlan(wanted, identity: identity, history: history, deferring: deferring)
        state.previousListing = Dictionary(
            wanted.map { ($0.path, Fingerprint(size: $0.size, modified: $0.modified)) }, uniquingKeysWith: { a, _ in a }
        )
        summary.alreadyImported = plan.alreadyImported
        summary.deferred = plan.deferred
        summary.recorded = plan.recorded.count
        for item in plan.recorded { events(options.dryRun ? .planned(item) : .recorded(item)) }
        summary.items = plan.recorded + plan.downloads.map(\.item)

        if options.dryRun {
            // Where a staged file would go is in its bytes (date taken, camera):
            // the dry run reads their first 64 KiB to say it.
            let planned = await previewPlaces(plan.downloads)
            summary.items = plan.recorded + planned.map(\.item)
            for d in planned { events(.planned(d.item)) }
            events(.passFinished(summary))
            return summary
        }
        // Opened with `create: true` outside a dry run, which gives a database or throws.
        guard let history else {
            throw FerryError(
                .localIO, operation: "open history", target: directory, detail: "no import history to record in")
        }

        let imported = await download(
            plan, identity: identity, history: history, summary: &summary, events: events)
        if backupRoot != nil && !summary.interrupted && !Task.isCancelled {
            await backUp(
                plan.recorded + imported + plan.importedEarlier, identity: identity, history: history,
                summary: &summary, events: events)
        }
        if options.deleteAfter && !summary.interrupted && !Task.isCancelled {
            for item in plan.shiftedOnly {
                let reason = "it matches the import history only with its time shifted (a clock or time-zone change)"
                summary.kept.append(.init(remotePath: item.remotePath, reason: reason))
                events(.keptOnSource(item, reason: reason))
            }
            await deleteAfter(
                plan.recorded + imported + plan.verifiedEarlier, wanted: Set(wanted.map(\.path)), identity: identity,
                history: history, summary: &summary, events: events)
        }
        events(.passFinished(summary))
        return summary
    }

    /// The history key of the source (a card's CID, or its URL), as the
    /// history records it: what ``SyncHistory/records(source:)`` wants.
    ///
    /// - Throws: when a card does not answer.
    public func sourceKey() async throws(FerryError) -> String {
        try await identify().key
    }

    /// The source's identity: a card by its CID, anything else by its URL.
    func identify() async throws(FerryError) -> SyncSourceIdentity {
        let cid: String?
        do {
            cid = try await fs.mediumIdentifier()
        } catch {
            throw error.context(operation: "identify card", target: url.redacted)
        }
        if let cid { return SyncSourceIdentity(cid: cid) }
        return SyncSourceIdentity(url: url)
    }

    /// Whether a listed file passes `--only` and `--since`.
    func accepts(_ e: RemoteEntry) -> Bool {
        guard options.accepts(name: e.name) else { return false }
        if let paths = options.paths, !paths.contains(e.path) { return false }
        if let since = options.since {
            // A time to the minute or the day passes when the last second it may be does.
            guard let m = e.modified, m.latestDate(floatingIn: options.timeZone) >= since else { return false }
        }
        return true
    }

    /// Decides, for every wanted file, whether it is imported already, found
    /// locally, or to be downloaded and where. Runs in one history transaction.
    func makePlan(
        _ wanted: [RemoteEntry], identity: SyncSourceIdentity, history: SyncHistory?,
        deferring: [String: Fingerprint]?
    ) throws(FerryError) -> Plan {
        // Raw + JPEG pairs and sidecars: one folder, one stem.
        let groups = PhotoGroups.groups(wanted.map(\.path))
        var groupOf: [String: String] = [:]
        for (key, members) in groups { for m in members { groupOf[m] = key } }
        let byPath = Dictionary(wanted.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        // Groups filed by their photo's date taken (date layout): every member waits
        // for the photo, sidecars too.
        let templated = options.folderTemplate != nil || options.nameTemplate != nil
        let datedGroups = Set(
            groups.filter { _, members in templated || members.contains { self.datedByCapture(byPath[$0]!) } }.keys)
        let build = { (tx: SyncHistory.Transaction?) throws(FerryError) -> Plan in
            var plan = Plan()
            var groupNumber: [String: Int] = [:]
            /// A file already here under `name`: recorded, not fetched; never a
            /// reason to delete from the source.
            func recordFound(_ e: RemoteEntry, at name: String) throws(FerryError) {
                plan.recorded.append(self.item(e, destination: name, action: .recordExisting))
                guard !self.options.dryRun else { return }
                try tx?.insert(
                    SyncHistory.Record(
                        source: identity.key, path: e.path, size: e.size, modified: e.modified,
                        localPath: self.relative(name), origin: .foundLocally))
            }
            for e in wanted {
                let known =
                    try tx?.known(source: identity.key, path: e.path, size: e.size, modified: e.modified) ?? .new
                let group = groupOf[e.path]
                let byTaken = self.datedByCapture(e) || (group.map { datedGroups.contains($0) } ?? false)
                // A template's names are known only once the photo is here.
                let base = byTaken || templated ? nil : self.placement(of: e)
                switch known {
                case .imported(let local):
                    plan.alreadyImported += 1
                    if self.options.backupDirectory != nil {
                        let copy = self.directory + "/" + local
                        plan.importedEarlier.append(self.item(e, destination: copy, action: .recordExisting))
                    }
                    if self.options.deleteAfter {
                        // Checked against the history's record of the copy (`deleteAfter`).
                        let copy = self.directory + "/" + local
                        plan.verifiedEarlier.append(self.item(e, destination: copy, action: .recordExisting))
                    }
                    continue
                case .importedShifted(let local):
                    // The same file seen through a clock change: not fetched, never deleted.
                    plan.alreadyImported += 1
                    if self.options.deleteAfter {
                        let copy = self.directory + "/" + local
                        plan.shiftedOnly.append(self.item(e, destination: copy, action: .recordExisting))
                    }
                    continue
                case .new, .changed:
                    break
                }
                if let deferring, deferring[e.path] != Fingerprint(size: e.size, modified: e.modified) {
                    // New or still changing since the last look: take it next pass.
                    plan.deferred += 1
                    continue
                }
                let action: SyncItem.Action = known == .changed ? .downloadChanged : .download
                // Where an earlier run may have put this very version: its place, or
                // (photos filed by the date taken) the day its listing gives.
                let lookIn = base ?? (byTaken && !templated ? self.listingDayPlacement(of: e) : nil)
                let source = self.transferSource(e.path)
                if let base, let group, let members = groups[group] {
                    // One number for the whole group, free (or holding each member
                    // already) for every member's name.
                    let n =
                        groupNumber[group]
                        ?? self.groupNumber(
                            members.compactMap { byPath[$0] }, claimed: plan.claimed, identity: identity)
                    groupNumber[group] = n
                    let name = PhotoGroups.numbered(base, n)
                    plan.claimed.insert(name)
                    if LocalFile.exists(name) && self.isSameFile(e, at: name) {
                        try recordFound(e, at: name)
                    } else {
                        plan.downloads.append(
                            PlannedDownload(
                                item: self.item(e, destination: name, action: action), target: name, staged: false))
                    }
                    continue
                }
                if let lookIn {
                    // The names this version may already have: the base name, or a
                    // numbered one an earlier run gave it and then lost the record of
                    // (a crash between the rename and the history write, a power cut
                    // losing the last WAL records). The first free name is its place.
                    let (name, found) = self.existingOrFreeName(
                        lookIn, claimed: plan.claimed, source: source,
                        identity: SyncEngine.partIdentity(identity, e.path), holds: { self.isSameFile(e, at: $0) })
                    if found || base != nil { plan.claimed.insert(name) }
                    if found {
                        try recordFound(e, at: name)
                        continue
                    }
                    if base != nil {
                        plan.downloads.append(
                            PlannedDownload(
                                item: self.item(e, destination: name, action: action), target: name, staged: false))
                        continue
                    }
                }
                // The folder is known only once the file is here (date layout: the
                // photo's own date taken, or no remote date at all). Stage it under a
                // stable name so a rerun resumes.
                let key = identity.key + "\n" + e.path + "\n" + String(e.size ?? -1)
                let staging = SyncNaming.stagingPath(in: self.directory, key: key, name: e.name)
                plan.downloads.append(
                    PlannedDownload(
                        item: self.item(e, destination: staging, action: action), target: staging, staged: true,
                        group: group.flatMap { datedGroups.contains($0) ? $0 : nil }))
            }
            for i in plan.downloads.indices { plan.downloads[i].sequence = i + 1 }
            return plan
        }
        guard let history else { return try build(nil) }
        return try history.transaction(write: !options.dryRun) { (tx) throws(FerryError) -> Plan in try build(tx) }
    }

    /// Whether the local file at `path` is taken for the remote file `e` without
    /// fetching it: a regular file of the same size and the same time (to FAT's
    /// two seconds; sync gives every download the source's time). A size alone is
    /// not enough: raw files have one size per camera and numbering starts again
    /// after a format, so a same-size file may be another photo; a source that
    /// lists no size or time (python's http.server) never matches, and its file
    /// comes under a new name instead (`NAME (2).EXT`). A file taken this way is
    /// recorded as found and never deleted from the source.
    func isSameFile(_ e: RemoteEntry, at path: String) -> Bool {
        var st = stat()
        guard let size = e.size, lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG, Int64(st.st_size) == size
        else { return false }
        guard let m = e.modified else { return false }
        let local = OS.modificationDate(st).timeIntervalSince1970
        // FAT times have two-second steps.
        return abs(m.date(floatingIn: options.timeZone).timeIntervalSince1970 - local) <= 2
    }

    /// Where staged downloads wait for their date folder.
    package static let stagingFolder = ".ferry-sync-incoming"

    /// The local path a file goes to before any renaming; nil when it depends on
    /// the downloaded file (date layout, no remote date).
    func placement(of e: RemoteEntry) -> String? {
        switch options.layout {
        case .tree:
            return directory + "/" + SyncNaming.relative(e.path, root: url.path)
        case .date:
            // A photo goes to the day it was taken, read from its own bytes once here.
            if datedByCapture(e) { return nil }
            return listingDayPlacement(of: e)
        }
    }

    /// `DIR/YYYY-MM-DD/NAME` by the listing's time; nil when it gives none.
    func listingDayPlacement(of e: RemoteEntry) -> String? {
        guard let m = e.modified else { return nil }
        return directory + "/" + SyncNaming.dayFolder(m, zone: options.timeZone) + "/" + e.name
    }

    /// Whether the date layout files `e` by the date it was taken (its Exif
    /// `DateTimeOriginal`), read from the downloaded file: no extra request.
    func datedByCapture(_ e: RemoteEntry) -> Bool {
        options.layout == .date && PhotoFacts.areRead(from: e.name)
    }

    /// The first number that fits every member of a group in the tree layout: each
    /// member's name with it is not claimed, and is free or holds that member.
    func groupNumber(_ members: [RemoteEntry], claimed: Set<String>, identity: SyncSourceIdentity) -> Int {
        var n = 1
        while true {
            let fits = members.allSatisfy { m in
                guard let base = placement(of: m) else { return true }
                let name = PhotoGroups.numbered(base, n)
                if claimed.contains(name) { return false }
                if LocalFile.exists(name) { return isSameFile(m, at: name) }
                return SyncNaming.isFree(
                    name, source: transferSource(m.path), identity: SyncEngine.partIdentity(identity, m.path))
            }
            if fits { return n }
            n += 1
        }
    }

    /// The first of `base`, `base (2)`, `base (3)` ... that `holds` the file
    /// (found: true) or, before any such, is free for a new download: not claimed
    /// by this plan, not there, and no other download's `.part`.
    func existingOrFreeName(
        _ base: String, claimed: Set<String>, source: String, identity: String, holds: (String) -> Bool
    ) -> (name: String, found: Bool) {
        var n = 1
        while true {
            let name = SyncNaming.numbered(base, n)
            n += 1
            if claimed.contains(name) { continue }
            if LocalFile.exists(name) {
                // A journal without its `.part` beside a final name is what a kill
                // between the rename and the journal's unlink leaves: nothing to resume.
                let journal = DownloadJournal.path(forPart: name + ".part")
                if !options.dryRun, LocalFile.exists(journal), !LocalFile.exists(name + ".part") {
                    LocalFile.remove(journal)
                }
                if holds(name) { return (name, true) }
                continue
            }
            if SyncNaming.isFree(name, source: source, identity: identity) { return (name, false) }
        }
    }

    func item(_ e: RemoteEntry, destination: String, action: SyncItem.Action) -> SyncItem {
        SyncItem(
            remotePath: e.path, destination: destination, size: e.size, modified: e.modified,
            isReadOnly: e.isReadOnly, action: action)
    }

    /// A local path relative to the destination folder, as the history stores it.
    func relative(_ local: String) -> String {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        return local.hasPrefix(prefix) ? String(local.dropFirst(prefix.count)) : local
    }

    /// What a download's `.part` is, however the source's address is spelt: the
    /// history's key for the source (a card's CID) and the path.
    static func partIdentity(_ identity: SyncSourceIdentity, _ path: String) -> String {
        identity.key + "\n" + path
    }

    /// The source a download's journal names (to recognise our own `.part` files).
    func transferSource(_ path: String) -> String {
        if let factory = fs as? any DownloadSourceFactory { return factory.downloadSource(for: path).displayName }
        return url.scheme == .file ? path : url.with(path: path).redacted
    }

    /// Errors that mean the source itself is gone (camera off, server down), not one file.
    static func isSourceGone(_ e: FerryError) -> Bool {
        e.code == .connectionFailed || e.code == .timedOut || e.code == .notAnswering || e.serverCode == 503
    }
}
