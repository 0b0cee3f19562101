import Foundation

extension SyncEngine {
    /// How one download ended.
    enum FetchOutcome: Sendable {
        case imported(SyncItem, TransferResult, changed: Bool)
        case failed(SyncItem, FerryError)
    }

    /// Downloads the plan's files, `jobs` at a time (one connection for a card),
    /// recording each in the history as it lands. Returns the imported items with
    /// their final names. Stops launching new downloads when the source stops
    /// answering or the task is cancelled.
    func download(
        _ plan: Plan, identity: SyncSourceIdentity, history: SyncHistory, summary: inout SyncPassSummary,
        events: @escaping @Sendable (SyncEvent) -> Void
    ) async -> [SyncItem] {
        let downloads = plan.downloads
        guard !downloads.isEmpty else { return [] }
        // One more task than connections: the engine's per-host limit holds the
        // extra request back and starts it the moment a connection frees, while
        // the finished file is still being fsync'd and renamed.
        let connections = fs.capabilities.contains(.oneConnection) ? 1 : max(1, options.jobs)
        let width = connections + 1
        let started = ContinuousClock.now
        var imported: [SyncItem] = []
        var sourceGone = false
        let claimed = plan.claimed
        let launched = await forEachConcurrently(downloads, width: width) { d in
            await self.fetch(d, identity: identity, history: history, claimed: claimed, events: events)
        } each: { outcome in
            switch outcome {
            case .imported(let item, let result, let changed):
                summary.imported += 1
                if changed { summary.changed += 1 }
                summary.bytes += result.bytesTransferred
                summary.importedBytes += result.size
                imported.append(item)
            case .failed(let item, let error):
                if error.code == .cancelled {
                    summary.interrupted = true
                } else {
                    summary.failures.append(.init(remotePath: item.remotePath, error: error))
                    if SyncEngine.isSourceGone(error) { sourceGone = true }
                }
            }
            return !sourceGone && !Task.isCancelled
        }
        if Task.isCancelled { summary.interrupted = true }
        summary.notAttempted = downloads.count - launched
        summary.duration = .now - started
        return imported
    }

    /// Downloads one file, verifies its size, gives it the remote time, moves a
    /// staged file into its date folder, and records it.
    func fetch(
        _ d: PlannedDownload, identity: SyncSourceIdentity, history: SyncHistory, claimed: Set<String>,
        events: @escaping @Sendable (SyncEvent) -> Void
    ) async -> FetchOutcome {
        var item = d.item
        let changed = item.action == .downloadChanged
        func fail(_ e: FerryError) -> FetchOutcome {
            events(.failed(item, e))
            return .failed(item, e)
        }
        if Task.isCancelled { return .failed(item, FerryError(.cancelled, target: item.remotePath)) }
        let folder = LocalPath.parent(d.target)
        if !LocalFile.isDirectory(folder) {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                return fail(
                    FerryError(.localIO, operation: "mkdir", target: folder, detail: error.localizedDescription))
            }
        }
        var opts = options.download
        opts.overwrite = .fail
        // The copy's SHA-256, hashed as the bytes stream: delete-after's proof.
        opts.computeChecksum = true
        opts.sourceIdentity = SyncEngine.partIdentity(identity, item.remotePath)
        // As listed (walk gives files only): the backend need not ask the size again.
        let listed = RemoteEntry(
            name: LocalPath.lastComponent(item.remotePath), path: item.remotePath, kind: .file,
            size: item.size, modified: item.modified)
        let transfer = fs.download(listed, to: d.target, options: opts)
        events(.downloadStarted(item, transfer))
        var result: TransferResult
        do {
            result = try await transfer.result
        } catch {
            return fail(error)
        }
        if let expected = item.size, result.size != expected {
            // The file changed between the listing and the download: the copy is
            // kept, but not recorded; the next pass looks again.
            return fail(
                FerryError(
                    .verificationFailed, operation: "sync", target: url.with(path: item.remotePath).redacted,
                    detail: "the source listed \(expected) bytes but sent \(result.size); it is changing, try again"))
        }
        if let m = item.modified {
            LocalFile.setModificationTime(d.target, m.date(floatingIn: options.timeZone))
        }
        if d.staged {
            do {
                item.destination = try moveIntoDateFolder(
                    d.target, claimed: claimed, listed: item.modified, size: result.size, sha256: result.sha256
                ).path
            } catch {
                return fail(error)
            }
            result.destination = item.destination
        }
        do {
            try history.record([
                // Keyed by what the listing said (a listing without sizes records
                // none), so that the next run finds this very version again.
                SyncHistory.Record(
                    source: identity.key, path: item.remotePath, size: item.size, modified: item.modified,
                    localPath: relative(item.destination), origin: .downloaded, localSize: result.size,
                    sha256: result.sha256)
            ])
        } catch {
            // The file is whole under its name, but without a record the next
            // pass fetches it again (a duplicate if it was moved away meanwhile).
            var e = error
            e.detail = [
                e.detail, "\(relative(item.destination)) was saved but not recorded; the next sync fetches it again",
            ]
            .compactMap { $0 }.joined(separator: "; ")
            return fail(e)
        }
        events(.imported(item, result))
        return .imported(item, result, changed: changed)
    }

    /// The day a downloaded file belongs to: the date it was taken (its Exif
    /// `DateTimeOriginal`, as the camera's clock showed it), else the listing's
    /// time, else the file's own (a download takes its source's time).
    func dayFolder(ofDownloaded path: String, listed: RemoteTimestamp?) -> String {
        if LocalPath.pathExtension(path).isEmpty == false,
            CaptureDate.fileExtensions.contains(LocalPath.pathExtension(path).lowercased()),
            let taken = (try? CaptureDate.read(fileAt: path)) ?? nil
        {
            return SyncNaming.dayFolder(taken.local, zone: options.timeZone)
        }
        if let listed { return SyncNaming.dayFolder(listed, zone: options.timeZone) }
        let mtime = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? Date()
        return SyncNaming.dayFolder(mtime, zone: options.timeZone)
    }

    /// Moves a staged download to `DIR/YYYY-MM-DD/NAME` (``dayFolder(ofDownloaded:listed:)``
    /// decides the day), under a name that clobbers nothing and that no planned
    /// download uses. A name there that holds these very bytes (same size and
    /// SHA-256: an earlier run's copy whose record was lost) is taken instead and
    /// the staged copy dropped (`duplicate`).
    func moveIntoDateFolder(
        _ staged: String, claimed: Set<String>, listed: RemoteTimestamp?, size: Int64, sha256: String?
    ) throws(FerryError) -> (path: String, duplicate: Bool) {
        let folder = directory + "/" + dayFolder(ofDownloaded: staged, listed: listed)
        if !LocalFile.isDirectory(folder) {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw FerryError(.localIO, operation: "mkdir", target: folder, detail: error.localizedDescription)
            }
        }
        func dropStaging() {
            // The staging folder held only this file.
            rmdir(LocalPath.parent(staged))
            rmdir(directory + "/" + SyncEngine.stagingFolder)
        }
        func holdsTheseBytes(_ name: String) -> Bool {
            guard let sha256, LocalFile.size(atPath: name) == size else { return false }
            return Digest.sha256(ofFileAt: name) == sha256
        }
        let base = folder + "/" + LocalPath.lastComponent(staged)
        var n = 1
        while true {
            let name = SyncNaming.numbered(base, n)
            n += 1
            if claimed.contains(name) || LocalFile.exists(name + ".part") { continue }
            if LocalFile.exists(name) {
                if holdsTheseBytes(name) {
                    LocalFile.remove(staged)
                    dropStaging()
                    return (name, true)
                }
                continue
            }
            do {
                try LocalFile.renameNoReplace(staged, to: name)
            } catch  where error.code == .destinationExists {
                continue
            }
            dropStaging()
            return (name, false)
        }
    }

    // MARK: Delete after

    /// Deletes verified files from the source: only a file whose local copy Ferry
    /// wrote from this source (its history record says downloaded) and that still
    /// has the size and SHA-256 recorded when it was written; never a file found in
    /// the folder, never read-only ones, never one that changed since it was
    /// listed, on a card only when uploads are enabled.
    func deleteAfter(
        _ candidates: [SyncItem], identity: SyncSourceIdentity, history: SyncHistory,
        summary: inout SyncPassSummary, events: @escaping @Sendable (SyncEvent) -> Void
    ) async {
        guard !candidates.isEmpty else { return }
        func keep(_ item: SyncItem, _ reason: String) {
            summary.kept.append(.init(remotePath: item.remotePath, reason: reason))
            events(.keptOnSource(item, reason: reason))
        }
        if isCard {
            let enabled: Bool?
            do {
                enabled = try await fs.acceptsChanges()
            } catch {
                for c in candidates { keep(c, "could not ask the card whether uploads are enabled: \(error)") }
                return
            }
            if enabled != true {
                for c in candidates {
                    keep(
                        c, "uploads are disabled on this card (op=118), so it cannot delete; set UPLOAD=1 in its CONFIG"
                    )
                }
                return
            }
        }
        // Look at each folder once more: a file rewritten since the listing (or
        // made read-only) stays.
        var byFolder: [String: [SyncItem]] = [:]
        for c in candidates { byFolder[remoteParent(c.remotePath), default: []].append(c) }
        for folder in byFolder.keys.sorted() {
            if Task.isCancelled { return }
            let items = byFolder[folder]!
            let now: [String: RemoteEntry]
            do {
                now = Dictionary(try await fs.list(folder).map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
            } catch {
                for item in items { keep(item, "could not list its folder again: \(error)") }
                continue
            }
            for item in items {
                guard let current = now[item.remotePath] else { continue }
                if current.isReadOnly || item.isReadOnly {
                    keep(item, "read-only on the source")
                    continue
                }
                guard current.size == item.size, current.modified == item.modified else {
                    keep(item, "changed on the source since it was listed")
                    continue
                }
                let record: SyncHistory.Record?
                do {
                    record = try history.transaction(write: false) { (tx) throws(FerryError) in
                        try tx.record(
                            source: identity.key, path: item.remotePath, size: item.size, modified: item.modified)
                    }
                } catch {
                    keep(item, "could not read the import history: \(error)")
                    continue
                }
                if let reason = SyncEngine.reasonToKeep(record, directory: directory) {
                    keep(item, reason)
                    continue
                }
                do {
                    try await fs.delete(item.remotePath)
                } catch {
                    keep(item, "\(error)")
                    continue
                }
                try? history.transaction(write: true) { (tx) throws(FerryError) in
                    try tx.markDeletedFromSource(
                        source: identity.key, path: item.remotePath, size: record?.size, modified: record?.modified)
                }
                summary.deleted.append(item.remotePath)
                events(.deletedFromSource(item))
            }
        }
    }

    /// Why a file must stay on the source, or nil when its local copy is proven:
    /// Ferry downloaded it (not found in the folder), the history has the size and
    /// SHA-256 of the copy it wrote, and the copy still has both. The copy is read
    /// once more for this; a photo is deleted only on that proof.
    static func reasonToKeep(_ record: SyncHistory.Record?, directory: String) -> String? {
        guard let record else { return "not in the import history" }
        guard record.origin == .downloaded else {
            return "it was already in the folder, not copied by Ferry, so its copy is not proven"
        }
        guard let sha256 = record.sha256, let size = record.localSize else {
            return "recorded by an older Ferry without a checksum of its copy"
        }
        let copy = directory + "/" + record.localPath
        guard LocalFile.size(atPath: copy) == size else { return "the local copy is missing or has another size" }
        guard let now = Digest.sha256(ofFileAt: copy) else { return "the local copy cannot be read" }
        guard now == sha256 else { return "the local copy's bytes changed since Ferry wrote it (SHA-256 differs)" }
        return nil
    }
}
