import CSMBClient
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// SMB's steps for the shared upload driver (`ResumableUpload`: the overwrite
/// decision, `.NAME.ferry-part` then rename, resume after a tail compare, one
/// retry budget). The bytes go one job per 4 MiB write on one context's thread
/// (`Sender`), the file then gets the local file's modification time (so a
/// re-run sees the same size and time), and its size is checked.
struct SMBUploadTarget: UploadTarget {
    let fs: SMBFileSystem

    func display(_ path: String) -> String { fs.shown(path) }

    func entry(_ path: String) async throws(FerryError) -> RemoteEntry { try await fs.stat(path) }

    func read(_ path: String, range: ClosedRange<Int64>) async -> [UInt8]? {
        guard let data = try? await fs.data(at: path, range: range.lowerBound..<(range.upperBound + 1)) else {
            return nil
        }
        return [UInt8](data)
    }

    func rename(_ temporary: String, to path: String, replacing: Bool) async throws(FerryError) {
        let target = fs.shown(path)
        try await fs.run(
            { smb, c throws(FerryError) in
                try SMBFileSystem.rename(
                    smb, c, temporary, path, replacing: replacing, operation: "upload", target: target)
            }, operation: "upload", path: path)
    }

    func remove(_ temporary: String) async { try? await fs.delete(temporary) }

    func send(to remote: String, from start: Int64, _ upload: UploadSource, budget: inout UploadBudget)
        async throws(FerryError)
    {
        var st = OS.FileStatus()
        fstat(upload.fd, &st)
        let mtime = OS.modificationTime(st)
        let target = fs.shown(remote)
        let transfer = upload.transfer
        var offset = start
        budget.startsAt(offset)
        while true {
            try await transfer.waitWhilePaused()
            let stop = StopFlag()
            transfer.setInterrupter { stop.set() }
            let from = offset
            let sent = await fs.server.holding { connection in
                let sender = SMBUploader.Sender(
                    fd: upload.fd, source: upload.source, size: upload.size, from: from, remote: remote,
                    mtime: mtime, createParents: upload.options.createParents, target: target, transfer: transfer,
                    stop: stop)
                return await sender.run(on: connection)
            }
            transfer.setInterrupter(nil)
            budget.sent += sent.bytes
            if stop.isSet {
                if transfer.isCancelled {
                    throw FerryError(.cancelled, operation: "upload", target: upload.destination)
                }
            } else if let failure = sent.failure {
                guard failure.isTransient else { throw failure }
                try await budget.backOff(after: failure, transfer)
            } else {
                budget.serverHolds(upload.size)
                return
            }
            // Go on from what the server kept.
            offset = try await budget.retrying(transfer) { () async throws(FerryError) in
                guard upload.options.resume, let have = try await UploadSteps.remoteLength(remote, of: self),
                    have <= upload.size
                else { return 0 }
                return have
            }
            budget.serverHolds(offset)
        }
    }
}

/// The transfer step of an SMB upload.
enum SMBUploader {
    /// Writes the local file from `from` to `remote`, one job per chunk on one
    /// context's thread, then gives it the local file's time and checks its
    /// size. Used by one job at a time (each awaited before the next), which
    /// makes `@unchecked Sendable` safe.
    final class Sender: @unchecked Sendable {
        let fd: Int32
        let source: String
        let size: Int64
        let remote: String
        let mtime: (seconds: Int64, nanoseconds: Int64)
        let createParents: Bool
        let target: String
        let transfer: Transfer
        let stop: StopFlag
        private var offset: Int64
        private var sent: Int64 = 0
        private var file: OpaquePointer?
        private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: SMBDownloadAttempt.chunk, alignment: 16)

        init(
            fd: Int32, source: String, size: Int64, from: Int64, remote: String,
            mtime: (seconds: Int64, nanoseconds: Int64), createParents: Bool, target: String, transfer: Transfer,
            stop: StopFlag
        ) {
            self.fd = fd
            self.source = source
            self.size = size
            offset = from
            self.remote = remote
            self.mtime = mtime
            self.createParents = createParents
            self.target = target
            self.transfer = transfer
            self.stop = stop
        }

        deinit { buffer.deallocate() }

        /// The bytes sent, and how it failed (nil: done, or stopped when `stop` is set).
        func run(on connection: SMBConnection) async -> (bytes: Int64, failure: FerryError?) {
            do throws(FerryError) {
                try await connection.run { smb throws(FerryError) in try self.open(smb) }
                while offset < size && !stop.isSet {
                    try await connection.run { smb throws(FerryError) in try self.write(smb) }
                }
                if stop.isSet {
                    try? await connection.run { smb throws(FerryError) in self.closeQuietly(smb) }
                    return (sent, nil)
                }
                try await connection.run { smb throws(FerryError) in try self.finish(smb) }
                return (sent, nil)
            } catch {
                try? await connection.run { smb throws(FerryError) in self.closeQuietly(smb) }
                return (sent, error)
            }
        }

        private func fail(_ smb: SMBContext, _ code: Int32) -> FerryError {
            smb.error(code, operation: "upload", target: target, path: remote)
        }

        private func open(_ smb: SMBContext) throws(FerryError) {
            let c = try smb.context(operation: "upload", target: target)
            let url = smb.wire(remote)
            let flags = O_WRONLY | O_CREAT | (offset == 0 ? O_TRUNC : 0)
            file = ferry_smb_open(c, url, flags, 0o644)
            if file == nil && errno == ENOENT && createParents {
                try SMBFileSystem.makeDirectory(
                    smb, c, RemotePath.parent(of: remote), createParents: true, target: target)
                file = ferry_smb_open(c, url, flags, 0o644)
            }
            guard let f = file else { throw fail(smb, errno) }
            if offset > 0 && ferry_smb_lseek(c, f, off_t(offset), SEEK_SET) < 0 { throw fail(smb, errno) }
        }

        private func write(_ smb: SMBContext) throws(FerryError) {
            let c = try smb.context(operation: "upload", target: target)
            guard let f = file else { throw fail(smb, EBADF) }
            let n = pread(fd, buffer.baseAddress, min(buffer.count, Int(size - offset)), off_t(offset))
            if n < 0 { throw FerryError.posix(errno, operation: "read", path: source) }
            if n == 0 {
                throw FerryError(
                    .localIO, operation: "upload", target: source,
                    detail: "the file got shorter while it was sent (\(offset) of \(size) bytes)")
            }
            var done = 0
            while done < n {
                let w = ferry_smb_write(c, f, buffer.baseAddress! + done, n - done)
                if w <= 0 { throw fail(smb, errno) }
                done += w
                sent += Int64(w)
            }
            offset += Int64(n)
            transfer.report(bytesDone: offset, totalBytes: size)
        }

        /// Closes (where the server reports a write it could not finish), sets
        /// the time (a server that cannot keeps its own; a re-run then uploads
        /// again) and checks the size.
        private func finish(_ smb: SMBContext) throws(FerryError) {
            let c = try smb.context(operation: "upload", target: target)
            let url = smb.wire(remote)
            if let f = file {
                file = nil
                guard ferry_smb_close(c, f) == 0 else { throw fail(smb, errno) }
            } else {
                // Nothing to send (an empty file): make it.
                guard let f = ferry_smb_open(c, url, O_WRONLY | O_CREAT | O_TRUNC, 0o644) else {
                    throw fail(smb, errno)
                }
                ferry_smb_close(c, f)
            }
            _ = ferry_smb_utimes(c, url, Int(mtime.seconds), Int(mtime.nanoseconds / 1000))
            var st = OS.FileStatus()
            guard ferry_smb_stat(c, url, &st) == 0 else { throw fail(smb, errno) }
            if Int64(st.st_size) != size {
                throw FerryError(
                    .verificationFailed, operation: "upload", target: target,
                    detail: "the server holds \(st.st_size) of \(size) bytes", isTransient: Int64(st.st_size) < size)
            }
        }

        private func closeQuietly(_ smb: SMBContext) {
            if let f = file, let c = try? smb.context(operation: "upload", target: target) { ferry_smb_close(c, f) }
            file = nil
        }
    }
}
