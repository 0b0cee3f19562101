import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An upload whose bytes come from a local file, read with `pread` as libcurl
/// asks for them (never held whole in memory), from `offset` to `end` (the end
/// of the file unless the protocol sends it in pieces: WebDAV's ranged PUTs).
/// The protocol's subclass sets the URL and options (`FTPUploadJob`, `SFTPUploadJob`).
///
/// Engine-thread confined while running (see `CurlJob`).
class LocalFileUploadJob: CurlJob, @unchecked Sendable {
    private let fd: Int32
    private let sourcePath: String
    private let transfer: Transfer
    /// The whole file's size.
    let size: Int64
    /// Where this transfer's bytes end: `size`, or the end of a piece.
    let end: Int64
    /// Next byte of the local file to send.
    private(set) var position: Int64
    /// Bytes handed to libcurl by this attempt.
    private(set) var bytesSent: Int64 = 0
    /// Set when reading the local file failed.
    private(set) var readError: FerryError?

    init(
        hostKey: String, tlsSessionCache: TLSSessionCache = .own, fd: Int32, sourcePath: String, offset: Int64,
        size: Int64, end: Int64? = nil, transfer: Transfer
    ) {
        self.fd = fd
        self.sourcePath = sourcePath
        self.transfer = transfer
        self.size = size
        self.end = min(end ?? size, size)
        position = offset
        super.init(hostKey: hostKey, tlsSessionCache: tlsSessionCache)
        enableUpload()
    }

    override func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let want = min(Int64(buffer.count), end - position)
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
}
