import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where a download's bytes live until they are verified: `NAME.part` plus its
/// journal `NAME.part.journal` (see DESIGN.md, "Transfers: the contract").
///
/// Used by the download driver between attempts and by the engine thread during
/// one attempt, never by both at once (the driver awaits the attempt), which is
/// what makes `@unchecked Sendable` safe.
final class PartFile: @unchecked Sendable {
    let destination: String
    let partPath: String
    let journalPath: String
    private(set) var fd: Int32 = -1
    /// Bytes in the `.part` file (every one written by a `write` that returned).
    private(set) var length: Int64 = 0
    private(set) var journal: DownloadJournal
    /// The first write error of the current attempt (disk full ...).
    var writeError: FerryError?

    private var lastCheckpoint = ContinuousClock.now
    private var writebackFrom: Int64 = 0
    /// Kick off writeback every this many bytes, so the final fsync is short.
    private static let writebackChunk: Int64 = 8 << 20
    /// Make the journal's durable length catch up at least this often.
    private static let checkpointInterval: Duration = .seconds(2)

    init(destination: String, source: String) {
        self.destination = destination
        partPath = destination + ".part"
        journalPath = DownloadJournal.path(forPart: destination + ".part")
        journal = DownloadJournal(source: source, bootID: DownloadJournal.currentBootID)
    }

    deinit { close() }

    /// Opens the `.part`, resuming from it when its journal names the same source;
    /// returns how many bytes are already there.
    func open(resume: Bool) throws(FerryError) -> Int64 {
        fd = try LocalFile.openForWriting(partPath)
        let size = LocalFile.size(fd)
        if resume, size > 0, let saved = DownloadJournal.load(from: journalPath),
            saved.source == journal.source
        {
            // Same boot: the page cache survived, every written byte is there.
            // After a reboot only what was fdatasync'd is trusted.
            let trusted = saved.bootID == DownloadJournal.currentBootID ? size : min(size, saved.durableLength)
            journal = saved
            journal.bootID = DownloadJournal.currentBootID
            try LocalFile.truncate(fd, to: trusted, path: partPath)
            length = trusted
            writebackFrom = trusted
            return trusted
        }
        try LocalFile.truncate(fd, to: 0, path: partPath)
        length = 0
        writebackFrom = 0
        return 0
    }

    /// Fixes what the bytes are before the first byte of an attempt is written:
    /// cuts the file to `offset` (0 = start over) and records the validators.
    /// Truncating before saving the journal means a crash in between can never
    /// pair old bytes with new validators.
    func begin(at offset: Int64, etag: String?, lastModified: String?, totalSize: Int64?) throws(FerryError) {
        if offset != length {
            try LocalFile.truncate(fd, to: offset, path: partPath)
            length = offset
            writebackFrom = min(writebackFrom, offset)
        }
        journal.etag = etag
        journal.lastModified = lastModified
        journal.totalSize = totalSize
        journal.durableLength = min(journal.durableLength, offset)
        try journal.save(to: journalPath)
    }

    /// Appends bytes at the end; false (with `writeError` set) when the disk refused.
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        do {
            try LocalFile.writeAll(fd, bytes, path: partPath)
        } catch {
            writeError = error
            length = LocalFile.size(fd)
            return false
        }
        length += Int64(bytes.count)
        if length - writebackFrom >= PartFile.writebackChunk {
            LocalFile.startWriteback(fd, from: writebackFrom, length: length - writebackFrom)
            writebackFrom = length
        }
        let now = ContinuousClock.now
        if now - lastCheckpoint >= PartFile.checkpointInterval {
            lastCheckpoint = now
            checkpoint()
        }
        return true
    }

    /// Makes the bytes so far durable and records that in the journal.
    func checkpoint() {
        guard fd >= 0, length > journal.durableLength else { return }
        do {
            try LocalFile.syncData(fd, path: partPath)
            journal.durableLength = length
            try journal.save(to: journalPath)
        } catch {
            // A checkpoint failing (disk full) loses nothing: the previous journal
            // stays valid. The write path reports the disk error itself.
        }
    }

    /// Verifies the size, syncs, and renames the `.part` to the destination.
    func finish(expectedSize: Int64?, overwrite: OverwritePolicy) throws(FerryError) -> Int64 {
        if let expectedSize, expectedSize != length {
            throw FerryError(
                .verificationFailed, operation: "download", target: destination,
                detail: "got \(length) bytes, expected \(expectedSize)", isTransient: true)
        }
        if fsync(fd) != 0 { throw FerryError.posix(errno, operation: "sync", path: partPath) }
        close()
        if overwrite == .overwrite {
            try LocalFile.rename(partPath, to: destination)
        } else {
            try LocalFile.renameNoReplace(partPath, to: destination)
        }
        LocalFile.remove(journalPath)
        return length
    }

    /// Closes the descriptor; the `.part` and journal stay for a later resume.
    func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }
}
