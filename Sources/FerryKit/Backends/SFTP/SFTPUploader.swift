import CCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One attempt of an SFTP upload: the whole file, or (`CURLOPT_APPEND`) the rest
/// from `offset` onto what the server holds.
final class SFTPUploadJob: LocalFileUploadJob, @unchecked Sendable {
    private(set) var hostKeys: HostKeyCheck?

    init(
        endpoint: SFTPEndpoint, method: SSHLogin.Method, path: String, fd: Int32, sourcePath: String, offset: Int64,
        size: Int64, createParents: Bool, stallTimeout: Duration, transfer: Transfer
    ) {
        super.init(
            hostKey: endpoint.hostKey, tlsSessionCache: endpoint.connectionCache, fd: fd, sourcePath: sourcePath,
            offset: offset, size: size, transfer: transfer)
        hostKeys = endpoint.configure(easy, path: path, method: method, stallTimeout: stallTimeout)
        easy.set(CURLOPT_UPLOAD, 1)
        easy.set(CURLOPT_INFILESIZE_LARGE, large: size - offset)
        if offset > 0 { easy.set(CURLOPT_APPEND, 1) }
        if createParents { easy.set(CURLOPT_FTP_CREATE_MISSING_DIRS, Int(CURLFTP_CREATE_DIR_RETRY.rawValue)) }
    }
}

/// Drives one SFTP upload (DESIGN.md, "Transfers: the contract"), as
/// `FTPUploader` does for FTP:
///
/// 1. The overwrite policy decides first (`stat` of the destination).
/// 2. The bytes go to `.NAME.ferry-part` beside the destination, then `rename`
///    puts it in place (SFTP's rename does not replace a file: an existing
///    destination the policy allows to replace is removed just before).
/// 3. An interrupted upload (pause, dropped connection, an earlier run) goes on
///    by appending from the size the server holds, after checking that its last
///    bytes are the local file's.
/// 4. Every step (the checks, the transfers, the rename) draws on one
///    `UploadBudget`, a download's `RetryBudget`: a server that refuses or drops
///    every write ends the upload after `maxRetries` tries in a row, and only
///    bytes the server confirms holding start a new row.
struct SFTPUploader: Sendable {
    let fs: SFTPFileSystem
    let source: String
    let path: String
    let options: UploadOptions
    let transfer: Transfer

    private var endpoint: SFTPEndpoint { fs.endpoint }
    private var display: String { endpoint.display(path) }

    func run() async throws(FerryError) -> TransferResult {
        let started = ContinuousClock.now
        let (fd, size) = try UploadSteps.open(source, transfer: transfer)
        defer { OS.close(fd) }
        let method = try await fs.loginMethod(for: "upload", path)

        var budget = UploadBudget(maxRetries: options.maxRetries, retryDelay: options.retryDelay)
        let existing = try await budget.retrying(transfer) { () async throws(FerryError) in
            try await existingEntry(path)
        }
        if let skipped = try UploadSteps.decide(
            existing: existing, options: options, source: source, display: display, started: started)
        {
            return skipped
        }
        let temporary = FTPUploader.temporaryPath(for: path)
        var resumedFrom: Int64 = 0
        if options.resume {
            resumedFrom = try await budget.retrying(transfer) { () async throws(FerryError) in
                try await resumableLength(of: temporary, fd: fd, size: size, method: method)
            }
        }
        if resumedFrom > 0 {
            transfer.report(bytesDone: resumedFrom, totalBytes: size, resumedFrom: resumedFrom, force: true)
        }
        try await send(to: temporary, from: resumedFrom, fd: fd, size: size, method: method, budget: &budget)
        try await budget.retrying(transfer) { () async throws(FerryError) in
            try await fs.rename(temporary, path, operation: "upload", replacing: existing != nil)
        }
        return UploadSteps.result(
            source: source, destination: display, size: size, resumedFrom: resumedFrom, budget: budget, started: started
        )
    }

    private func existingEntry(_ p: String) async throws(FerryError) -> RemoteEntry? {
        try await UploadSteps.existing { () async throws(FerryError) in try await fs.entry(p) }
    }

    /// How much of a temporary file left by an earlier upload can be kept: its
    /// size, when no more than the local file's and its last bytes match.
    private func resumableLength(of temporary: String, fd: Int32, size: Int64, method: SSHLogin.Method)
        async throws(FerryError) -> Int64
    {
        guard let have = try await existingEntry(temporary)?.size, have > 0, have <= size else { return 0 }
        let tail = UploadSteps.tail(of: have)
        let job = SFTPCommandJob(endpoint: endpoint, path: temporary, method: method, maxBody: tail.count)
        job.easy.set(CURLOPT_RANGE, "\(tail.lowerBound)-\(tail.upperBound)")
        let completion = await endpoint.engine.perform(job)
        guard completion.code == .ok, !completion.interrupted else { return 0 }
        return UploadSteps.tailMatches(job.body, fd: fd, have: have) ? have : 0
    }

    /// Sends the file from `start` to `remote` (`UploadSteps.send`).
    private func send(
        to remote: String, from start: Int64, fd: Int32, size: Int64, method: SSHLogin.Method,
        budget: inout UploadBudget
    ) async throws(FerryError) {
        let shown = endpoint.display(remote)
        try await UploadSteps.send(
            size: size, from: start, remote: shown, destination: display, engine: endpoint.engine,
            transfer: transfer, budget: &budget,
            makeJob: { from in
                SFTPUploadJob(
                    endpoint: endpoint, method: method, path: remote, fd: fd, sourcePath: source, offset: from,
                    size: size, createParents: options.createParents, stallTimeout: options.stallTimeout,
                    transfer: transfer)
            },
            failure: { completion, job in
                var failure = FerryError.sftp(
                    completion, hostKeys: job.hostKeys, operation: "upload", target: shown, login: endpoint.login)
                if completion.code == .ssh {
                    // libcurl 7.88 reports a refused SFTP write without the status.
                    failure.detail =
                        "the server stopped taking the file (a full disk or quota, or the connection dropped)"
                }
                return failure
            },
            continuation: { () async throws(FerryError) in
                let have = options.resume ? try await existingEntry(remote)?.size ?? 0 : 0
                return have <= size ? have : 0
            },
            storedLength: { () async throws(FerryError) in try await existingEntry(remote)?.size ?? 0 })
    }
}
