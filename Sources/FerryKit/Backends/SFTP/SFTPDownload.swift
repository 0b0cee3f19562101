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
/// FTP's size and `MDTM` are: the same `FTPDownloadDecision` compares them with
/// the journal before the first byte and starts the file over when either
/// changed, instead of appending foreign bytes. This adapter feeds it from
/// libcurl's callbacks and carries its actions out.
///
/// Engine-thread confined while running, like every `CurlJob`.
final class SFTPDownloadAttempt: DownloadAttemptJob, @unchecked Sendable {
    private var decision: FTPDownloadDecision
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
        decision = FTPDownloadDecision(
            offset: offset, journal: part.journal, listed: nil, display: endpoint.display(path))
        login = endpoint.login
        super.init(hostKey: endpoint.hostKey, part: part, transfer: transfer, offset: offset)
        hostKeys = endpoint.configure(easy, path: path, method: method, stallTimeout: options.stallTimeout)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(options.connectTimeout / .milliseconds(1)))
        easy.set(CURLOPT_FILETIME, 1)
        if offset > 0 { easy.set(CURLOPT_RESUME_FROM_LARGE, large: offset) }
    }

    override var outcome: AttemptOutcome { decision.outcome }

    /// What this attempt knows about the file: the whole file's size (libcurl
    /// reports what is left after the offset) and its time as the journal keeps
    /// it (Unix seconds, as text).
    private func facts() -> FTPDownloadDecision.Facts {
        let left = easy.info(large: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
        let t = easy.info(CURLINFO_FILETIME)
        return FTPDownloadDecision.Facts(size: left >= 0 ? left + offset : nil, modified: t >= 0 ? String(t) : nil)
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if decision.needsHead {
            guard carryOut(decision.handle(.head(facts())), failed: fail) else { return false }
        }
        guard carryOut(decision.handle(.body(bytes.count)), failed: fail) else { return false }
        if let error = write(bytes, totalForProgress: part.journal.totalSize) {
            fail(error)
            return false
        }
        return true
    }

    override func didComplete(_ completion: CurlCompletion) {
        let ending: FTPDownloadDecision.Ending
        if completion.interrupted {
            ending = .interrupted
        } else {
            switch completion.code {
            case .ok:
                // No body: an empty file, or the .part already held every byte.
                if decision.needsHead && !carryOut(decision.handle(.head(facts())), failed: fail) {
                    _ = decision.handle(.end(.ok(length: part.length)))
                    return
                }
                ending = .ok(length: part.length)
            case .badDownloadResume:
                ending = .restPastEnd
            default:
                ending = .failed(
                    .sftp(completion, hostKeys: hostKeys, operation: "download", target: decision.display, login: login)
                )
            }
        }
        _ = decision.handle(.end(ending))
    }

    /// Tells the decision that writing failed.
    private func fail(_ error: FerryError) {
        _ = decision.handle(.localFailure(error))
    }
}
