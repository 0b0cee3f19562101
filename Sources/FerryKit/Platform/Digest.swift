import CCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// SHA-256 (and SHA-1 for OpenSSH's hashed known_hosts) through OpenSSL's
/// libcrypto, fed piece by piece as bytes stream.
///
/// Downloads that ask for a checksum (``DownloadOptions/computeChecksum``, which
/// `ferry sync` sets) hash every byte as it is taken, so the checksum costs no
/// second read of the file; delete-after hashes the local copy once more before
/// it deletes the source's.
final class Digest: @unchecked Sendable {
    enum Algorithm: Sendable {
        case sha256
        case sha1

        fileprivate var md: OpaquePointer? {
            switch self {
            case .sha256: EVP_sha256()
            case .sha1: EVP_sha1()
            }
        }
    }

    private let ctx: OpaquePointer
    private let algorithm: Algorithm

    init(_ algorithm: Algorithm = .sha256) {
        // Only fails when out of memory.
        ctx = EVP_MD_CTX_new()!
        self.algorithm = algorithm
        EVP_DigestInit_ex(ctx, algorithm.md, nil)
    }

    deinit { EVP_MD_CTX_free(ctx) }

    /// Adds bytes.
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(ctx, base, bytes.count)
    }

    /// Adds bytes.
    func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Starts again with no bytes.
    func reset() {
        EVP_DigestInit_ex(ctx, algorithm.md, nil)
    }

    /// The digest of every byte added; the digest starts again afterwards.
    func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var n: UInt32 = 0
        EVP_DigestFinal_ex(ctx, &out, &n)
        reset()
        return Array(out[0..<Int(n)])
    }

    /// The digest of `message`.
    static func hash(_ message: [UInt8], _ algorithm: Algorithm = .sha256) -> [UInt8] {
        let d = Digest(algorithm)
        d.update(message)
        return d.finish()
    }

    /// HMAC-SHA1 (RFC 2104) of `message` under `key`, as OpenSSH's hashed
    /// known_hosts entries use it.
    static func hmacSHA1(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        var k = key.count > 64 ? hash(key, .sha1) : key
        k += [UInt8](repeating: 0, count: 64 - k.count)
        let inner = hash(k.map { $0 ^ 0x36 } + message, .sha1)
        return hash(k.map { $0 ^ 0x5C } + inner, .sha1)
    }

    /// Lowercase hexadecimal, as `sha256sum` prints a digest.
    static func hex(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(digest.count * 2)
        for b in digest {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The SHA-256 (hex) of the first `length` bytes of the open file `fd` (or
    /// all of it), read through its own descriptor; nil when it cannot be read.
    /// `fd` may be write-only or unnamed (`O_TMPFILE`): it is opened again for
    /// reading through `/proc/self/fd`.
    static func sha256(ofDescriptor fd: Int32, length: Int64? = nil) -> String? {
        let reader = OS.open("/proc/self/fd/\(fd)", O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { return nil }
        defer { OS.close(reader) }
        return sha256(reading: reader, length: length)
    }

    /// The SHA-256 (hex) of a local file's bytes; nil when it cannot be read.
    static func sha256(ofFileAt path: String) -> String? {
        let fd = OS.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { OS.close(fd) }
        return sha256(reading: fd, length: nil)
    }

    private static func sha256(reading fd: Int32, length: Int64?) -> String? {
        let d = Digest()
        let size = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while length.map({ offset < $0 }) ?? true {
            let want = length.map { min(Int64(size), $0 - offset) } ?? Int64(size)
            let n = pread(fd, buffer.baseAddress, Int(want), off_t(offset))
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            d.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            offset += Int64(n)
        }
        if let length, offset != length { return nil }
        return hex(d.finish())
    }
}
