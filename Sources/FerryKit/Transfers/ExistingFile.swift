import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How a destination that may already exist compares with the file a transfer
/// would copy onto it: the "already here" decision shared by `ferry get`,
/// `ferry put`, sync and apps, so a second run of the same copy moves no bytes.
///
/// Two files are the same when their sizes are equal and, where the source
/// gives a modification time, their times agree to the second (FAT's two
/// seconds on a FlashAir card), or to the minute or the day where the source
/// knows no more (``RemoteTimestamp/precision``: a web server's folder page,
/// FTP `LIST`). Contents are not read.
public enum ExistingFile: Sendable, Hashable {
    /// Nothing is at the destination.
    case missing
    /// The destination holds the same file: nothing to transfer.
    case same
    /// The destination holds a different file; `reason` says how it differs
    /// ("12 B here, 10 B at the source").
    case differs(reason: String)
    /// A folder is at the destination.
    case folder

    /// Compares a local `destination` with the remote file `source` about to be downloaded onto it.
    /// Floating remote times (FAT, FTP LIST) are read in `timeZone`, as ``stampModificationTime(_:from:timeZone:)`` writes them.
    public static func download(
        _ source: RemoteEntry, to destination: String, timeZone: TimeZone = .current
    ) -> ExistingFile {
        guard let local = LocalStat(destination) else { return .missing }
        if local.isDirectory { return .folder }
        if let size = source.size, size != local.size {
            return .differs(reason: "\(local.size) B here, \(size) B at the source")
        }
        if let modified = source.modified {
            let remote = modified.date(floatingIn: timeZone)
            let same =
                modified.precision == .second
                ? sameSecond(remote, local.modified, tolerance: modified.zone == .floating ? 2 : 1)
                : modified.contains(local.modified, floatingIn: timeZone)
            if !same {
                return .differs(reason: "modified \(stamp(local.modified)) here, \(modified.iso8601) at the source")
            }
        }
        return source.size == nil && source.modified == nil ? .differs(reason: "the source gives no size") : .same
    }

    /// Compares the remote `destination` (as listed, nil when absent) with the local file `source` about to be uploaded onto it.
    /// A server that keeps no times of its own sets a file's time when it is
    /// written; a remote copy at least as new as the local file then counts as this version.
    public static func upload(
        _ source: String, to destination: RemoteEntry?, timeZone: TimeZone = .current
    ) -> ExistingFile {
        guard let destination else { return .missing }
        if destination.isDirectory { return .folder }
        guard let local = LocalStat(source) else { return .differs(reason: "the local file cannot be read") }
        if let size = destination.size, size != local.size {
            return .differs(reason: "\(local.size) B here, \(size) B on the server")
        }
        if let modified = destination.modified {
            // A time to the minute or the day is as new as the last second it may be;
            // a floating time at second 0 may be a minute from a source that did not say: a minute of slack.
            let slack: TimeInterval = modified.second == 0 && modified.zone == .floating ? 60 : 2
            let latest = modified.latestDate(floatingIn: timeZone)
            if latest.timeIntervalSince(local.modified) < -slack {
                return .differs(reason: "modified \(stamp(local.modified)) here, \(modified.iso8601) on the server")
            }
        }
        return destination.size == nil ? .differs(reason: "the server gives no size") : .same
    }

    /// Sets a downloaded file's modification time to the source's, so that a
    /// later ``download(_:to:timeZone:)`` recognises it. Does nothing when the source gives no time.
    /// A listing's time to the minute or the day is not set on a file whose own time
    /// (the one the server sent with the bytes) already lies in that minute or day:
    /// the exact time is kept.
    public static func stampModificationTime(_ path: String, from source: RemoteEntry, timeZone: TimeZone = .current) {
        guard let modified = source.modified else { return }
        if modified.precision != .second, let local = LocalStat(path),
            modified.contains(local.modified, floatingIn: timeZone)
        {
            return
        }
        LocalFile.setModificationTime(path, modified.date(floatingIn: timeZone))
    }

    /// Gives a local file the modification time `date`, so that a later run finds
    /// it the same. A download's own `TransferResult.sourceModified` is set on
    /// the file already (`PartFile.finish`).
    public static func stampModificationTime(_ path: String, to date: Date) {
        LocalFile.setModificationTime(path, date)
    }

    private static func sameSecond(_ a: Date, _ b: Date, tolerance: TimeInterval) -> Bool {
        abs(a.timeIntervalSince1970.rounded(.down) - b.timeIntervalSince1970.rounded(.down)) < tolerance
    }

    private static func stamp(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.timeZone = .current
        f.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate]
        return f.string(from: date)
    }
}

/// Size, time and kind of a local path (following a symbolic link).
///
/// One `stat`: `FileManager.attributesOfItem` after `resolvingSymlinksInPath`
/// cost an `lstat` per path component and, for the usual missing destination,
/// a thrown Foundation error, which showed in the instructions of a `get -r`
/// of an FTP tree (bench/RESULTS.md, "The 500-file FTP tree, and 1,000 files over HTTP").
private struct LocalStat {
    var size: Int64
    var modified: Date
    var isDirectory: Bool

    init?(_ path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        isDirectory = st.st_mode & S_IFMT == S_IFDIR
        size = Int64(st.st_size)
        modified = OS.modificationDate(st)
    }
}
