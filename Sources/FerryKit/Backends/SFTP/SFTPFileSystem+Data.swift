import CCurl
import Foundation

extension SFTPFileSystem {
    /// Ranges are read at an offset (SFTP's read request; libcurl's `CURLOPT_RANGE`):
    /// in-memory reads and thumbnails from the first bytes work.
    public var capabilities: RemoteCapabilities { [.rangeReads] }

    /// Reads one byte range: only those bytes travel. A range past the end gives
    /// what the file has there (nothing, past its end).
    public func data(at path: String, range: Range<Int64>) async throws(FerryError) -> Data {
        let display = endpoint.display(path)
        guard range.lowerBound >= 0 else { throw FerryError.badRange(range, operation: "read", target: display) }
        if range.isEmpty { return Data() }
        let length = Int(min(range.upperBound - range.lowerBound, Int64(Int32.max)))
        let job = try await job("read", path, maxBody: length)
        job.easy.set(CURLOPT_RANGE, "\(range.lowerBound)-\(range.lowerBound + Int64(length) - 1)")
        let completion = await endpoint.engine.perform(job)
        if completion.interrupted { throw FerryError(.cancelled, operation: "read", target: display) }
        if completion.code == .ok || job.tooLarge { return Data(job.body.prefix(length)) }
        // libcurl refuses an offset past the file's end: there is nothing there.
        if completion.code == CurlCode(CURLE_BAD_DOWNLOAD_RESUME) { return Data() }
        throw FerryError.sftp(
            completion, hostKeys: job.hostKeys, operation: "read", target: display, login: endpoint.login)
    }
}
