import CSMBClient
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a listing said of a small file, standing in for `fstat` in its first
/// attempt from offset 0 (`ListedFacts`): libsmbclient keeps the size and times the open's
/// reply carries to itself, so asking costs one more request a file (bench/RESULTS.md,
/// "Issue 30: the SMB tree's extra request"). A file that changed since it was
/// listed is caught at the end (its length against the listed size) and fetched
/// again with `fstat`; a part of it left by a kill is at most `smallFile` bytes
/// started over, its validator being the listing's second, not `fstat`'s nanosecond.
struct SMBListedFacts: Sendable {
    let size: Int64
    let modified: SourceTime?

    /// Files up to this size go by their listing.
    static let smallFile: Int64 = 1 << 20

    init?(_ entry: RemoteEntry) {
        guard entry.kind == .file, let size = entry.size, size >= 0, size <= SMBListedFacts.smallFile,
            let t = entry.modified, t.zone == .utc
        else { return nil }
        self.size = size
        modified = .stamp(seconds: Int64(t.date().timeIntervalSince1970), nanoseconds: 0)
    }
}

/// One attempt of an SMB download, on a context's thread: `open` and `fstat` for
/// the file's size and time (or a small file's listing, `SMBListedFacts`), then
/// reads from the part's length.
///
/// The size and modification time (to the nanosecond, as the journal's
/// `@SECONDS.NANOSECONDS`) are the validators, as FTP's `SIZE` and `MDTM` are:
/// the same `SizeAndTimeDownloadDecision` compares them with the journal before the
/// first byte and starts the file over when either changed. The bytes go into
/// the shared `PartFile`; the driver (`DownloadDriver`) decides what follows.
enum SMBDownloadAttempt {
    /// Bytes asked for per read: libsmbclient splits it into the server's largest
    /// reads and keeps several in flight.
    static let chunk = 4 << 20

    /// The source the driver asks for attempts: one per file.
    /// `listed` stands in for `fstat` in the first attempt from offset 0 only.
    static func source(fs: SMBFileSystem, path: String, listed: ListedFacts<SMBListedFacts>?) -> DownloadSource {
        let display = fs.shown(path)
        return DownloadSource(displayName: display) { offset, part, transfer, options in
            let stop = StopFlag()
            transfer.setInterrupter { stop.set() }
            defer { transfer.setInterrupter(nil) }
            let facts = listed?.forAttempt(from: offset)
            return await fs.server.holding { connection in
                let attempt = SMBDownloadAttempt.Attempt(
                    path: path, display: display, offset: offset, part: part, transfer: transfer, stop: stop,
                    listed: facts)
                return await attempt.run(on: connection)
            }
        }
    }

    /// One attempt's state, used by one job at a time on the context's thread
    /// (each job awaited before the next), which makes `@unchecked Sendable` safe.
    final class Attempt: @unchecked Sendable {
        let path: String
        let display: String
        let offset: Int64
        let part: PartFile
        let transfer: Transfer
        let stop: StopFlag
        private var state: ChunkedAttempt
        private var file: OpaquePointer?
        private var report: AttemptReport? { state.report }
        /// The file's size as `fstat` (or the listing) said when it was opened.
        private var expectedSize: Int64?
        private let listed: SMBListedFacts?
        private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)

        init(
            path: String, display: String, offset: Int64, part: PartFile, transfer: Transfer, stop: StopFlag,
            listed: SMBListedFacts?
        ) {
            self.path = path
            self.display = display
            self.offset = offset
            self.part = part
            self.transfer = transfer
            self.stop = stop
            self.listed = listed
            state = ChunkedAttempt(
                decision: SizeAndTimeDownloadDecision(
                    offset: offset, journal: part.journal, listedSize: listed?.size, skipsTimeCheck: listed != nil,
                    display: display),
                part: part, transfer: transfer, offset: offset)
        }

        deinit { buffer.deallocate() }

        /// Opens the file, then reads one chunk per job until the attempt ends.
        func run(on connection: SMBConnection) async -> AttemptReport {
            // One job per read; the first also opens, the last also closes: a
            // small file is one job, one hand-over to the context's thread.
            do throws(FerryError) {
                repeat {
                    try await connection.run { smb throws(FerryError) in
                        if self.file == nil && self.report == nil { self.open(smb) }
                        if self.report == nil { self.read(smb) }
                        if self.report != nil { self.close(smb) }
                    }
                } while report == nil
            } catch {
                if report == nil { end(.failed(error)) }
            }
            if file != nil { try? await connection.run { smb throws(FerryError) in self.close(smb) } }
            return report!
        }

        private func end(_ ending: SizeAndTimeDownloadDecision.Ending) { state.end(ending) }

        private func failed(_ smb: SMBContext, _ code: Int32) {
            end(.failed(smb.error(code, operation: "download", target: display, path: path)))
        }

        private func open(_ smb: SMBContext) {
            if stop.isSet { return end(.interrupted) }
            let c: SMBHandle
            do {
                c = try smb.context(operation: "download", target: display)
            } catch {
                return end(.failed(error))
            }
            guard let f = ferry_smb_open(c, smb.wire(path), O_RDONLY, 0) else { return failed(smb, errno) }
            file = f
            let facts: SizeAndTimeDownloadDecision.Facts
            if let listed {
                facts = .init(size: listed.size, modified: listed.modified)
            } else {
                var st = OS.FileStatus()
                guard ferry_smb_fstat(c, f, &st) == 0 else { return failed(smb, errno) }
                if (st.st_mode & S_IFMT) == S_IFDIR {
                    return end(
                        .failed(
                            FerryError(
                                .localIO, operation: "download", target: display, detail: "is a folder; name a file")
                        ))
                }
                let time = OS.modificationTime(st)
                facts = .init(
                    size: Int64(st.st_size),
                    modified: time.seconds > 0
                        ? .stamp(seconds: Int64(time.seconds), nanoseconds: Int64(time.nanoseconds)) : nil)
            }
            expectedSize = facts.size
            guard let from = state.head(facts) else { return }
            if from > 0 && ferry_smb_lseek(c, f, off_t(from), SEEK_SET) < 0 { return failed(smb, errno) }
        }

        /// One read of up to `chunk` bytes into the part.
        private func read(_ smb: SMBContext) {
            if stop.isSet { return end(.interrupted) }
            guard let f = file, let c = try? smb.context(operation: "download", target: display) else {
                return end(.interrupted)
            }
            let n = ferry_smb_read(c, f, buffer.baseAddress, chunk)
            if n < 0 { return failed(smb, errno) }
            if n == 0 { return end(.ok(length: part.length)) }
            guard state.write(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) else { return }
            // All the bytes `fstat` announced: no read more to hear the end (one round trip
            // a file); the driver checks the size again before the rename. By a listing,
            // only a short read says the file ends there (it may have grown since).
            if let size = expectedSize, part.length >= size, listed == nil || n < chunk {
                end(.ok(length: part.length))
            }
        }

        private func close(_ smb: SMBContext) {
            if let f = file, let c = try? smb.context(operation: "download", target: display) {
                ferry_smb_close(c, f)
            }
            file = nil
        }
    }
}
