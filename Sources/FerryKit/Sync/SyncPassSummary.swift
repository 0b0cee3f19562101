import Foundation

/// One file a sync pass acts on.
public struct SyncItem: Sendable, Hashable {
    /// What the pass does with the file.
    public enum Action: String, Sendable, Hashable {
        /// Not imported before: download it.
        case download
        /// Imported before with another size or time: download it again under a new name.
        case downloadChanged = "download-changed"
        /// Already in the folder with the same size: record it, fetch nothing.
        case recordExisting = "record-existing"
    }

    /// The absolute remote path.
    public var remotePath: String
    /// The local destination (absolute, or relative to the working folder as the
    /// destination folder was given). For a date layout without a remote date, the
    /// final name is known only after the download.
    public var destination: String
    /// The remote size, if known.
    public var size: Int64?
    /// The remote modification time, if known.
    public var modified: RemoteTimestamp?
    /// Read-only on the source (never deleted by `--delete-after`).
    public var isReadOnly: Bool
    /// What happens to it.
    public var action: Action

    /// Creates an item.
    public init(
        remotePath: String, destination: String, size: Int64?, modified: RemoteTimestamp?, isReadOnly: Bool = false,
        action: Action
    ) {
        self.remotePath = remotePath
        self.destination = destination
        self.size = size
        self.modified = modified
        self.isReadOnly = isReadOnly
        self.action = action
    }
}

/// What happened in one pass of a sync: listed, imported, skipped, failed, deleted.
public struct SyncPassSummary: Sendable {
    /// One file that failed, with the reason.
    public struct Failure: Sendable {
        /// The remote path.
        public var remotePath: String
        /// Why.
        public var error: FerryError
    }

    /// One file `--delete-after` left on the source, and why.
    public struct Kept: Sendable, Hashable {
        /// The remote path.
        public var remotePath: String
        /// Why it was not deleted ("read-only", "uploads disabled on this card" ...).
        public var reason: String
    }

    /// 1 for the first pass, counting up in watch mode.
    public var pass: Int
    /// The source, redacted.
    public var source: String
    /// The source's identity in the history.
    public var sourceKey: String
    /// Whether nothing was changed (`--dry-run`).
    public var dryRun: Bool
    /// Files listed on the source (hidden ones left out unless asked).
    public var listed = 0
    /// Files left out by `--only` or `--since`.
    public var filtered = 0
    /// Files imported in an earlier pass or run (not fetched again).
    public var alreadyImported = 0
    /// Files found in the folder with the right size and recorded, not fetched.
    public var recorded = 0
    /// Files seen changing during watch, left for the next pass.
    public var deferred = 0
    /// Files downloaded in this pass (including changed files fetched again).
    public var imported = 0
    /// Of ``imported``, files that changed on the source since an earlier import.
    public var changed = 0
    /// Bytes that crossed the network for the imported files.
    public var bytes: Int64 = 0
    /// Bytes of the imported files (resumed bytes included).
    public var importedBytes: Int64 = 0
    /// Files given their second copy in ``SyncOptions/backupDirectory`` this pass.
    public var backedUp = 0
    /// Wall-clock time of the download phase.
    public var duration: Duration = .zero
    /// Files that failed, with reasons.
    public var failures: [Failure] = []
    /// Files deleted from the source (`--delete-after`).
    public var deleted: [String] = []
    /// Files `--delete-after` left on the source, with reasons.
    public var kept: [Kept] = []
    /// What a dry run would do (also filled in a normal pass for the files acted on).
    public var items: [SyncItem] = []
    /// Downloads that did not start because the source stopped answering or the pass was interrupted.
    public var notAttempted = 0
    /// True when the pass was interrupted (Ctrl-C, task cancelled); partial files are kept.
    public var interrupted = false

    /// Creates an empty summary.
    public init(pass: Int, source: String, sourceKey: String, dryRun: Bool) {
        self.pass = pass
        self.source = source
        self.sourceKey = sourceKey
        self.dryRun = dryRun
    }

    /// Files not downloaded because they needed nothing: already imported, recorded,
    /// filtered out, or still changing.
    public var skipped: Int { alreadyImported + recorded + filtered + deferred }

    /// Network bytes per second over the download phase (0 when nothing was downloaded).
    public var bytesPerSecond: Double {
        let seconds = duration / .seconds(1)
        return seconds > 0 ? Double(bytes) / seconds : 0
    }

    /// Whether every file that should have been imported was.
    public var succeeded: Bool { failures.isEmpty && !interrupted && notAttempted == 0 }
}

/// What a running sync reports, as it happens.
public enum SyncEvent: Sendable {
    /// A pass begins (after the source answered and was identified).
    case passStarted(pass: Int, source: String, sourceKey: String)
    /// Dry run: what would happen to one file.
    case planned(SyncItem)
    /// A download started; observe or control it through the transfer.
    case downloadStarted(SyncItem, Transfer)
    /// A file was downloaded, verified and recorded (`item.destination` is its final name).
    case imported(SyncItem, TransferResult)
    /// A file already in the folder was recorded without fetching it.
    case recorded(SyncItem)
    /// A file failed.
    case failed(SyncItem, FerryError)
    /// A file was deleted from the source after its local copy was verified.
    case deletedFromSource(SyncItem)
    /// `--delete-after` left a file on the source.
    case keptOnSource(SyncItem, reason: String)
    /// A pass ended.
    case passFinished(SyncPassSummary)
    /// Watch: the source stopped answering (camera off, server down); Ferry keeps trying.
    case sourceUnavailable(FerryError)
    /// Watch: the source answers again.
    case sourceAvailable
    /// Watch: another card answers at the same address (its CID changed).
    case differentCard(previous: String?, current: String?)
    /// Watch: the card restarted (its last-write time went backwards).
    case cardRestarted
    /// Watch: waiting for changes.
    case waiting
}
