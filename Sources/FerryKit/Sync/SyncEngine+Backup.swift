import Foundation

extension SyncEngine {
    /// The backup folder (``SyncOptions/backupDirectory``), absolute.
    var backupRoot: String? {
        options.backupDirectory.map { d in
            LocalPath.standardized(d.hasPrefix("/") ? d : FileManager.default.currentDirectoryPath + "/" + d)
        }
    }

    /// The backup folder's own history, or why there is none: its folder must
    /// exist or be creatable inside an existing one (a backup disk that is not
    /// mounted is reported, not made on the system disk).
    func openBackupHistory(_ root: String) -> Result<SyncHistory, FerryError> {
        if !LocalFile.isDirectory(root) {
            guard LocalFile.isDirectory(LocalPath.parent(root)), mkdir(root, 0o755) == 0 || errno == EEXIST else {
                return .failure(
                    FerryError(
                        .localIO, operation: "backup", target: root,
                        detail: "the backup folder is not there (is its disk connected?); nothing was copied to it"))
            }
        }
        do {
            guard let h = try SyncHistory.open(directory: root, create: true) else {
                return .failure(FerryError(.localIO, operation: "backup", target: root, detail: "no history"))
            }
            return .success(h)
        } catch {
            return .failure(error)
        }
    }

    /// Writes the second copy of every imported file that has none yet (this
    /// pass's and earlier ones'), from the first copy, not from the source: one
    /// download makes both. Each copy is written through a `.part`, checked
    /// against the SHA-256 the download computed, and recorded in the backup
    /// folder's own history (a sync destination of its own). A backup that fails
    /// is a failure of the pass for that file, and delete-after keeps the file.
    func backUp(
        _ items: [SyncItem], identity: SyncSourceIdentity, history: SyncHistory, summary: inout SyncPassSummary,
        events: @escaping @Sendable (SyncEvent) -> Void
    ) async {
        guard let root = backupRoot, !items.isEmpty else { return }
        func fail(_ item: SyncItem, _ e: FerryError) {
            summary.failures.append(.init(remotePath: item.remotePath, error: e))
            events(.failed(item, e))
        }
        let backup: SyncHistory
        switch openBackupHistory(root) {
        case .success(let h): backup = h
        case .failure(let e):
            for item in items { fail(item, e) }
            return
        }
        for item in items {
            if Task.isCancelled { return }
            let primary: SyncHistory.Record?
            let existing: SyncHistory.Record?
            do {
                primary = try history.transaction(write: false) { (tx) throws(FerryError) in
                    try tx.record(source: identity.key, path: item.remotePath, size: item.size, modified: item.modified)
                }
                existing = try backup.transaction(write: false) { (tx) throws(FerryError) in
                    try tx.record(source: identity.key, path: item.remotePath, size: item.size, modified: item.modified)
                }
            } catch {
                fail(item, error)
                continue
            }
            // Already backed up, and the copy is still there with its size.
            if let existing, let size = existing.localSize,
                LocalFile.size(atPath: root + "/" + existing.localPath) == size
            {
                continue
            }
            guard let primary else { continue }
            let from = directory + "/" + primary.localPath
            // A file found in the folder has no recorded checksum: its bytes as they are now.
            guard let size = primary.localSize ?? LocalFile.size(atPath: from),
                let sha256 = primary.sha256 ?? Digest.sha256(ofFileAt: from)
            else {
                fail(
                    item, FerryError(.localIO, operation: "backup", target: from, detail: "the first copy is not there")
                )
                continue
            }
            if let e = await copy(from, toBackup: root, as: primary.localPath, size: size, sha256: sha256, item: item) {
                switch e {
                case .failure(let error): fail(item, error)
                case .success(let relative):
                    do {
                        try backup.record([
                            SyncHistory.Record(
                                source: identity.key, path: item.remotePath, size: item.size, modified: item.modified,
                                localPath: relative, origin: primary.origin, localSize: size, sha256: sha256)
                        ])
                        summary.backedUp += 1
                    } catch {
                        fail(item, error)
                    }
                }
            }
        }
    }

    /// Copies the first copy into the backup folder at the same relative path (a
    /// name that clobbers nothing, or one that holds these bytes already) and
    /// verifies it; the relative path it took.
    private func copy(
        _ from: String, toBackup root: String, as relative: String, size: Int64, sha256: String, item: SyncItem
    ) async -> Result<String, FerryError>? {
        guard holds(from, size: size, sha256: sha256) else {
            return .failure(
                FerryError(
                    .verificationFailed, operation: "backup", target: from,
                    detail: "the first copy changed since it was written; no backup made from it"))
        }
        let base = root + "/" + relative
        let folder = LocalPath.parent(base)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            return .failure(FerryError.wrap(error, operation: "backup", target: folder))
        }
        var n = 1
        while true {
            let name = SyncNaming.numbered(base, n)
            n += 1
            if LocalFile.exists(name) {
                if holds(name, size: size, sha256: sha256) { return .success(String(name.dropFirst(root.count + 1))) }
                continue
            }
            var options = DownloadOptions()
            options.computeChecksum = true
            options.resume = false
            options.overwrite = .fail
            do {
                let result = try await LocalCopy.start(from: from, to: name, options: options).result
                guard result.size == size, result.sha256 == sha256 else {
                    LocalFile.remove(name)
                    return .failure(
                        FerryError(
                            .verificationFailed, operation: "backup", target: name,
                            detail: "the backup copy does not have the first copy's bytes; removed it"))
                }
                return .success(String(name.dropFirst(root.count + 1)))
            } catch  where error.code == .destinationExists {
                continue
            } catch {
                return .failure(error)
            }
        }
    }

    /// A dry run's downloads with the place each staged one would take: its photo
    /// facts from the first 64 KiB read into memory (one range request on a card;
    /// none for files Ferry reads no Exif of), rendered as the real import would.
    /// A name that a real run would number because it is taken is shown as the
    /// first choice.
    func previewPlaces(_ downloads: [PlannedDownload]) async -> [PlannedDownload] {
        let days = DayCounter()
        var factsOf: [String: PhotoFacts] = [:]
        var groupLead: [String: PlannedDownload] = [:]
        for d in downloads where d.staged {
            guard !Task.isCancelled else { break }
            if PhotoFacts.areRead(from: d.item.remotePath),
                let head = try? await fs.data(at: d.item.remotePath, range: 0..<(64 << 10))
            {
                let facts = PhotoFacts(prefix: head)
                factsOf[d.item.remotePath] = facts
                // A group's place is its first dated photo's (its sidecars follow it).
                if let g = d.group, groupLead[g] == nil, facts.taken != nil { groupLead[g] = d }
            }
        }
        var out: [PlannedDownload] = []
        for var d in downloads {
            defer { out.append(d) }
            guard d.staged else { continue }
            let lead = d.group.flatMap { groupLead[$0] }
            let facts = factsOf[(lead ?? d).item.remotePath] ?? PhotoFacts()
            if let lead { d.sequence = lead.sequence }
            // Without a date from the bytes or the listing the day is the download's own: unknown yet.
            guard facts.taken != nil || d.item.modified != nil else { continue }
            let result = TransferResult(source: "", destination: d.target, size: d.item.size ?? 0, bytesTransferred: 0)
            let fetched = Fetched(download: d, item: d.item, result: result)
            let leader = lead.map { Fetched(download: $0, item: $0.item, result: result) }
            guard
                let place = try? stagedPlace(
                    fetched, facts: facts, sequence: d.sequence, days: days, lead: leader)
            else { continue }
            d.item.destination = place.folder + "/" + place.name
        }
        return out
    }
}
