import CCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One attempt of an SFTP upload: the whole file, or (`CURLOPT_APPEND`) the rest
/// from `offset` onto what the server holds.
final class SFTPUploadJob: LocalFileUploadJob, @unchecked Sendable {
    private(set) var hostKeys: SSHConnectionChecks?

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

/// SFTP's steps of the one upload algorithm (`ResumableUpload`, docs/DESIGN.md,
/// "Transfers: the contract"): a write, or an append from an offset
/// (`CURLOPT_APPEND`), to `.NAME.ferry-part`, `stat` to see what the server
/// holds, a ranged read of a leftover's last bytes, `rename` into place (SFTP's
/// rename does not replace a file: an existing destination the policy allows to
/// replace is removed just before).
struct SFTPUploadTarget: ResumableUploadTarget {
    let fs: SFTPFileSystem
    /// The login method found before the first step.
    let method: SSHLogin.Method

    private var endpoint: SFTPEndpoint { fs.endpoint }
    var engine: CurlEngine { endpoint.engine }

    func display(_ path: String) -> String { endpoint.display(path) }

    func entry(_ path: String) async throws(FerryError) -> RemoteEntry { try await fs.entry(path) }

    func read(_ path: String, range: ClosedRange<Int64>) async -> [UInt8]? {
        await SFTPCommandJob(endpoint: endpoint, path: path, method: method, maxBody: range.count).read(
            range, on: engine)
    }

    func uploadJob(
        to path: String, from offset: Int64, source: String, fd: Int32, size: Int64, options: UploadOptions,
        transfer: Transfer
    ) -> SFTPUploadJob {
        SFTPUploadJob(
            endpoint: endpoint, method: method, path: path, fd: fd, sourcePath: source, offset: offset, size: size,
            createParents: options.createParents, stallTimeout: options.stallTimeout, transfer: transfer)
    }

    func failure(_ completion: CurlCompletion, of job: SFTPUploadJob, target: String) -> FerryError {
        var failure = FerryError.sftp(
            completion, hostKeys: job.hostKeys, operation: "upload", target: target, login: endpoint.login)
        if completion.code == .ssh {
            // libcurl 7.88 reports a refused SFTP write without the status.
            failure.detail = "the server stopped taking the file (a full disk or quota, or the connection dropped)"
        }
        return failure
    }

    func rename(_ temporary: String, to path: String, replacing: Bool) async throws(FerryError) {
        try await fs.rename(temporary, path, operation: "upload", replacing: replacing)
    }

    /// `rm` of the temporary file, best effort: a later upload of the same file
    /// resumes from it or replaces it.
    func remove(_ temporary: String) async {
        try? await fs.delete(temporary)
    }
}
