// Who may use `ferry serve`: requests with arbitrary Host, Origin, Referer, Cookie and
// X-Ferry-Token headers, against a server with and without an access token.
// Input: METHOD SP TARGET, then header lines `Name: value`.
import FerryServer
import FuzzSupport

@testable import FerryWeb

let token = "0123456789abcdef0123456789abcdef"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let lines = text(data, size).split(separator: "\n", omittingEmptySubsequences: false)
    guard let first = lines.first else { return 0 }
    let request = first.split(separator: " ", maxSplits: 1)
    let method = request.count == 2 ? String(request[0]) : "GET"
    let target = String(request.last ?? "/")
    var headers = HTTPHeaders()
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers.add(
            name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
    let http = HTTPRequest(method: method, target: target, headers: headers)
    let host = headers["Host"] ?? ""
    let changes = method != "GET" && method != "HEAD"
    for guardToken in [nil, token] {
        let access = AccessGuard(token: guardToken)
        if let redirect = access.tokenRedirect(http) {
            require(guardToken != nil, "redirect without a token")
            if redirect.status == 303 {
                require(http.query("token") == token, "redirect for a wrong token")
                let location = redirect.headers["Location"] ?? ""
                require(
                    location.utf8.first == UInt8(ascii: "/") && !location.utf8.starts(with: "//".utf8)
                        && !location.utf8.starts(with: "/\\".utf8),
                    "redirect off the site: \(location)")
                require(
                    HTTPRequest(method: "GET", target: location).query("token") == nil,
                    "token left in the address: \(location)")
                require(!location.contains("\r") && !location.contains("\n"), "header injection")
            }
        }
        for needsToken in [false, true] {
            guard access.check(http, needsToken: needsToken) == nil else { continue }
            if guardToken == nil { require(AccessGuard.isLoopbackHost(host), "non-loopback Host let in: \(host)") }
            if needsToken, guardToken != nil {
                let offered = headers["X-Ferry-Token"] ?? AccessGuard.cookie(AccessGuard.cookieName, in: headers)
                require(offered == token, "let in without the token")
            }
            if changes { require(!host.isEmpty, "a change without a Host") }
        }
    }
    return 0
}
