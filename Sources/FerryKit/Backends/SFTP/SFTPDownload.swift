import CCurl
import Foundation

/// Downloads one SFTP file through the shared download driver (`.part`, journal,
/// resume, retries).
struct SFTPDownloadSource: DownloadSource {
    let fs: SFTPFileSystem
    let path: String
    /// The login method, found before the first attempt (`SFTPFileSystem.download`).
    var method: SSHLogin.Method?

    var displayName: String { fs.endpoint.display(path) }
    var engine: CurlEngine { fs.endpoint.engine }

    func makeAttempt(offset: Int64, part: PartFile, transfer: Transfer, options: DownloadOptions)
        -> DownloadAttemptJob
    {
        let method = method ?? SSHMethodCache.shared.known(fs.endpoint.methodKey) ?? fs.endpoint.login.methods.first
        return SFTPDownloadAttempt(
            endpoint: fs.endpoint, path: path, method: method ?? .password, offset: offset, part: part,
            transfer: transfer, options: options)
    }
}

extension SFTPFileSystem {
    /// The download of `path` as a transfer: the login method first (a refused
    /// login fails once, before any `.part` exists), then the driver's loop.
    func startDownload(_ p: String, to destination: String, options: DownloadOptions) -> Transfer {
        let fs = self
        return Transfer.start(source: endpoint.display(p), destination: destination) { transfer in
            let method = try await fs.loginMethod(for: "download", p)
            let source = SFTPDownloadSource(fs: fs, path: p, method: method)
            return try await DownloadDriver.run(source, to: destination, options: options, transfer: transfer)
        }
    }
}

/// One attempt of an SFTP download: `stat` for the time, `open` + `fstat` for the
/// size, then reads from `offset` (`CURLOPT_RESUME_FROM_LARGE`).
///
/// The file's size and modification time (Unix seconds) are its validators:
/// stored in the journal when the attempt starts; a resumed attempt that finds
/// either changed starts the file over instead of appending foreign bytes.
///
/// Engine-thread confined while running, like every `CurlJob`.
final class SFTPDownloadAttempt: DownloadAttemptJob, @unchecked Sendable {
    private var decided = false
    private let display: String
    private let login: SSHLogin
    private var hostKeys: HostKeyCheck?

    init(
        endpoint: SFTPEndpoint, path: String, method: SSHLogin.Method, offset: Int64, part: PartFile,
        transfer: Transfer, options: DownloadOptions
    ) {
        display = endpoint.display(path)
        login = endpoint.login
        super.init(hostKey: endpoint.hostKey, part: part, transfer: transfer, offset: offset)
        hostKeys = endpoint.configure(easy, path: path, method: method, stallTimeout: options.stallTimeout)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(options.connectTimeout / .milliseconds(1)))
        easy.set(CURLOPT_FILETIME, 1)
        if offset > 0 { easy.set(CURLOPT_RESUME_FROM_LARGE, large: offset) }
    }

    /// The whole file's size: libcurl reports what is left after the offset.
    private var remoteSize: Int64? {
        let left = easy.info(large: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
        return left >= 0 ? left + offset : nil
    }

    /// The file's time as the journal keeps it (Unix seconds, as text).
    private var remoteModified: String? {
        let t = easy.info(CURLINFO_FILETIME)
        return t >= 0 ? String(t) : nil
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !decided {
            guard decide() else { return false }
        }
        guard part.append(bytes) else {
            outcome = .failed(part.writeError!)
            return false
        }
        bytesReceived += Int64(bytes.count)
        transfer.report(bytesDone: part.length, totalBytes: part.journal.totalSize)
        return true
    }

    /// Compares the validators with the journal before the first byte is written.
    private func decide() -> Bool {
        decided = true
        let journal = part.journal
        let size = remoteSize
        let modified = remoteModified
        if offset > 0 {
            if journal.unverifiable == true {
                outcome = .restart(reason: "nothing can tell whether the file is still the one the part came from")
                return false
            }
            if let old = journal.totalSize, let size, old != size {
                outcome = .restart(reason: "size changed from \(old) to \(size)")
                return false
            }
            if let old = journal.lastModified, let modified, old != modified {
                outcome = .restart(reason: "modification time changed")
                return false
            }
        }
        do {
            try part.begin(
                at: offset, etag: nil, lastModified: modified ?? journal.lastModified,
                totalSize: size ?? journal.totalSize, verifiable: modified != nil || size != nil)
        } catch {
            outcome = .failed(error)
            return false
        }
        return true
    }

    override func didComplete(_ completion: CurlCompletion) {
        if decided, case .failed(let e) = outcome, e.detail != "no outcome" { return }
        if case .restart = outcome { return }
        if completion.interrupted {
            outcome = .interrupted
            return
        }
        switch completion.code {
        case .ok:
            // No body: an empty file, or the .part already held every byte.
            if !decided {
                guard decide() else { return }
            }
            outcome = .complete(expectedSize: remoteSize)
        case .badDownloadResume:
            outcome = .restart(reason: "the file is shorter than the \(offset) bytes already downloaded")
        default:
            outcome = .failed(
                .sftp(completion, hostKeys: hostKeys, operation: "download", target: display, login: login))
        }
    }
}
