import CCurl
import Foundation

extension SFTPFileSystem {
    /// The download of `path` as a transfer: the login method first (a refused
    /// login fails once, before any `.part` exists), then the driver's loop.
    func startDownload(_ p: String, to destination: String, options: DownloadOptions) -> Transfer {
        let fs = self
        return Transfer.start(source: endpoint.display(p), destination: destination) {
            transfer async throws(FerryError) in
            let method = try await fs.loginMethod(for: "download", p)
            return try await DownloadDriver.run(
                fs.source(p, method: method), to: destination, options: options, transfer: transfer)
        }
    }

    /// Where a file's attempts come from: OpenSSH's channels when `ssh` can log
    /// in as libssh2 did (`SFTPEndpoint.openSSHPool`), else libssh2's. `method`:
    /// found before (`download`), else asked when the first attempt starts.
    func source(_ p: String, method: SSHLogin.Method?) -> DownloadSource {
        let libssh2 = SFTPDownloadAttempt.source(fs: self, path: p, method: method)
        guard endpoint.openSSH != nil else { return libssh2 }
        let fs = self
        let display = endpoint.display(p)
        return DownloadSource(displayName: display) { offset, part, transfer, options in
            let found: SSHLogin.Method
            do throws(FerryError) {
                if let method { found = method } else { found = try await fs.loginMethod(for: "download", p) }
            } catch {
                return AttemptReport(outcome: .failed(error), begunAt: nil, bytesReceived: 0)
            }
            guard let pool = fs.endpoint.openSSHPool(for: found) else {
                return await libssh2.attempt(offset, part, transfer, options)
            }
            return await SFTPOpenSSHDownload.attempt(
                pool: pool, path: p, display: display, offset: offset, part: part, transfer: transfer,
                options: options)
        }
    }
}

/// What SFTP adds to a download attempt (`DownloadAttempt`): `stat` for the
/// time, `open` + `fstat` for the size, then reads from `offset`
/// (`CURLOPT_RESUME_FROM_LARGE`).
///
/// The file's size and modification time (Unix seconds) are its validators, as
/// FTP's size and `MDTM` are: the same `SizeAndTimeDownloadDecision` compares them with
/// the journal before the first byte and starts the file over when either
/// changed, instead of appending foreign bytes.
struct SFTPDownloadAttempt: DownloadAttemptAdapter {
    var decision: SizeAndTimeDownloadDecision
    private let endpoint: SFTPEndpoint
    private let path: String
    private let method: SSHLogin.Method
    private let offset: Int64
    private let options: DownloadOptions
    private var hostKeys: SSHConnectionChecks?

    /// The source the driver asks for attempts: one per file. `method` is the
    /// login method found before the first attempt (`SFTPFileSystem.download`).
    static func source(fs: SFTPFileSystem, path: String, method: SSHLogin.Method?) -> DownloadSource {
        DownloadSource(
            displayName: fs.endpoint.display(path), engine: fs.endpoint.engine,
            makeAttempt: { offset, part, transfer, options in
                let method =
                    method ?? SSHMethodCache.shared.known(fs.endpoint.methodKey) ?? fs.endpoint.login.methods.first
                return DownloadAttempt(
                    SFTPDownloadAttempt(
                        endpoint: fs.endpoint, path: path, method: method ?? .password, offset: offset,
                        journal: part.journal, options: options),
                    hostKey: fs.endpoint.hostKey, tlsSessionCache: fs.endpoint.connectionCache, part: part,
                    transfer: transfer, offset: offset)
            })
    }

    init(
        endpoint: SFTPEndpoint, path: String, method: SSHLogin.Method, offset: Int64, journal: DownloadJournal,
        options: DownloadOptions
    ) {
        decision = SizeAndTimeDownloadDecision(offset: offset, journal: journal, display: endpoint.display(path))
        self.endpoint = endpoint
        self.path = path
        self.method = method
        self.offset = offset
        self.options = options
    }

    mutating func configure(_ job: CurlJob) {
        let easy = job.easy
        hostKeys = endpoint.configure(easy, path: path, method: method, stallTimeout: options.stallTimeout)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(options.connectTimeout / .milliseconds(1)))
        easy.set(CURLOPT_FILETIME, 1)
        if offset > 0 { easy.set(CURLOPT_RESUME_FROM_LARGE, large: offset) }
    }

    func header(_ line: UnsafeRawBufferPointer) {}

    func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer, job: CurlJob) {}

    /// What this attempt knows about the file: the whole file's size (libcurl
    /// reports what is left after the offset) and its time (Unix seconds).
    func head(_ easy: EasyHandle) -> SizeAndTimeDownloadDecision.Facts {
        let left = easy.info(large: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
        let t = easy.info(CURLINFO_FILETIME)
        return SizeAndTimeDownloadDecision.Facts(
            size: left >= 0 ? left + offset : nil, modified: t >= 0 ? .stamp(seconds: Int64(t), nanoseconds: 0) : nil)
    }

    func ending(_ completion: CurlCompletion, length: Int64) -> SizeAndTimeDownloadDecision.Ending {
        SizeAndTimeDownloadDecision.Ending(completion, length: length) { completion in
            .failed(
                .sftp(
                    completion, hostKeys: hostKeys, operation: "download", target: decision.display,
                    login: endpoint.login))
        }
    }

    func progressTotal(_ part: PartFile) -> Int64? { part.journal.totalSize }
}
