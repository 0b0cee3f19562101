import CCurl
import Foundation

/// FTP's steps of the one upload algorithm (`ResumableUpload`, docs/DESIGN.md,
/// "Transfers: the contract"): `STOR`, or `APPE` from an offset, to
/// `.NAME.ferry-part`, `SIZE` to see what the server holds, a ranged `RETR` of
/// a leftover's last bytes, `RNFR`/`RNTO` into place.
///
/// A server that refuses the rename gets the file straight under its name
/// (remembered for the rest of the process in `FTPServerInfoCache`). A server
/// that took some bytes and then refused the data connection (proftpd, "425
/// Unable to build data connection") kept the upload retrying for ever before
/// the upload's one budget.
struct FTPUploadTarget: ResumableUploadTarget {
    let fs: FTPFileSystem

    private var endpoint: FTPEndpoint { fs.endpoint }
    var engine: CurlEngine { endpoint.engine }

    func display(_ path: String) -> String { endpoint.display(path) }

    func entry(_ path: String) async throws(FerryError) -> RemoteEntry { try await fs.entry(path) }

    func writesInPlace(_ path: String) async throws(FerryError) -> Bool {
        try await fs.serverInfo(for: "upload", path).renameRefused
    }

    func read(_ path: String, range: ClosedRange<Int64>) async -> [UInt8]? {
        await FTPCommandJob(endpoint: endpoint, path: path, maxBody: range.count).read(range, on: engine)
    }

    func uploadJob(
        to path: String, from offset: Int64, source: String, fd: Int32, size: Int64, options: UploadOptions,
        transfer: Transfer
    ) -> FTPUploadJob {
        FTPUploadJob(
            endpoint: endpoint, path: path, fd: fd, sourcePath: source, offset: offset, size: size,
            createParents: options.createParents, stallTimeout: options.stallTimeout, transfer: transfer)
    }

    func failure(_ completion: CurlCompletion, of job: FTPUploadJob, target: String) -> FerryError {
        FerryError.ftp(completion, log: job.log, operation: "upload", target: target)
    }

    /// `RNFR`/`RNTO`: replaces an existing file on the servers that allow it
    /// (the others refuse, and `renameRefused` stores in place).
    func rename(_ temporary: String, to path: String, replacing: Bool) async throws(FerryError) {
        try await fs.rename(temporary, path, operation: "upload")
    }

    /// `DELE` of the temporary file. Best effort: a server that refuses it keeps
    /// it, and a later upload of the same file resumes from it or replaces it.
    func remove(_ temporary: String) async {
        guard let info = try? await fs.serverInfo(for: "upload", temporary) else { return }
        let temp = FTPEndpoint.serverPath(temporary, entryPath: info.entryPath)
        _ = try? await endpoint.quote(["DELE " + temp], operation: "upload", path: temporary)
    }

    /// The server will not rename (no permission for it, or it does not replace
    /// an existing file that way): remember, delete the temporary file, and
    /// store under the final name.
    func renameRefused(_ error: FerryError, temporary: String) async -> Bool {
        FTPServerInfoCache.shared.update(endpoint.serverKey) { $0.renameRefused = true }
        await remove(temporary)
        return true
    }
}
