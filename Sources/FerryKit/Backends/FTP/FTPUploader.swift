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
///    `UploadBudget` (a download's `RetryBudget`): only bytes the server confirms
///    holding start a new row of failures. A server that took some bytes and then
///    refused the data connection (proftpd, "425 Unable to build data
///    connection") kept the upload retrying for ever before.
struct FTPUploader: Sendable {
    let fs: FTPFileSystem
    let source: String
    /// The destination, normalized.
    let path: String
    let options: UploadOptions
    let transfer: Transfer

    private var endpoint: FTPEndpoint { fs.endpoint }
    private var display: String { endpoint.display(path) }

    /// The temporary name an upload to `path` is written under.
    static func temporaryPath(for path: String) -> String {
        let parent = FTPEndpoint.parent(of: path)
        let name = "." + FTPEndpoint.name(of: path) + ".ferry-part"
        return parent == "/" ? "/" + name : parent + "/" + name
    }

    func run() async throws(FerryError) -> TransferResult {
        let started = ContinuousClock.now
        let (fd, size) = try UploadSteps.open(source, transfer: transfer)
        defer { OS.close(fd) }

        var tally = UploadBudget(maxRetries: options.maxRetries, retryDelay: options.retryDelay)
        let existing = try await tally.retrying(transfer) { () async throws(FerryError) in
            try await existingEntry(path)
        }
        if let skipped = try UploadSteps.decide(
            existing: existing, options: options, source: source, display: display, started: started)
        {
            return skipped
        }

        let info = try await tally.retrying(transfer) { () async throws(FerryError) in
            try await fs.serverInfo(for: "upload", path)
        }
        var resumedFrom: Int64 = 0
        if info.renameRefused {
            try await send(to: path, from: 0, fd: fd, size: size, tally: &tally)
        } else {
            let temporary = Self.temporaryPath(for: path)
            if options.resume {
                resumedFrom = try await tally.retrying(transfer) { () async throws(FerryError) in
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
        return UploadSteps.result(
            source: source, destination: display, size: size, resumedFrom: resumedFrom, budget: tally, started: started)
    }

    /// The destination's entry, or nil when there is none.
    private func existingEntry(_ p: String) async throws(FerryError) -> RemoteEntry? {
        try await UploadSteps.existing { () async throws(FerryError) in try await fs.entry(p) }
    }

    /// Renames the finished temporary file to the destination, retrying a dropped
    /// connection. A rename whose reply was lost may have happened already: then
    /// the temporary name is gone and the destination holds the file's size.
    private func rename(_ temporary: String, size: Int64, tally: inout UploadBudget) async throws(FerryError) {
        var tried = false
        try await tally.retrying(transfer) { () async throws(FerryError) in
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
        let tail = UploadSteps.tail(of: have)
        let job = FTPCommandJob(endpoint: endpoint, path: temporary, maxBody: tail.count)
        job.easy.set(CURLOPT_RANGE, "\(tail.lowerBound)-\(tail.upperBound)")
        let completion = await endpoint.engine.perform(job)
        guard completion.code == .ok, !completion.interrupted else { return 0 }
        return UploadSteps.tailMatches(job.body, fd: fd, have: have) ? have : 0
    }

    /// Sends the local file from `start` to `remote` (`UploadSteps.send`).
    private func send(to remote: String, from start: Int64, fd: Int32, size: Int64, tally: inout UploadBudget)
        async throws(FerryError)
    {
        let shown = endpoint.display(remote)
        try await UploadSteps.send(
            size: size, from: start, remote: shown, destination: display, engine: endpoint.engine,
            transfer: transfer, budget: &tally,
            makeJob: { from in
                FTPUploadJob(
                    endpoint: endpoint, path: remote, fd: fd, sourcePath: source, offset: from, size: size,
                    createParents: options.createParents, stallTimeout: options.stallTimeout, transfer: transfer)
            },
            failure: { completion, job in
                FerryError.ftp(completion, log: job.log, operation: "upload", target: shown)
            },
            continuation: { () async throws(FerryError) in try await continuation(of: remote, size: size) },
            storedLength: { () async throws(FerryError) in try await remoteLength(remote) })
    }

    /// Where to go on after an interruption: the server's size of `remote` when
    /// it can be continued, else 0 (STOR from the start replaces it).
    private func continuation(of remote: String, size: Int64) async throws(FerryError) -> Int64 {
        guard options.resume, let have = try await remoteLength(remote), have <= size else { return 0 }
        return have
    }
}
