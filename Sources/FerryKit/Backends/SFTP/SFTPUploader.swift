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
            hostKey: endpoint.hostKey, fd: fd, sourcePath: sourcePath, offset: offset, size: size, transfer: transfer)
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
        if LocalFile.isDirectory(source) {
            throw FerryError(.localIO, operation: "upload", target: source, detail: "is a folder; name a file")
        }
        let fd = try LocalFile.openForReading(source)
        defer { OS.close(fd) }
        let size = LocalFile.size(fd)
        transfer.report(bytesDone: 0, totalBytes: size, force: true)
        let method = try await fs.loginMethod(for: "upload", path)

        let existing = try await retrying { () async throws(FerryError) in try await existingEntry(path) }
        if let existing {
            if existing.isDirectory {
                throw FerryError(
                    .destinationExists, operation: "upload", target: display, detail: "a folder has that name")
            }
            switch options.overwrite {
            case .fail:
                throw FerryError(
                    .destinationExists, operation: "upload", target: display, recovery: .replaceOrKeep)
            case .skip:
                return TransferResult(
                    source: source, destination: display, size: existing.size ?? 0, bytesTransferred: 0,
                    skipped: true, duration: .now - started)
            case .overwrite:
                break
            }
        }
        let temporary = FTPUploader.temporaryPath(for: path)
        var resumedFrom: Int64 = 0
        if options.resume {
            resumedFrom = try await retrying { () async throws(FerryError) in
                try await resumableLength(of: temporary, fd: fd, size: size, method: method)
            }
        }
        if resumedFrom > 0 {
            transfer.report(bytesDone: resumedFrom, totalBytes: size, resumedFrom: resumedFrom, force: true)
        }
        var sent: Int64 = 0
        var retries = 0
        try await send(
            to: temporary, from: resumedFrom, fd: fd, size: size, method: method, sent: &sent, retries: &retries)
        try await retrying { () async throws(FerryError) in
            try await fs.rename(temporary, path, operation: "upload", replacing: existing != nil)
        }
        return TransferResult(
            source: source, destination: display, size: size, bytesTransferred: sent, resumedFrom: resumedFrom,
            retries: retries, duration: .now - started)
    }

    private func existingEntry(_ p: String) async throws(FerryError) -> RemoteEntry? {
        do {
            return try await fs.entry(p)
        } catch  where error.code == .notFound {
            return nil
        }
    }

    private func retrying<T>(_ step: () async throws(FerryError) -> T) async throws(FerryError) -> T {
        var tries = 0
        var delay = options.retryDelay
        while true {
            do {
                return try await step()
            } catch  where error.isTransient && tries < options.maxRetries {
                tries += 1
                try await transfer.backOff(&delay)
            }
        }
    }

    /// How much of a temporary file left by an earlier upload can be kept: its
    /// size, when no more than the local file's and its last bytes match.
    private func resumableLength(of temporary: String, fd: Int32, size: Int64, method: SSHLogin.Method)
        async throws(FerryError) -> Int64
    {
        guard let have = try await existingEntry(temporary)?.size, have > 0, have <= size else { return 0 }
        let n = min(have, FTPUploader.tailCheckLength)
        let job = SFTPCommandJob(endpoint: endpoint, path: temporary, method: method, maxBody: Int(n))
        job.easy.set(CURLOPT_RANGE, "\(have - n)-\(have - 1)")
        let completion = await endpoint.engine.perform(job)
        guard completion.code == .ok, !completion.interrupted, Int64(job.body.count) == n else { return 0 }
        var local = [UInt8](repeating: 0, count: Int(n))
        let got = local.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, Int(n), off_t(have - n)) }
        guard got == n, local == job.body else { return 0 }
        return have
    }

    /// Sends the file from `start` to `remote`, retrying transient failures and
    /// going on after a pause or a failure from what the server holds.
    private func send(
        to remote: String, from start: Int64, fd: Int32, size: Int64, method: SSHLogin.Method,
        sent: inout Int64, retries: inout Int
    ) async throws(FerryError) {
        let shown = endpoint.display(remote)
        var offset: Int64? = start
        // Progress is what the server holds, not what libcurl took: a server that
        // refuses every write (a full disk) takes bytes and stores none.
        var held = start
        var failuresInRow = 0
        var delay = options.retryDelay
        while true {
            try await transfer.waitWhilePaused()
            var failure: FerryError
            do throws(FerryError) {
                let from: Int64
                if let offset {
                    from = offset
                } else {
                    let have = options.resume ? try await existingEntry(remote)?.size ?? 0 : 0
                    from = have <= size ? have : 0
                }
                offset = from
                if from == size && size > 0 { return }
                if from > held {
                    held = from
                    failuresInRow = 0
                    delay = options.retryDelay
                }
                let job = SFTPUploadJob(
                    endpoint: endpoint, method: method, path: remote, fd: fd, sourcePath: source, offset: from,
                    size: size, createParents: options.createParents, stallTimeout: options.stallTimeout,
                    transfer: transfer)
                let engine = endpoint.engine
                transfer.setInterrupter { engine.interrupt(job) }
                let completion = await engine.perform(job)
                transfer.setInterrupter(nil)
                sent += job.bytesSent
                if let readError = job.readError { throw readError }
                if completion.interrupted {
                    if transfer.isCancelled { throw FerryError(.cancelled, operation: "upload", target: display) }
                    offset = nil
                    continue
                }
                if completion.code == .ok {
                    let stored = try await existingEntry(remote)?.size ?? 0
                    if stored == size { return }
                    failure = FerryError(
                        .verificationFailed, operation: "upload", target: shown,
                        detail: "the server holds \(stored) of \(size) bytes", isTransient: stored < size)
                    if stored > size { offset = 0 }
                } else {
                    failure = .sftp(
                        completion, hostKeys: job.hostKeys, operation: "upload", target: shown, login: endpoint.login)
                    if completion.code == .ssh {
                        // libcurl 7.88 reports a refused SFTP write without the status.
                        failure.detail =
                            "the server stopped taking the file (a full disk or quota, or the connection dropped)"
                    }
                }
            } catch {
                failure = error
            }
            guard failure.isTransient else { throw failure }
            failuresInRow += 1
            retries += 1
            if failuresInRow > options.maxRetries {
                failure.detail = [failure.detail, "gave up after \(failuresInRow) tries"]
                    .compactMap { $0 }.joined(separator: "; ")
                throw failure
            }
            try await transfer.backOff(&delay)
            if offset != 0 { offset = nil }
        }
    }
}
