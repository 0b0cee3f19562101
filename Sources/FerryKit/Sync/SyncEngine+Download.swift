import Foundation
import Synchronization

extension SyncEngine {
    /// How one download ended.
    enum FetchOutcome: Sendable {
        case imported(SyncItem, TransferResult, changed: Bool)
        case failed(SyncItem, FerryError)
    }

    /// Downloads the plan's files, `jobs` at a time (one connection for a card),
    /// recording each in the history as it lands. Returns the imported items with
    /// their final names. Stops launching new downloads when the source stops
    /// answering or the task is cancelled. The staged members of a photo group
    /// (``PhotoGroups``) are one unit of work, fetched one after another and
    /// placed together.
    func download(
        _ plan: Plan, identity: SyncSourceIdentity, history: SyncHistory, summary: inout SyncPassSummary,
        events: @escaping @Sendable (SyncEvent) -> Void
    ) async -> [SyncItem] {
        let downloads = plan.downloads
        guard !downloads.isEmpty else { return [] }
        var units: [[PlannedDownload]] = []
        var unitOfGroup: [String: Int] = [:]
        for d in downloads {
            if let g = d.group {
                if let i = unitOfGroup[g] {
                    units[i].append(d)
                    continue
                }
                unitOfGroup[g] = units.count
            }
            units.append([d])
        }
        // One more task than connections: the engine's per-host limit holds the
        // extra request back and starts it the moment a connection frees, while
        // the finished file is still being fsync'd and renamed.
        let connections = fs.capabilities.contains(.oneConnection) ? 1 : max(1, options.jobs)
        let width = connections + 1
        let started = ContinuousClock.now
        var imported: [SyncItem] = []
        var sourceGone = false
        var launchedFiles = 0
        let claimed = plan.claimed
        let days = DayCounter()
        _ = await forEachConcurrently(units, width: width) { unit in
            unit.count == 1
                ? [
                    await self.fetch(
                        unit[0], identity: identity, history: history, claimed: claimed, days: days, events: events)
                ]
                : await self.fetchGroup(
                    unit, identity: identity, history: history, claimed: claimed, days: days, events: events)
        } each: { outcomes in
            launchedFiles += outcomes.count
            for outcome in outcomes {
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
            }
            return !sourceGone && !Task.isCancelled
        }
        if Task.isCancelled { summary.interrupted = true }
        summary.notAttempted = downloads.count - launchedFiles
        summary.duration = .now - started
        return imported
    }

    /// A downloaded file, verified and given the source's time, not yet placed.
    struct Fetched: Sendable {
        var download: PlannedDownload
        var item: SyncItem
        var result: TransferResult
    }

    /// Downloads one file, verifies its size, gives it the remote time, moves a
    /// staged file into its date folder, and records it.
    func fetch(
        _ d: PlannedDownload, identity: SyncSourceIdentity, history: SyncHistory, claimed: Set<String>,
        days: DayCounter, events: @escaping @Sendable (SyncEvent) -> Void
    ) async -> FetchOutcome {
        let fetched: Fetched
        switch await fetchBytes(d, identity: identity, events: events) {
        case .success(let f): fetched = f
        case .failure(let failure): return failure.outcome
        }
        var item = fetched.item
        var result = fetched.result
        if d.staged {
            do {
                let facts = photoFacts(of: d.target)
                let place = try stagedPlace(fetched, facts: facts, sequence: d.sequence, days: days)
                item.destination = try moveStaged(
                    d.target, into: place.folder, as: place.name, claimed: claimed, size: result.size,
                    sha256: result.sha256
                ).path
            } catch {
                events(.failed(item, error))
                return .failed(item, error)
            }
            result.destination = item.destination
        }
        return record(item, result, identity: identity, history: history, events: events)
    }

    /// Fetches a photo group's staged members one after another, then files them
    /// together: in the day its first dated photo was taken, under one number
    /// (`IMG_0001 (2).CR2`, `IMG_0001 (2).JPG`, `IMG_0001 (2).xmp`) that is free
    /// for all of them, or that already holds their very bytes.
    func fetchGroup(
        _ members: [PlannedDownload], identity: SyncSourceIdentity, history: SyncHistory, claimed: Set<String>,
        days: DayCounter, events: @escaping @Sendable (SyncEvent) -> Void
    ) async -> [FetchOutcome] {
        var outcomes: [FetchOutcome] = []
        var fetched: [Fetched] = []
        for d in members {
            if Task.isCancelled { break }
            switch await fetchBytes(d, identity: identity, events: events) {
            case .success(let f): fetched.append(f)
            case .failure(let failure): outcomes.append(failure.outcome)
            }
        }
        guard let first = fetched.first else { return outcomes }
        // The group's facts are its first dated photo's (a sidecar has none).
        let facts =
            fetched.lazy.map { self.photoFacts(of: $0.download.target) }.first { $0.taken != nil }
            ?? photoFacts(of: first.download.target)
        var places: [(Fetched, StagedPlace)] = []
        for f in fetched {
            do {
                places.append(
                    (f, try stagedPlace(f, facts: facts, sequence: first.download.sequence, days: days, lead: first)))
            } catch {
                events(.failed(f.item, error))
                outcomes.append(.failed(f.item, error))
            }
        }
        for folder in Set(places.map(\.1.folder)) where !LocalFile.isDirectory(folder) {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                let e = FerryError(.localIO, operation: "mkdir", target: folder, detail: error.localizedDescription)
                for (f, _) in places {
                    events(.failed(f.item, e))
                    outcomes.append(.failed(f.item, e))
                }
                return outcomes
            }
        }
        // The first number whose names are free, or hold these bytes, for every member.
        func fits(_ f: Fetched, _ place: StagedPlace, _ n: Int) -> Bool {
            let name = PhotoGroups.numbered(place.folder + "/" + place.name, n)
            if claimed.contains(name) || LocalFile.exists(name + ".part") { return false }
            guard LocalFile.exists(name) else { return true }
            return holds(name, size: f.result.size, sha256: f.result.sha256)
        }
        var n = 1
        while !places.allSatisfy({ fits($0.0, $0.1, n) }) { n += 1 }
        for (original, place) in places {
            var f = original
            let name = PhotoGroups.numbered(place.folder + "/" + place.name, n)
            do throws(FerryError) {
                if LocalFile.exists(name) {
                    LocalFile.remove(f.download.target)
                    f.item.destination = name
                } else {
                    do {
                        try LocalFile.renameNoReplace(f.download.target, to: name)
                        f.item.destination = name
                    } catch  where error.code == .destinationExists {
                        // Taken since the look: on its own, under a name that clobbers nothing.
                        f.item.destination = try moveStaged(
                            f.download.target, into: place.folder, as: place.name, claimed: claimed,
                            size: f.result.size, sha256: f.result.sha256
                        ).path
                    }
                }
                SyncEngine.dropStagingFolder(of: f.download.target)
            } catch {
                events(.failed(f.item, error))
                outcomes.append(.failed(f.item, error))
                continue
            }
            f.result.destination = f.item.destination
            outcomes.append(record(f.item, f.result, identity: identity, history: history, events: events))
        }
        return outcomes
    }

    /// Downloads one planned file: the bytes, verified against the listed size,
    /// with the source's time; a failure as its outcome (and event).
    func fetchBytes(
        _ d: PlannedDownload, identity: SyncSourceIdentity, events: @escaping @Sendable (SyncEvent) -> Void
    ) async -> Result<Fetched, FetchFailure> {
        let item = d.item
        func fail(_ e: FerryError) -> Result<Fetched, FetchFailure> {
            events(.failed(item, e))
            return .failure(FetchFailure(outcome: .failed(item, e)))
        }
        if Task.isCancelled {
            return .failure(FetchFailure(outcome: .failed(item, FerryError(.cancelled, target: item.remotePath))))
        }
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
        let result: TransferResult
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
        return .success(Fetched(download: d, item: item, result: result))
    }

    /// A download that ended without a file to place.
    struct FetchFailure: Error, Sendable {
        var outcome: FetchOutcome
    }

    /// Records an imported file in the history and reports it.
    func record(
        _ item: SyncItem, _ result: TransferResult, identity: SyncSourceIdentity, history: SyncHistory,
        events: @escaping @Sendable (SyncEvent) -> Void
    ) -> FetchOutcome {
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
            events(.failed(item, e))
            return .failed(item, e)
        }
        events(.imported(item, result))
        return .imported(item, result, changed: item.action == .downloadChanged)
    }

    /// Whether the local file `name` holds exactly these bytes (size and SHA-256).
    func holds(_ name: String, size: Int64, sha256: String?) -> Bool {
        guard let sha256, LocalFile.size(atPath: name) == size else { return false }
        return Digest.sha256(ofFileAt: name) == sha256
    }

    /// What placing a downloaded photo needs from its bytes, read once from its
    /// first ``CaptureDate/prefixLength`` bytes: the date taken and the camera.
    struct PhotoFacts: Sendable {
        var taken: RemoteTimestamp?
        var camera: CameraFacts?

        /// No facts.
        init() {}

        /// The facts in a photo's first bytes.
        init(prefix: some Sequence<UInt8>) {
            taken = CaptureDate.read(from: prefix)?.local
            camera = CameraFacts.read(from: prefix)
        }

        /// Whether Ferry reads the Exif of a file with this name (``CaptureDate/fileExtensions``).
        static func areRead(from path: String) -> Bool {
            CaptureDate.fileExtensions.contains(LocalPath.pathExtension(path).lowercased())
        }
    }

    /// The facts of a downloaded file; none for a file Ferry reads no Exif of.
    func photoFacts(of path: String) -> PhotoFacts {
        guard PhotoFacts.areRead(from: path) else { return PhotoFacts() }
        let fd = OS.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return PhotoFacts() }
        defer { OS.close(fd) }
        var bytes = [UInt8](repeating: 0, count: CaptureDate.prefixLength)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return PhotoFacts() }
        return PhotoFacts(prefix: bytes[0..<n])
    }

    /// Where a staged file goes: an absolute folder and a name.
    struct StagedPlace: Sendable, Hashable {
        var folder: String
        var name: String
    }

    /// The folder and name of a downloaded, staged file: the folder template, or
    /// the day taken (date layout), or the source's folders (tree); the name
    /// template, or the file's own name. `lead` is the group's first member, whose
    /// source folder and sequence its sidecars share.
    func stagedPlace(
        _ f: Fetched, facts: PhotoFacts, sequence: Int, days: DayCounter, lead: Fetched? = nil
    ) throws(FerryError) -> StagedPlace {
        let name = f.item.remotePath.isEmpty ? f.download.target : LocalPath.lastComponent(f.item.remotePath)
        // The date taken, else the source's time (its local clock), else the file's.
        let taken: RemoteTimestamp = {
            if let t = facts.taken { return t }
            if let m = f.item.modified {
                return m.zone == .floating ? m : RemoteTimestamp(local: m.date(), in: options.timeZone)
            }
            let mtime =
                (try? FileManager.default.attributesOfItem(atPath: f.download.target)[.modificationDate] as? Date)
                ?? Date()
            return RemoteTimestamp(local: mtime, in: options.timeZone)
        }()
        let day = SyncNaming.dayFolder(taken, zone: options.timeZone)
        let sourceFolder = LocalPath.lastComponent(LocalPath.parent((lead ?? f).item.remotePath))
        let context = NameTemplate.Context(
            taken: taken, name: name, folder: sourceFolder, camera: facts.camera, sequence: sequence,
            daySequence: days.next(day, key: (lead ?? f).item.remotePath), tag: options.tag)
        let folder: String
        if let template = options.folderTemplate {
            folder = template.render(context)
            guard NameTemplate.isSafeFolder(folder) else {
                throw FerryError(
                    .invalidTemplate, operation: "sync", target: template.text,
                    detail: "for \(name) it gives the folder \"\(folder)\", which is no folder inside the destination")
            }
        } else if options.layout == .date {
            folder = day
        } else {
            folder = LocalPath.parent(SyncNaming.relative(f.item.remotePath, root: url.path))
        }
        var fileName = name
        if let template = options.nameTemplate {
            fileName = template.render(context)
            guard !fileName.isEmpty, fileName != ".", fileName != ".." else {
                throw FerryError(
                    .invalidTemplate, operation: "sync", target: template.text,
                    detail: "for \(name) it gives the name \"\(fileName)\"")
            }
        }
        return StagedPlace(folder: folder == "." ? directory : directory + "/" + folder, name: fileName)
    }

    /// Moves a staged download to `folder/name` under a name that clobbers
    /// nothing and that no planned download uses. A name there that holds these
    /// very bytes (same size and SHA-256: an earlier run's copy whose record was
    /// lost) is taken instead and the staged copy dropped (`duplicate`).
    func moveStaged(
        _ staged: String, into folder: String, as fileName: String, claimed: Set<String>, size: Int64,
        sha256: String?
    ) throws(FerryError) -> (path: String, duplicate: Bool) {
        if !LocalFile.isDirectory(folder) {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw FerryError(.localIO, operation: "mkdir", target: folder, detail: error.localizedDescription)
            }
        }
        let base = folder + "/" + fileName
        var n = 1
        while true {
            let name = SyncNaming.numbered(base, n)
            n += 1
            if claimed.contains(name) || LocalFile.exists(name + ".part") { continue }
            if LocalFile.exists(name) {
                if holds(name, size: size, sha256: sha256) {
                    LocalFile.remove(staged)
                    SyncEngine.dropStagingFolder(of: staged)
                    return (name, true)
                }
                continue
            }
            do {
                try LocalFile.renameNoReplace(staged, to: name)
            } catch  where error.code == .destinationExists {
                continue
            }
            SyncEngine.dropStagingFolder(of: staged)
            return (name, false)
        }
    }

    /// Removes the staging folder a placed file had to itself: a long name's
    /// `HASH/NAME` held only it; a flat `HASH-NAME` has none. The staging root
    /// stays until the pass ends (`SyncEngine.pass`): removed under a download
    /// beside this one, it looks empty while that download's unnamed file
    /// (`O_TMPFILE`) is in it, and the download's final link fails ("link
    /// .../HASH-IMG_0002.JPG: No such file or directory"; before it had a file
    /// in it: "mkdir ... The file doesn't exist", 2-3 of 500 photos).
    static func dropStagingFolder(of staged: String) {
        let parent = LocalPath.parent(staged)
        if LocalPath.lastComponent(parent) != SyncEngine.stagingFolder { rmdir(parent) }
    }

    // MARK: Delete after

    /// Deletes verified files from the source: only a file whose local copy Ferry
    /// wrote from this source (its history record says downloaded) and that still
    /// has the size and SHA-256 recorded when it was written; never a file found in
    /// the folder, never read-only ones, never one that changed since it was
    /// listed, on a card only when uploads are enabled.
    func deleteAfter(
        _ candidates: [SyncItem], wanted: Set<String>, identity: SyncSourceIdentity, history: SyncHistory,
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
        // Both copies must be proven when there is a backup folder.
        let backupHistory: SyncHistory? = backupRoot.flatMap { try? SyncHistory.open(directory: $0, create: false) }
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
            // Every item's verdict first: a photo group goes only as a whole.
            var proven: [(SyncItem, SyncHistory.Record?)] = []
            var unproven: [String: String] = [:]
            for item in items {
                guard let current = now[item.remotePath] else { continue }
                if current.isReadOnly || item.isReadOnly {
                    unproven[item.remotePath] = "read-only on the source"
                    continue
                }
                guard current.size == item.size, current.modified == item.modified else {
                    unproven[item.remotePath] = "changed on the source since it was listed"
                    continue
                }
                let record: SyncHistory.Record?
                do {
                    record = try history.transaction(write: false) { (tx) throws(FerryError) in
                        try tx.record(
                            source: identity.key, path: item.remotePath, size: item.size, modified: item.modified)
                    }
                } catch {
                    unproven[item.remotePath] = "could not read the import history: \(error)"
                    continue
                }
                if let reason = SyncEngine.reasonToKeep(record, directory: directory) {
                    unproven[item.remotePath] = reason
                    continue
                }
                if let root = backupRoot {
                    let copy = try? backupHistory?.transaction(write: false) { (tx) throws(FerryError) in
                        try tx.record(
                            source: identity.key, path: item.remotePath, size: item.size, modified: item.modified)
                    }
                    if let reason = SyncEngine.reasonToKeep(copy ?? nil, directory: root) {
                        unproven[item.remotePath] = "the backup copy in \(root): " + reason
                        continue
                    }
                }
                proven.append((item, record))
            }
            for item in items { if let reason = unproven[item.remotePath] { keep(item, reason) } }
            // A raw file, its JPEG and its sidecars leave the source together or not at all.
            let provenPaths = Set(proven.map(\.0.remotePath))
            let groups = PhotoGroups.groups(now.keys.filter { wanted.contains($0) })
            var groupOf: [String: [String]] = [:]
            for members in groups.values { for m in members { groupOf[m] = members } }
            for (item, record) in proven {
                if let members = groupOf[item.remotePath],
                    let missing = members.first(where: { !provenPaths.contains($0) })
                {
                    keep(item, "it goes with \(LocalPath.lastComponent(missing)), whose copy is not verified")
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

/// `{dayseq}`: each file's number among one import's files of the same day
/// taken, from 1, in the order they are placed; files with the same key (a
/// photo group's lead) share one.
final class DayCounter: Sendable {
    private let state = Mutex<(count: [String: Int], given: [String: Int])>(([:], [:]))

    func next(_ day: String, key: String) -> Int {
        state.withLock { s in
            if let n = s.given[day + "\n" + key] { return n }
            let n = (s.count[day] ?? 0) + 1
            s.count[day] = n
            s.given[day + "\n" + key] = n
            return n
        }
    }
}
