import CCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One attempt of an FTP upload: `STOR` from the start, or `APPE` from `offset`
/// when continuing an interrupted upload (bytes from `LocalFileUploadJob`).
///
/// Engine-thread confined while running (see `CurlJob`).
final class FTPUploadJob: LocalFileUploadJob, @unchecked Sendable {
    var log = FTPReplyLog()

    init(
        endpoint: FTPEndpoint, path: String, fd: Int32, sourcePath: String, offset: Int64, size: Int64,
        createParents: Bool, stallTimeout: Duration, transfer: Transfer
    ) {
        super.init(
            hostKey: endpoint.hostKey, tlsSessionCache: endpoint.tlsSessionCache, fd: fd, sourcePath: sourcePath,
            offset: offset, size: size, transfer: transfer)
        endpoint.configure(easy, path: path, stallTimeout: stallTimeout)
        easy.set(CURLOPT_UPLOAD, 1)
        easy.set(CURLOPT_INFILESIZE_LARGE, large: size - offset)
        // APPE rather than RESUME_FROM: we start reading at `offset` ourselves, so
        // libcurl has nothing to skip and asks no SIZE of its own.
        if offset > 0 { easy.set(CURLOPT_APPEND, 1) }
        if createParents {
            easy.set(CURLOPT_FTP_CREATE_MISSING_DIRS, Int(CURLFTP_CREATE_DIR_RETRY.rawValue))
        }
        enableDebug()
    }

    override func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer) {
        followFTP(&log, type, text)
    }
}
