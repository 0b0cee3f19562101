import FerryServer
import Foundation

/// Who may use `ferry serve`, checked on every request.
///
/// - On loopback (the default) no token is needed, but the `Host` header must
///   name a loopback address: a web page whose name was re-pointed at
///   127.0.0.1 (DNS rebinding) is refused.
/// - Elsewhere the API needs the access token: from the `ferry_token` cookie
///   (set when the printed URL with `?token=` is opened), or an
///   `X-Ferry-Token` header for scripts.
/// - Requests that change anything (any method but GET and HEAD) must also
///   come from the UI's own origin: `Origin`, else `Referer`, must match `Host`.
struct AccessGuard: Sendable {
    static let cookieName = "ferry_token"

    /// The token required, or nil on loopback.
    let token: String?

    /// 32 random bytes as hex.
    static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// A redirect that stores the token from `?token=` in a cookie and drops it
    /// from the address bar, or nil when the request carries no such query.
    func tokenRedirect(_ request: HTTPRequest) -> HTTPResponse? {
        guard let token, let offered = request.query("token"), request.method == "GET" else { return nil }
        guard Self.equal(offered, token) else { return Self.refuse(401, "wrong access token") }
        // A path on this site only: `//host/...`, `/\host/...` or an absolute-form
        // `http://host/...` target would send the browser elsewhere.
        var location = request.rawPath
        // Bytes, not Characters: `"/\u{301}".hasPrefix("/")` is false in Swift.
        let head = Array(location.utf8.prefix(2))
        if head.first != UInt8(ascii: "/")
            || head.count == 2 && (head[1] == UInt8(ascii: "/") || head[1] == UInt8(ascii: "\\"))
        {
            location = "/"
        }
        let rest = request.queryItems.filter { $0.name != "token" }
        if !rest.isEmpty {
            location +=
                "?"
                + rest.map { Self.encode($0.name) + ($0.value.map { "=" + Self.encode($0) } ?? "") }
                .joined(separator: "&")
        }
        return HTTPResponse(
            status: 303,
            headers: [
                "Location": location,
                "Set-Cookie": "\(Self.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict",
                "Cache-Control": "no-store",
            ])
    }

    /// Whether `request` carries the right token (header, cookie or `?token=`),
    /// decided from its head alone: the server keeps slots for such
    /// connections (`HTTPServer.Options.isTrusted`).
    func proves(_ request: HTTPRequest) -> Bool {
        guard let token else { return true }
        let offered =
            request.headers["X-Ferry-Token"] ?? Self.cookie(Self.cookieName, in: request.headers)
            ?? request.query("token")
        return offered.map { Self.equal($0, token) } ?? false
    }

    /// Checks a request; returns the refusal, or nil when it may go on.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - needsToken: Whether this resource needs the token (the API does; the page's own files do not).
    func check(_ request: HTTPRequest, needsToken: Bool) -> HTTPResponse? {
        let host = request.headers["Host"] ?? ""
        if token == nil, !Self.isLoopbackHost(host) {
            return Self.refuse(403, "this server only answers to 127.0.0.1 and localhost")
        }
        if needsToken, let token {
            let offered = request.headers["X-Ferry-Token"] ?? Self.cookie(Self.cookieName, in: request.headers)
            guard let offered, Self.equal(offered, token) else {
                return Self.refuse(401, "access token required: open the URL that ferry serve printed")
            }
        }
        if request.method != "GET" && request.method != "HEAD" {
            guard Self.sameOrigin(request, host: host) else {
                return Self.refuse(403, "cross-origin request refused")
            }
        }
        return nil
    }

    /// Whether `Origin` (or, without one, `Referer`) names `http://HOST`.
    static func sameOrigin(_ request: HTTPRequest, host: String) -> Bool {
        guard !host.isEmpty else { return false }
        let expected = "http://" + host.lowercased()
        if let origin = request.headers["Origin"] {
            return origin.lowercased() == expected
        }
        if let referer = request.headers["Referer"] {
            let r = referer.lowercased()
            return r == expected || r.hasPrefix(expected + "/") || r.hasPrefix(expected + "?")
        }
        return false
    }

    /// Whether a `Host` header names this machine (127.x, localhost, [::1]), any port.
    static func isLoopbackHost(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            name = String(name[name.index(after: name.startIndex)..<close])
            return name == "::1"
        }
        if let colon = name.lastIndex(of: ":") { name = String(name[..<colon]) }
        if name == "localhost" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// The value of cookie `name`, if sent.
    static func cookie(_ name: String, in headers: HTTPHeaders) -> String? {
        for header in headers.values(for: "Cookie") {
            for pair in header.split(separator: ";") {
                let item = pair.trimmingCharacters(in: .whitespaces)
                if item.hasPrefix(name + "=") { return String(item.dropFirst(name.count + 1)) }
            }
        }
        return nil
    }

    /// Compares in time independent of where the texts differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<x.count { difference |= x[i] ^ y[i] }
        return difference == 0
    }

    /// A refusal. A client refused for who it is (401, 403) gets its
    /// connection closed: kept alive, a crowd of such connections would keep
    /// the slots from the clients that have the token.
    static func refuse(_ status: Int, _ message: String) -> HTTPResponse {
        var response = HTTPResponse.json(["error": message], status: status)
        response.headers.replaceOrAdd(name: "Connection", value: "close")
        return response
    }

    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~/")))
            ?? text
    }
}
