import CCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One attempt of an FTP upload: `STOR` from the start, or `APPE` from `offset`
/// when continuing an interrupted upload. Bytes are read from the local file with
/// `pread` as libcurl asks for them, never held whole in memory.
///
/// Engine-thread confined while running (see `CurlJob`).
final class FTPUploadJob: CurlJob, @unchecked Sendable {
    var log = FTPReplyLog()
    private let fd: Int32
    private let sourcePath: String
    private let transfer: Transfer
    private let size: Int64
    /// Next byte of the local file to send.
    private(set) var position: Int64
    /// Bytes handed to libcurl by this attempt.
    private(set) var bytesSent: Int64 = 0
    /// Set when reading the local file failed.
    private(set) var readError: FerryError?

    init(
        endpoint: FTPEndpoint, path: String, fd: Int32, sourcePath: String, offset: Int64, size: Int64,
        createParents: Bool, stallTimeout: Duration, transfer: Transfer
    ) {
        self.fd = fd
        self.sourcePath = sourcePath
        self.transfer = transfer
        self.size = size
        position = offset
        super.init(hostKey: endpoint.hostKey, tlsSessionCache: endpoint.tlsSessionCache)
        endpoint.configure(easy, path: path, stallTimeout: stallTimeout)
        easy.set(CURLOPT_UPLOAD, 1)
        easy.set(CURLOPT_INFILESIZE_LARGE, large: size - offset)
        // APPE rather than RESUME_FROM: we start reading at `offset` ourselves, so
        // libcurl has nothing to skip and asks no SIZE of its own.
        if offset > 0 { easy.set(CURLOPT_APPEND, 1) }
        if createParents {
            easy.set(CURLOPT_FTP_CREATE_MISSING_DIRS, Int(CURLFTP_CREATE_DIR_RETRY.rawValue))
        }
        enableUpload()
        enableDebug()
    }

    override func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let want = min(Int64(buffer.count), size - position)
        guard want > 0 else { return 0 }
        while true {
            let n = pread(fd, buffer.baseAddress!, Int(want), off_t(position))
            if n < 0 {
                if errno == EINTR { continue }
                readError = FerryError.posix(errno, operation: "read", path: sourcePath)
                return nil
            }
            if n == 0 {
                readError = FerryError(
                    .localIO, operation: "read", target: sourcePath, detail: "the file shrank while uploading")
                return nil
            }
            position += Int64(n)
            bytesSent += Int64(n)
            transfer.report(bytesDone: position, totalBytes: size)
            return n
        }
    }

    override func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer) {
        followFTP(&log, type, text)
    }
}
