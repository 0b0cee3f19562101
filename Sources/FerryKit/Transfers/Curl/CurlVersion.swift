import CCurl

/// The libcurl this process runs with, as `curl_version_info` reports it
/// (`ferry --version`): the loaded library, not the headers Ferry was built with.
public struct CurlVersion: Sendable {
    /// libcurl's own version, e.g. `7.88.1`.
    public var version: String
    /// The TLS library, e.g. `OpenSSL/3.0.17`.
    public var ssl: String?
    /// zlib, e.g. `1.2.13`.
    public var libz: String?
    /// The SSH library libcurl uses for SFTP, e.g. `libssh2/1.10.0`.
    public var libssh: String?
    /// nghttp2 (HTTP/2), e.g. `1.52.0`.
    public var nghttp2: String?

    /// Creates a version description (tests; ``current`` reads the loaded library).
    public init(version: String, ssl: String?, libz: String?, libssh: String?, nghttp2: String?) {
        self.version = version
        self.ssl = ssl
        self.libz = libz
        self.libssh = libssh
        self.nghttp2 = nghttp2
    }

    /// The loaded libcurl's version information.
    public static var current: CurlVersion {
        let info = ferry_curl_version_info()!.pointee
        func text(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
        return CurlVersion(
            version: text(info.version) ?? "unknown", ssl: text(info.ssl_version), libz: text(info.libz_version),
            libssh: text(info.libssh_version), nghttp2: text(info.nghttp2_version))
    }
}
