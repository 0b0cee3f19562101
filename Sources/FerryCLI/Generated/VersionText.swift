import FerryKit
import FerryServer

/// `ferry --version`: Ferry's version and the C libraries it runs with, as
/// the loaded libraries report themselves (what a bug report needs).
enum VersionText {
    static func render(
        curl: CurlVersion = .current, microhttpd: String = HTTPServer.libraryVersion
    ) -> String {
        var extras = [curl.ssl, curl.libz.map { "zlib/" + $0 }, curl.nghttp2.map { "nghttp2/" + $0 }].compactMap { $0 }
        if extras.isEmpty { extras = ["no TLS"] }
        let ssh: String
        if let libssh = curl.libssh {
            // libcurl says "libssh2/1.10.0" (or "libssh/0.10.4" when built with libssh).
            let parts = libssh.split(separator: "/", maxSplits: 1)
            ssh = parts.count == 2 ? "\(parts[0]) \(parts[1]) (through libcurl)" : "\(libssh) (through libcurl)"
        } else {
            ssh = "libssh2: none (this libcurl has no SSH; sftp:// is not available)"
        }
        return """
            ferry \(Ferry.version)
            libcurl \(curl.version) (\(extras.joined(separator: ", ")))
            \(ssh)
            libmicrohttpd \(microhttpd)

            """
    }
}
