import CCurl
import Foundation

/// Whether the environment names a proxy for HTTP(S), read once per process.
///
/// libcurl looks for a proxy in the environment on every transfer that has no
/// `CURLOPT_PROXY`: `no_proxy`, `NO_PROXY`, `http_proxy` (or `https_proxy`,
/// `HTTPS_PROXY`), `all_proxy`, `ALL_PROXY`, one `getenv` and `strdup` each,
/// five or six per file (bench/RESULTS.md, "Issue 19, HTTP per-file CPU (2026-12-01, branch hdr)", "Proxy
/// variables"). When none of the
/// variables it could use is set, which is the usual case, a request says "no
/// proxy" itself and libcurl reads nothing; when one is, the request leaves the
/// choice to libcurl exactly as before, `no_proxy` included.
///
/// The environment is read the first time an HTTP request is configured: a
/// proxy variable set later by the process itself is not seen (the CLI and the
/// server never set one).
enum HTTPProxyEnvironment {
    /// Every variable libcurl 7.88 reads for an HTTP or HTTPS proxy, and
    /// `HTTP_PROXY`, which it ignores for HTTP (a CGI program's environment
    /// holds a client's `Proxy:` header under that name): a set variable of any
    /// of these leaves the proxy to libcurl.
    static let names = [
        "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
    ]

    /// True when none of `names` is set to a value (libcurl treats an empty
    /// one as unset).
    static let isEmpty: Bool = isEmpty { getenv($0) }

    static func isEmpty(_ lookup: (String) -> UnsafeMutablePointer<CChar>?) -> Bool {
        names.allSatisfy { name in lookup(name).map { $0.pointee == 0 } ?? true }
    }

    /// Tells libcurl that `easy` uses no proxy when the environment names none,
    /// so that it does not read the environment for it on every transfer.
    static func configure(_ easy: EasyHandle) {
        guard isEmpty else { return }
        // "" is libcurl's "no proxy, whatever the environment says"; as the
        // no_proxy list it matches no host, and stops libcurl reading no_proxy.
        none.set(CURLOPT_PROXY, on: easy)
        none.set(CURLOPT_NOPROXY, on: easy)
    }

    private static let none = OptionString("")
}
