import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension LocalFileSystem {
    /// Ranges are read with `pread`.
    public var capabilities: RemoteCapabilities { [.rangeReads] }

    /// Reads one byte range of a local file.
    public func data(at path: String, range: Range<Int64>) async throws(FerryError) -> Data {
        guard range.lowerBound >= 0 else { throw FerryError.badRange(range, operation: "read", target: path) }
        return try LocalFileSystem.read(path, range: range, limit: nil)
    }

    /// Reads a whole local file; one over `limit` fails without being read.
    public func data(at path: String, limit: Int) async throws(FerryError) -> Data {
        try LocalFileSystem.read(path, range: 0..<Int64.max, limit: max(0, limit))
    }

    private static func read(_ path: String, range: Range<Int64>, limit: Int?) throws(FerryError) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LocalFileSystem.failure(errno, operation: "read", path: path) }
        defer { close(fd) }
        // The size from lseek: a folder fails at the first pread (EISDIR).
        let size = Int64(lseek(fd, 0, SEEK_END))
        guard size >= 0 else { throw FerryError.posix(errno, operation: "read", path: path) }
        if let limit, size > Int64(limit) {
            throw FerryError.overLimit(limit, size: size, operation: "read", target: path)
        }
        let end = min(range.upperBound, size)
        guard end > range.lowerBound else { return Data() }
        var bytes = [UInt8](repeating: 0, count: Int(end - range.lowerBound))
        var filled = 0
        while filled < bytes.count {
            if Task.isCancelled { throw FerryError(.cancelled, operation: "read", target: path) }
            let n = bytes.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress! + filled, raw.count - filled, off_t(range.lowerBound) + off_t(filled))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw FerryError.posix(errno, operation: "read", path: path)
            }
            if n == 0 { break }
            filled += n
        }
        return Data(bytes[..<filled])
    }
}
