import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where a download's bytes live until they are verified: `NAME.part` plus its
/// journal `NAME.part.journal` (see docs/DESIGN.md, "Transfers: the contract").
///
/// Bytes are gathered in one bounded buffer (`bufferSize`) and written in large
/// chunks; a `kill -9` loses at most that buffer, which the next run fetches again.
/// The journal is written once the file is worth resuming (`journalThreshold`
/// bytes) or the transfer stops early, and always after the bytes it describes
/// were written; small files that finish in one go never need one.
///
/// A new download starts in an unnamed file (`O_TMPFILE`) in the destination's
/// folder. It gets the name `NAME.part` when its first buffer is written (a file
/// larger than the buffer), before its first journal, and when the transfer stops
/// without finishing. A small file that arrives in one go never has a `.part`
/// name: it is linked under its final name once verified and durable, one
/// directory operation instead of create + rename, and a crash before that
/// leaves nothing behind. File systems without `O_TMPFILE` get a named `.part`
/// from the start.
///
/// Which file operations each step needs, and in what order, is `PartPlan`'s
/// decision (its phase says where the bytes are: unnamed, `.part`, `.part` and
/// journal, final name); this class carries them out and keeps the bytes'
/// buffer, length, digest and journal.
///
/// Used by the download driver between attempts and by the engine thread during
/// one attempt, never by both at once (the driver awaits the attempt), which is
/// what makes `@unchecked Sendable` safe. The flusher thread (`syncEarly`) gets
/// only the descriptor and the time to set, and hands its result back through
/// `earlySync`.
final class PartFile: @unchecked Sendable {
    let destination: String
    let partPath: String
    let journalPath: String
    private(set) var fd: Int32 = -1
    /// Bytes accepted so far: written to the `.part` plus those still in the buffer.
    private(set) var length: Int64 = 0
    private(set) var journal: DownloadJournal
    /// The first write error of the current attempt (disk full ...).
    var writeError: FerryError?
    /// Where the bytes are on disk, and what each step does to them.
    private(set) var plan: PartPlan
    /// Whether the bytes are under `partPath` on disk (else in an unnamed file).
    var isNamed: Bool { plan.isNamed }
    /// The bytes go to a descriptor the caller owns (standard output, a pipe):
    /// no file, no journal, no sync, no rename, never closed
    /// (``DownloadOptions/outputDescriptor``).
    let isStream: Bool

    private var buffer: UnsafeMutableRawBufferPointer?
    private var buffered = 0
    /// Writing the buffer out failed in `releaseBuffer`; `finish` throws it.
    private var releaseError: FerryError?
    /// How the flush that `syncEarly` started ended (0, or the `errno`) and the
    /// source's time it set, until `finish` takes them. Written on the flusher
    /// thread, read by the driver.
    private let earlySync = Mutex<(error: Int32, modified: Date?)?>(nil)
    /// The source's time (its journal's `modified`), which `finish` gave the
    /// file; nil when the source gave none.
    private(set) var sourceModified: Date?
    /// When the durable length last caught up, or the current attempt began:
    /// the interval counts from the first byte, not from when the file was
    /// opened (a download queued behind the per-host limit would otherwise
    /// `fdatasync` on its first byte, on the engine thread).
    private var lastCheckpoint = ContinuousClock.now
    /// Bytes before this offset have been handed to the disk (`kickWriteback`).
    private var writebackFrom: Int64 = 0
    /// Start writing a large file back every this many bytes, so that its final
    /// fsync finds little left to do and the disk works while the network does.
    static let writebackChunk: Int64 = 8 << 20

    /// The write buffer: the most a crash can lose. Small enough to stay in the
    /// CPU cache between the copy in and the `write` out (a 1 MiB buffer was
    /// slower on 1 GiB downloads; that run is not in bench/, so measure with
    /// bench/http_bench.py before changing it), large enough that a `write`
    /// takes sixteen of libcurl's 16 KiB callbacks.
    static let bufferSize = 256 << 10
    /// Write the journal once this many bytes are in the file.
    static let journalThreshold: Int64 = 1 << 20
    /// Make the journal's durable length catch up at least this often.
    private static let checkpointInterval: Duration = .seconds(2)

    /// The SHA-256 of the bytes, fed as they are taken when a checksum was asked for.
    private let digest: Digest?
    /// How many bytes from offset 0 `digest` has seen; -1 once a cut made it
    /// describe bytes that are no longer there. Unless it equals `length` at the
    /// end, `finish` hashes the file's bytes instead (a resume's kept bytes).
    private var digested: Int64 = 0
    /// The SHA-256 (hex) of the finished file, when asked for.
    private(set) var sha256: String?

    init(destination: String, source: String, checksum: Bool = false, identity: String? = nil) {
        digest = checksum ? Digest() : nil
        self.destination = destination
        partPath = destination + ".part"
        journalPath = DownloadJournal.path(forPart: destination + ".part")
        journal = DownloadJournal(source: source, identity: identity, bootID: DownloadJournal.currentBootID)
        isStream = false
        plan = PartPlan(stream: false)
    }

    /// Bytes written to `descriptor` as they come, `label` naming it in errors.
    init(streamingTo descriptor: Int32, label: String, source: String) {
        digest = nil
        destination = label
        partPath = label
        journalPath = label
        journal = DownloadJournal(source: source, bootID: DownloadJournal.currentBootID)
        isStream = true
        fd = descriptor
        plan = PartPlan(stream: true)
    }

    /// The part a download with `options` writes to `destination`.
    static func make(destination: String, source: String, options: DownloadOptions) -> PartFile {
        if let fd = options.outputDescriptor { return PartFile(streamingTo: fd, label: destination, source: source) }
        return PartFile(
            destination: destination, source: source, checksum: options.computeChecksum,
            identity: options.sourceIdentity)
    }

    deinit {
        close()
        if let buffer { writeBufferPool.give(buffer) }
    }

    /// Bytes actually in the `.part` file (the buffer flushed).
    private var written: Int64 { length - Int64(buffered) }

    /// Opens the `.part`, resuming from it when its journal names the same source;
    /// returns how many bytes are already there. Without a `.part` the bytes go to
    /// an unnamed file until they need a name.
    func open(resume: Bool) throws(FerryError) -> Int64 {
        if isStream { return 0 }
        let found: PartPlan.Found
        var saved: DownloadJournal?
        fd = OS.open(partPath, O_WRONLY | O_CLOEXEC)
        if fd < 0 {
            let e = errno
            guard e == ENOENT else { throw FerryError.posix(e, operation: "open", path: partPath) }
        }
        if fd < 0, let unnamed = try LocalFile.openUnnamed(inFolderOf: destination) {
            fd = unnamed
            found = .nothing
        } else {
            // No unnamed files here: an empty named `.part`, handled like any.
            if fd < 0 { fd = try LocalFile.openForWriting(partPath) }
            let size = LocalFile.size(fd)
            var trusted: Int64?
            if resume, size > 0, let j = DownloadJournal.load(from: journalPath),
                j.describes(source: journal.source, identity: journal.identity)
            {
                // Same boot: the page cache survived, every written byte is there.
                // After a reboot only what was fdatasync'd is trusted.
                trusted = j.bootID == DownloadJournal.currentBootID ? size : min(size, j.durableLength)
                saved = j
            }
            found = .part(size: size, resumable: trusted, staleJournal: trusted == nil && LocalFile.exists(journalPath))
            length = size
        }
        let ops = plan.ops(for: .opened(found))
        plan.opened(found)
        if let saved {
            // The same file through another address keeps its bytes and validators
            // and takes the address it is fetched from now.
            let (source, identity) = (journal.source, journal.identity)
            journal = saved
            journal.source = source
            journal.identity = identity ?? saved.identity
            journal.bootID = DownloadJournal.currentBootID
        }
        try perform(ops)
        return length
    }

    /// Carries out `ops` in order, each one reported to the plan once it
    /// succeeded; the first failure stops them.
    private func perform(_ ops: [PartPlan.Op], expectedSize: Int64? = nil) throws(FerryError) {
        for op in ops {
            try perform(op, expectedSize: expectedSize)
            plan.did(op)
        }
    }

    /// One of the plan's operations. `.sync` and `.syncOnFlusher` wait for or
    /// hand over to the flusher thread: `finish` and `syncEarly` carry them out.
    private func perform(_ op: PartPlan.Op, expectedSize: Int64?) throws(FerryError) {
        switch op {
        case .truncate(let to):
            try LocalFile.truncate(fd, to: to, path: partPath)
            length = to
        case .removeJournal:
            LocalFile.remove(journalPath)
        case .linkPart:
            do {
                try LocalFile.link(fd, to: partPath)
            } catch  where error.code == .destinationExists {
                // A `.part` appeared since `open` (another process): ours replaces it.
                LocalFile.remove(partPath)
                try LocalFile.link(fd, to: partPath)
            }
        case .writeBuffer:
            try flush(naming: false)
        case .syncData:
            try LocalFile.syncData(fd, path: partPath)
            journal.durableLength = length
        case .saveJournal:
            try journal.save(to: journalPath)
        case .verifySize:
            if let expectedSize, expectedSize != length {
                throw FerryError(
                    .verificationFailed, operation: "download", target: destination,
                    detail: "got \(length) bytes, expected \(expectedSize)", isTransient: true)
            }
        case .stampTime:
            sourceModified = PartFile.stampSourceTime(journal.modified, on: fd)
        case .checksum:
            if let digest {
                sha256 =
                    digested == length ? Digest.hex(digest.finish()) : Digest.sha256(ofDescriptor: fd, length: length)
            }
        case .linkFinal:
            do {
                try LocalFile.link(fd, to: destination)
            } catch  where error.code == .destinationExists {
                throw FerryError(
                    .destinationExists, operation: "rename", target: destination,
                    detail: "appeared while downloading", recovery: .replaceOrKeep)
            }
        case .rename(let replacing):
            if replacing {
                try LocalFile.rename(partPath, to: destination)
            } else {
                try LocalFile.renameNoReplace(partPath, to: destination)
            }
        case .removePart:
            LocalFile.remove(partPath)
        case .close:
            close()
        case .sync, .syncOnFlusher:
            preconditionFailure("\(op) is carried out by finish and syncEarly")
        }
    }

    /// Fixes what the bytes are before the first byte of an attempt is written:
    /// cuts the file to `offset` (0 = start over) and records the validators.
    /// Starting over removes the old journal before any new byte lands, so old
    /// validators can never describe new bytes. `verifiable: false` marks bytes
    /// whose version no validator describes (`DownloadJournal.unverifiable`).
    func begin(
        at offset: Int64, etag: String?, modified: SourceTime?, totalSize: Int64?, verifiable: Bool = true,
        finalSource: String? = nil
    ) throws(FerryError) {
        // An earlier attempt's failed release left `length` at what is on disk.
        releaseError = nil
        lastCheckpoint = .now
        if isStream {
            try flush(naming: false)
            // Bytes written to a pipe cannot be taken back: only continuing is possible.
            guard offset == length else {
                throw FerryError(
                    .localIO, operation: "download", target: destination,
                    detail: "the server would send the file again from byte \(offset), but \(length) bytes "
                        + "were written already and cannot be taken back")
            }
        }
        let unverifiable: Bool? = verifiable ? nil : true
        let changed =
            journal.etag != etag || journal.modified != modified || journal.totalSize != totalSize
            || journal.unverifiable != unverifiable || journal.finalSource != finalSource
        let ops = plan.ops(for: .begin(offset: offset, length: length, validatorsChanged: changed))
        journal.etag = etag
        journal.finalSource = finalSource
        journal.modified = modified
        journal.totalSize = totalSize
        journal.unverifiable = unverifiable
        journal.durableLength = min(journal.durableLength, offset)
        try perform(ops)
        if offset == 0 {
            digest?.reset()
            digested = 0
        } else if offset < digested {
            digested = -1
        }
    }

    /// Takes bytes; false (with `writeError` set) when the disk refused them.
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if let digest, digested == length {
            digest.update(bytes)
            digested += Int64(bytes.count)
        }
        if buffer == nil { buffer = writeBufferPool.take() }
        var rest = bytes
        while !rest.isEmpty {
            if buffered == 0 && rest.count >= PartFile.bufferSize {
                // A chunk as large as the buffer goes from libcurl's buffer to the
                // file directly: one copy fewer for most of a large download.
                do throws(FerryError) {
                    try writeOut(rest, naming: true)
                } catch {
                    writeError = error
                    return false
                }
                length += Int64(rest.count)
                kickWriteback()
                break
            }
            let n = min(rest.count, PartFile.bufferSize - buffered)
            buffer!.baseAddress!.advanced(by: buffered).copyMemory(from: rest.baseAddress!, byteCount: n)
            buffered += n
            length += Int64(n)
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
            if buffered == PartFile.bufferSize {
                do throws(FerryError) { try flush() } catch {
                    writeError = error
                    return false
                }
            }
        }
        if written >= PartFile.journalThreshold, plan.phase == .unnamed || plan.phase == .named {
            do throws(FerryError) { try perform(plan.ops(for: .journalDue)) } catch {
                writeError = error
                return false
            }
        }
        let now = ContinuousClock.now
        if now - lastCheckpoint >= PartFile.checkpointInterval {
            lastCheckpoint = now
            checkpoint()
        }
        return true
    }

    /// Writes the buffer to the file; with `naming`, a file that grows beyond one
    /// buffer gets its `.part` name first, so that a long download shows.
    func flush(naming: Bool = true) throws(FerryError) {
        guard buffered > 0, let buffer else { return }
        try writeOut(UnsafeRawBufferPointer(rebasing: buffer[0..<buffered]), naming: naming)
        buffered = 0
        kickWriteback()
    }

    /// Writes what is buffered and gives the buffer back to the pool (engine
    /// thread, at the end of an attempt). A failure is kept for `finish` to throw,
    /// as its own flush would have; `length` is then what reached the file.
    func releaseBuffer() {
        do throws(FerryError) { try flush(naming: false) } catch { releaseError = error }
        if let buffer { writeBufferPool.give(buffer) }
        buffer = nil
    }

    /// Writes `bytes` (the buffer, or a chunk that bypasses it) at the end of the
    /// file. On a failure `length` becomes what did reach the file, with the buffer
    /// dropped; the rest is fetched again on resume.
    private func writeOut(_ bytes: UnsafeRawBufferPointer, naming: Bool) throws(FerryError) {
        if naming && plan.phase == .unnamed { try perform(plan.ops(for: .growing)) }
        do {
            try LocalFile.writeAll(fd, bytes, path: partPath)
        } catch {
            buffered = 0
            length = LocalFile.size(fd)
            throw error
        }
    }

    /// Asks the kernel to start writing what has accumulated since the last
    /// call, once that is `writebackChunk`; never waits for it.
    private func kickWriteback() {
        guard !isStream else { return }
        let done = written
        if done < writebackFrom { writebackFrom = done }
        guard done - writebackFrom >= PartFile.writebackChunk else { return }
        _ = OS.startWriteback(fd, offset: writebackFrom, length: done - writebackFrom)
        writebackFrom = done
    }

    /// Records that the bytes are a whole file as the server sent it (a transfer
    /// it reported complete, whose size a listing got wrong): the next attempt
    /// accepts them only if the server's size is exactly this, and never appends.
    func recordWholeFile() {
        journal.totalSize = length
        journal.unverifiable = nil
    }

    /// Writes the buffer, makes the bytes durable and records that in the journal.
    /// Called periodically and whenever an attempt ends without finishing.
    func checkpoint() {
        guard plan.isOpen else { return }
        // A checkpoint failing (disk full) loses nothing: the previous journal
        // stays valid, and the write path reports the disk error itself.
        try? perform(plan.ops(for: .checkpoint(length: length, durable: journal.durableLength)))
    }

    /// Starts making the file durable at the end of the attempt that completed it
    /// (engine thread, `DownloadAttempt.handOver`), when nothing is left for
    /// `finish` to check before the flush: the buffer went out and the size is
    /// what the server announced. The source's time is set first (on the flusher
    /// thread), as `finish` does. `then` runs on the flusher thread once the flush ended, and the
    /// driver's `finish` continues from its result. False, and `then` dropped,
    /// when `finish` is to do it all itself.
    func syncEarly(expectedSize: Int64?, then: @escaping @Sendable () -> Void) -> Bool {
        let ready = buffered == 0 && releaseError == nil && (expectedSize == nil || expectedSize == length)
        guard plan.ops(for: .handOver(ready: ready)) == [.syncOnFlusher] else { return false }
        // The time is parsed and set on the flusher thread: a metadata change can
        // wait for the file system's journal, which the engine thread must not
        // (the next file's request waits behind it; bench/RESULTS.md, "Issue 19,
        // branch hops").
        let fd = fd
        let modified = journal.modified
        Durability.shared.enqueue(
            fd: fd, size: length,
            prepare: { PartFile.stampSourceTime(modified, on: fd) },
            then: { error, modified in
                self.earlySync.withLock { $0 = (error, modified) }
                then()
            })
        return true
    }

    /// Sets the source's time (the journal's `modified`) on the open file; the
    /// time set, nil when the source gave none. The one place a download's file
    /// gets its time, early (`syncEarly`, on the flusher thread) or in `finish`.
    private static func stampSourceTime(_ modified: SourceTime?, on fd: Int32) -> Date? {
        let date = modified?.date
        if let date { LocalFile.setModificationTime(fd, date) }
        return date
    }

    /// Verifies the size, makes the data durable, and gives the file its final
    /// name atomically: the final name never holds bytes a power cut could lose.
    /// The source's time (`sourceModified`, when it gave one) is set on the open
    /// file before the flush: the file never shows under its name with the
    /// download's own time, the time is as durable as the bytes, and no path is
    /// looked up again for it.
    func finish(expectedSize: Int64?, overwrite: OverwritePolicy) async throws(FerryError) -> Int64 {
        let early = earlySync.withLock { e -> (error: Int32, modified: Date?)? in
            defer { e = nil }
            return e
        }
        if let early {
            // Verified, stamped and flushed already (`syncEarly`).
            sourceModified = early.modified
            if early.error != 0 {
                throw FerryError.posix(early.error, operation: "sync", path: isNamed ? partPath : destination)
            }
        } else if let error = releaseError {
            releaseError = nil
            throw error
        }
        let ops = plan.ops(for: .finish(replacing: overwrite == .overwrite, flushedEarly: early != nil))
        for op in ops {
            if op == .sync {
                try await Durability.shared.sync(fd: fd, size: length, path: isNamed ? partPath : destination)
            } else {
                try perform(op, expectedSize: expectedSize)
            }
            plan.did(op)
            if op == .writeBuffer {
                // Files waiting for their group commit hold no buffer.
                if let buffer { writeBufferPool.give(buffer) }
                buffer = nil
            }
        }
        return length
    }

    /// After a failure: bytes worth resuming stay under `NAME.part` with their
    /// journal; an empty file is just clutter.
    func settle() {
        guard plan.isOpen else { return }
        if !isStream && length > 0 { checkpoint() }
        // Each operation on its own: the file is closed whatever failed before.
        for op in plan.ops(for: .settle(written: written)) {
            try? perform(op, expectedSize: nil)
            plan.did(op)
        }
    }

    /// Closes the descriptor; the `.part` and journal stay for a later resume.
    func close() {
        if fd >= 0 {
            // A caller's descriptor stays open.
            if !isStream { OS.close(fd) }
            fd = -1
        }
    }
}

/// Write buffers of `PartFile.bufferSize`, kept for the next file: a fresh
/// 256 KiB allocation costs a page fault per 4 KiB touched, which dominated the
/// memory cost of downloading many small files.
let writeBufferPool = ReusePool<UnsafeMutableRawBufferPointer>(
    capacity: 16, make: { .allocate(byteCount: PartFile.bufferSize, alignment: 16) },
    discard: { $0.deallocate() })
