import CCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Drives one FTP upload (docs/DESIGN.md, "Transfers: the contract"):
///
/// 1. The overwrite policy decides first (`stat` of the destination).
/// 2. The bytes go to `.NAME.ferry-part` beside the destination, so the final
///    name never shows a half-written file, then `RNFR`/`RNTO` puts it in place.
///    A server that refuses the rename gets the file straight under its name
///    (remembered for the rest of the process).
/// 3. An interrupted upload (pause, dropped connection, an earlier run) goes on
///    with `APPE` from the size the server reports, after checking that the last
///    bytes it holds are the local file's.
/// 4. A dropped or reset control connection is retried in every step: the checks
///    before and after the transfer and the rename as much as the transfer itself
///    (one reset there used to fail the whole upload). Every step draws on one
///    budget: `maxRetries` failures in a row, and only bytes the server confirms
///    holding (more than ever before) start a new row. Bytes merely handed to
///    the network do not: a server that took some and then refused the data
///    connection (proftpd, "425 Unable to build data connection") kept the
///    upload retrying for ever.
struct FTPUploader: Sendable {
    let fs: FTPFileSystem
    let source: String
    /// The destination, normalized.
    let path: String
    let options: UploadOptions
    let transfer: Transfer

    /// How many bytes at the end of a leftover temporary file are compared with
    /// the local file before appending to it.
    static let tailCheckLength: Int64 = 64 << 10

    private var endpoint: FTPEndpoint { fs.endpoint }
    private var display: String { endpoint.display(path) }

    /// The temporary name an upload to `path` is written under.
    static func temporaryPath(for path: String) -> String {
        let parent = FTPEndpoint.parent(of: path)
        let name = "." + FTPEndpoint.name(of: path) + ".ferry-part"
        return parent == "/" ? "/" + name : parent + "/" + name
    }

    /// The upload's retry budget and byte counts, shared by every step.
    private struct Tally {
        /// Bytes handed to the network by every attempt, retried ones included.
        var sent: Int64 = 0
        /// Failed tries that were retried.
        var retries = 0
        /// Failed tries since the server last confirmed more bytes than before.
        var failuresInRow = 0
        /// The most bytes of the file being sent the server has confirmed holding.
        var confirmed: Int64 = 0

        /// Counts a failed try; throws it (saying how many) when the budget is spent.
        mutating func spend(_ failure: FerryError, maxRetries: Int) throws(FerryError) {
            failuresInRow += 1
            guard failuresInRow <= maxRetries else {
                var e = failure
                e.detail = [e.detail, "gave up after \(failuresInRow) tries"].compactMap { $0 }.joined(separator: "; ")
                throw e
            }
            retries += 1
        }

        /// The server holds `length` bytes: progress when more than ever before.
        mutating func serverHolds(_ length: Int64) -> Bool {
            guard length > confirmed else { return false }
            confirmed = length
            failuresInRow = 0
            return true
        }
    }

    func run() async throws(FerryError) -> TransferResult {
        let started = ContinuousClock.now
        if LocalFile.isDirectory(source) {
            throw FerryError(.localIO, operation: "upload", target: source, detail: "is a folder; name a file")
        }
        let fd = try LocalFile.openForReading(source)
        defer { OS.close(fd) }
        let size = LocalFile.size(fd)
        transfer.report(bytesDone: 0, totalBytes: size, force: true)

        var tally = Tally()
        if let existing = try await retrying(&tally, { () async throws(FerryError) in try await existingEntry(path) }) {
            if existing.isDirectory {
                throw FerryError(
                    .destinationExists, operation: "upload", target: display, detail: "a folder has that name")
            }
            switch options.overwrite {
            case .fail:
                throw FerryError(
                    .destinationExists, operation: "upload", target: display,
                    recovery: .replaceOrKeep)
            case .skip:
                return TransferResult(
                    source: source, destination: display, size: existing.size ?? 0, bytesTransferred: 0,
                    skipped: true, duration: .now - started)
            case .overwrite:
                break
            }
        }

        let info = try await retrying(&tally) { () async throws(FerryError) in
            try await fs.serverInfo(for: "upload", path)
        }
        var resumedFrom: Int64 = 0
        if info.renameRefused {
            try await send(to: path, from: 0, fd: fd, size: size, tally: &tally)
        } else {
            let temporary = Self.temporaryPath(for: path)
            if options.resume {
                resumedFrom = try await retrying(&tally) { () async throws(FerryError) in
                    try await resumableLength(of: temporary, fd: fd, size: size)
                }
            }
            if resumedFrom > 0 {
                transfer.report(bytesDone: resumedFrom, totalBytes: size, resumedFrom: resumedFrom, force: true)
            }
            do {
                try await send(to: temporary, from: resumedFrom, fd: fd, size: size, tally: &tally)
            } catch  where error.code == .cancelled && transfer.discardsPartialData {
                await discard(temporary)
                throw error
            }
            do {
                try await rename(temporary, size: size, tally: &tally)
            } catch  where error.serverCode != nil && !error.isTransient {
                // The server will not rename (no permission for it, or it does not
                // replace an existing file that way): store under the final name.
                FTPServerInfoCache.shared.update(endpoint.serverKey) { $0.renameRefused = true }
                let temp = FTPEndpoint.serverPath(temporary, entryPath: info.entryPath)
                _ = try? await endpoint.quote(["DELE " + temp], operation: "upload", path: temporary)
                resumedFrom = 0
                try await send(to: path, from: 0, fd: fd, size: size, tally: &tally)
            }
        }
        // Bytes this upload moved into the file, and apart from them every byte it
        // sent: after three tries of 300,000 bytes, 300,000 and 900,000.
        var result = TransferResult(
            source: source, destination: display, size: size, bytesTransferred: size - resumedFrom,
            resumedFrom: resumedFrom, retries: tally.retries, duration: .now - started)
        result.bytesSent = tally.sent
        return result
    }

    /// The destination's entry, or nil when there is none.
    private func existingEntry(_ p: String) async throws(FerryError) -> RemoteEntry? {
        do {
            return try await fs.entry(p)
        } catch  where error.code == .notFound {
            return nil
        }
    }

    /// Runs a step on the control connection, retrying transient failures (a
    /// dropped or reset connection) from the upload's retry budget, with back-off.
    private func retrying<T>(_ tally: inout Tally, _ step: () async throws(FerryError) -> T) async throws(FerryError)
        -> T
    {
        var delay = options.retryDelay
        while true {
            do {
                return try await step()
            } catch {
                guard error.isTransient else { throw error }
                try tally.spend(error, maxRetries: options.maxRetries)
                try await transfer.backOff(&delay)
            }
        }
    }

    /// Renames the finished temporary file to the destination, retrying a dropped
    /// connection. A rename whose reply was lost may have happened already: then
    /// the temporary name is gone and the destination holds the file's size.
    private func rename(_ temporary: String, size: Int64, tally: inout Tally) async throws(FerryError) {
        var tried = false
        try await retrying(&tally) { () async throws(FerryError) in
            if tried, try await existingEntry(temporary) == nil {
                if try await existingEntry(path)?.size == size { return }
                throw FerryError(
                    .protocolError, operation: "upload", target: display,
                    detail: "the temporary file \(FTPEndpoint.name(of: temporary)) vanished before the rename; "
                        + "upload again")
            }
            tried = true
            try await fs.rename(temporary, path, operation: "upload")
        }
    }

    /// Bytes the server holds of `remote` (0 when it does not exist), nil when it
    /// cannot tell.
    private func remoteLength(_ remote: String) async throws(FerryError) -> Int64? {
        guard let entry = try await existingEntry(remote) else { return 0 }
        return entry.size
    }

    /// How much of a temporary file left by an earlier upload can be kept: its size,
    /// when that is no more than the local file's and its last bytes match.
    private func resumableLength(of temporary: String, fd: Int32, size: Int64) async throws(FerryError) -> Int64 {
        guard let have = try await remoteLength(temporary), have > 0, have <= size else { return 0 }
        let n = min(have, Self.tailCheckLength)
        let job = FTPCommandJob(endpoint: endpoint, path: temporary, maxBody: Int(n))
        job.easy.set(CURLOPT_RANGE, "\(have - n)-\(have - 1)")
        let completion = await endpoint.engine.perform(job)
        guard completion.code == .ok, !completion.interrupted, Int64(job.body.count) == n else { return 0 }
        var local = [UInt8](repeating: 0, count: Int(n))
        let got = local.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, Int(n), off_t(have - n)) }
        guard got == n, local == job.body else { return 0 }
        return have
    }

    /// Sends the local file from `start` to `remote`, retrying transient failures
    /// and continuing after a pause or a failure from what the server holds. A
    /// failure of the checks around a transfer (the size the server holds) counts
    /// as a failed try like the transfer's own.
    private func send(to remote: String, from start: Int64, fd: Int32, size: Int64, tally: inout Tally)
        async throws(FerryError)
    {
        let display = endpoint.display(remote)
        // nil: ask the server how much of `remote` it holds.
        var offset: Int64? = start
        tally.confirmed = start
        var delay = options.retryDelay
        while true {
            try await transfer.waitWhilePaused()
            var failure: FerryError
            do throws(FerryError) {
                let from: Int64
                if let offset {
                    from = offset
                } else {
                    from = try await continuation(of: remote, size: size)
                    // Progress only as the server counts it: the row of failures
                    // and the back-off start over.
                    if tally.serverHolds(from) { delay = options.retryDelay }
                }
                offset = from
                if from == size && size > 0 {
                    // Everything is already there (a leftover that was complete, or a
                    // transfer whose check failed).
                    _ = tally.serverHolds(size)
                    return
                }
                let job = FTPUploadJob(
                    endpoint: endpoint, path: remote, fd: fd, sourcePath: source, offset: from, size: size,
                    createParents: options.createParents, stallTimeout: options.stallTimeout, transfer: transfer)
                let engine = endpoint.engine
                transfer.setInterrupter { engine.interrupt(job) }
                let completion = await engine.perform(job)
                transfer.setInterrupter(nil)
                tally.sent += job.bytesSent
                if let readError = job.readError { throw readError }

                if completion.interrupted {
                    if transfer.isCancelled {
                        throw FerryError(.cancelled, operation: "upload", target: self.display)
                    }
                    // Paused: once resumed, go on from what the server kept.
                    offset = nil
                    continue
                }
                if completion.code == .ok {
                    // Check what arrived: a dropped data connection can look like success
                    // (and libcurl 7.88 + vsftpd over TLS 1.3 has stored 0 bytes that way).
                    let stored = try await remoteLength(remote)
                    guard let stored, stored != size else {
                        // All there: the steps after (the rename) get a row of their own.
                        _ = tally.serverHolds(size)
                        return
                    }
                    if stored > size {
                        throw FerryError(
                            .verificationFailed, operation: "upload", target: display,
                            detail: "the server holds \(stored) bytes, the file has \(size)")
                    }
                    failure = FerryError(
                        .verificationFailed, operation: "upload", target: display,
                        detail: "the server holds \(stored) of \(size) bytes", isTransient: true)
                } else {
                    failure = FerryError.ftp(completion, log: job.log, operation: "upload", target: display)
                }
            } catch {
                failure = error
            }
            guard failure.isTransient else { throw failure }
            try tally.spend(failure, maxRetries: options.maxRetries)
            try await transfer.backOff(&delay)
            offset = nil
        }
    }

    /// Where to go on after an interruption: the server's size of `remote` when
    /// it can be continued, else 0 (STOR from the start replaces it).
    private func continuation(of remote: String, size: Int64) async throws(FerryError) -> Int64 {
        guard options.resume, let have = try await remoteLength(remote), have <= size else { return 0 }
        return have
    }
}
