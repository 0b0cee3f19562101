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
            let source = SFTPDownloadAttempt.source(fs: fs, path: p, method: method)
            return try await DownloadDriver.run(source, to: destination, options: options, transfer: transfer)
        }
    }
}

/// One attempt of an SFTP download: `stat` for the time, `open` + `fstat` for the
/// size, then reads from `offset` (`CURLOPT_RESUME_FROM_LARGE`).
///
/// The file's size and modification time (Unix seconds) are its validators, as
/// FTP's size and `MDTM` are: the same `SizeAndTimeDownloadDecision` compares them with
/// the journal before the first byte and starts the file over when either
/// changed, instead of appending foreign bytes. This adapter feeds it from
/// libcurl's callbacks and carries its actions out.
///
/// Engine-thread confined while running, like every `CurlJob`.
final class SFTPDownloadAttempt: SizeAndTimeDownloadAttempt, @unchecked Sendable {
    private let login: SSHLogin
    private var hostKeys: HostKeyCheck?

    /// The source the driver asks for attempts: one per file. `method` is the
    /// login method found before the first attempt (`SFTPFileSystem.download`).
    static func source(fs: SFTPFileSystem, path: String, method: SSHLogin.Method?) -> DownloadSource {
        DownloadSource(
            displayName: fs.endpoint.display(path), engine: fs.endpoint.engine,
            makeAttempt: { offset, part, transfer, options in
                let method =
                    method ?? SSHMethodCache.shared.known(fs.endpoint.methodKey) ?? fs.endpoint.login.methods.first
                return SFTPDownloadAttempt(
                    endpoint: fs.endpoint, path: path, method: method ?? .password, offset: offset, part: part,
                    transfer: transfer, options: options)
            })
    }

    init(
        endpoint: SFTPEndpoint, path: String, method: SSHLogin.Method, offset: Int64, part: PartFile,
        transfer: Transfer, options: DownloadOptions
    ) {
        login = endpoint.login
        super.init(
            decision: SizeAndTimeDownloadDecision(
                offset: offset, journal: part.journal, listed: nil, display: endpoint.display(path)),
            hostKey: endpoint.hostKey, tlsSessionCache: endpoint.connectionCache, part: part, transfer: transfer,
            offset: offset)
        hostKeys = endpoint.configure(easy, path: path, method: method, stallTimeout: options.stallTimeout)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(options.connectTimeout / .milliseconds(1)))
        easy.set(CURLOPT_FILETIME, 1)
        if offset > 0 { easy.set(CURLOPT_RESUME_FROM_LARGE, large: offset) }
    }

    /// What this attempt knows about the file: the whole file's size (libcurl
    /// reports what is left after the offset) and its time (Unix seconds).
    override func facts() -> SizeAndTimeDownloadDecision.Facts {
        let left = easy.info(large: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
        let t = easy.info(CURLINFO_FILETIME)
        return SizeAndTimeDownloadDecision.Facts(
            size: left >= 0 ? left + offset : nil, modified: t >= 0 ? .stamp(seconds: Int64(t), nanoseconds: 0) : nil)
    }

    override func ending(failed completion: CurlCompletion) -> SizeAndTimeDownloadDecision.Ending {
        .failed(.sftp(completion, hostKeys: hostKeys, operation: "download", target: decision.display, login: login))
    }
}
