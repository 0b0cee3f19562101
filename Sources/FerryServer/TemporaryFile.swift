import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A new temporary file being written in bounded chunks.
///
/// Created with `mkstemp` (mode 0600, never replaces a file). Writes are
/// collected in a buffer of at most ``bufferSize`` bytes and then written
/// straight to the descriptor, so memory stays bounded whatever the file size.
/// Not thread-safe: owned by one parser or one connection thread.
final class TemporaryFile {
    static let bufferSize = 64 * 1024

    /// The path of the file.
    let path: String
    /// Bytes accepted so far (buffered or written).
    private(set) var size: Int64 = 0
    private var fd: Int32
    private var buffer: [UInt8] = []

    /// Creates an empty file `DIRECTORY/PREFIX-XXXXXX`.
    ///
    /// - Throws: ``MultipartError`` with code `.fileSystem` naming the folder.
    init(directory: String, prefix: String) throws(MultipartError) {
        let folder = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        var template = Array("\(folder)/\(prefix)-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            let code = errno
            throw .fileSystem("cannot create a temporary file in \(directory): \(Sys.describe(code))", errno: code)
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        self.fd = fd
        self.path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        buffer.reserveCapacity(Self.bufferSize)
    }

    deinit {
        if fd >= 0 { Sys.close(fd) }
    }

    /// Appends bytes.
    func write(_ bytes: UnsafeRawBufferPointer) throws(MultipartError) {
        guard !bytes.isEmpty else { return }
        size += Int64(bytes.count)
        if buffer.count + bytes.count <= Self.bufferSize {
            buffer.append(contentsOf: bytes)
            return
        }
        try flush()
        if bytes.count >= Self.bufferSize {
            try writeAll(bytes)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    /// Appends bytes.
    func write(_ data: Data) throws(MultipartError) {
        try withBytes(of: data) { (raw) throws(MultipartError) in try write(raw) }
    }

    /// Writes out the buffer and closes the descriptor; the file stays.
    func close() throws(MultipartError) {
        guard fd >= 0 else { return }
        defer {
            Sys.close(fd)
            fd = -1
        }
        try flush()
    }

    /// Closes the descriptor and deletes the file.
    func discard() {
        if fd >= 0 {
            Sys.close(fd)
            fd = -1
        }
        unlink(path)
    }

    private func flush() throws(MultipartError) {
        guard !buffer.isEmpty else { return }
        defer { buffer.removeAll(keepingCapacity: true) }
        try withBytes(of: buffer) { (bytes) throws(MultipartError) in try writeAll(bytes) }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(MultipartError) {
        var offset = 0
        while offset < bytes.count {
            let written = Sys.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                throw .fileSystem("cannot write \(path): \(Sys.describe(code))", errno: code)
            }
            offset += written
        }
    }
}

/// Runs `body` over the storage of `bytes` with its typed error
/// (`withUnsafeBytes` passes only untyped errors through).
func withBytes<E: Error>(
    of bytes: some ContiguousBytes, _ body: (UnsafeRawBufferPointer) throws(E) -> Void
) throws(E) {
    let result: Result<Void, E> = bytes.withUnsafeBytes { raw in
        do throws(E) {
            try body(raw)
            return .success(())
        } catch {
            return .failure(error)
        }
    }
    try result.get()
}
