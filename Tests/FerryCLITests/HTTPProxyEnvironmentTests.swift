import FerryTestSupport
import Foundation
import Testing

/// `ferry get` with proxy variables in its environment. A request says "no
/// proxy" itself only when the environment names none (HTTPProxyEnvironment);
/// otherwise libcurl reads the variables as it always did: `http_proxy`,
/// `ALL_PROXY`, `no_proxy`, and `HTTP_PROXY` ignored for `http://`. The proxy
/// is a scripted server on 127.0.0.1 that answers requests in absolute form
/// itself, so nothing leaves the machine.
@Suite(.serialized)
struct HTTPProxyEnvironmentTests {
    let origin: ScriptedHTTPServer
    let proxy: ScriptedHTTPServer
    let ferry = TestProcess.ferryExecutable()

    init() throws {
        origin = try ScriptedHTTPServer { _ in .text("from the origin") }
        proxy = try ScriptedHTTPServer { request in .text("from the proxy for \(request.target)") }
    }

    /// Every variable unset (libcurl reads an empty one as unset), then `env`.
    func get(_ env: [String: String]) throws -> String {
        let work = try TempDir(prefix: "proxy-env")
        var all = [String: String]()
        for name in [
            "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
        ] {
            all[name] = ""
        }
        let out = try TestProcess.run(
            ferry, ["get", origin.url("/f.txt"), "-o", work.path, "--quiet"], environment: all.merging(env) { $1 })
        #expect(out.status == 0, "\(env): \(out.stderr)")
        return (try? String(contentsOfFile: work.file("f.txt"), encoding: .utf8)) ?? ""
    }

    var proxyURL: String { "http://127.0.0.1:\(proxy.port)" }

    @Test func withoutProxyVariablesTheOriginAnswers() throws {
        #expect(try get([:]) == "from the origin")
        #expect(try get(["HTTPS_PROXY": proxyURL, "NO_PROXY": "example.invalid"]) == "from the origin")
        #expect(proxy.requests.isEmpty)
        #expect(!origin.requests.isEmpty && origin.requests.allSatisfy { $0.target == "/f.txt" })
    }

    @Test func httpProxyAndAllProxyAreUsed() throws {
        let asked = "from the proxy for \(origin.url("/f.txt"))"
        #expect(try get(["http_proxy": proxyURL]) == asked)
        #expect(try get(["ALL_PROXY": proxyURL]) == asked)
        #expect(try get(["all_proxy": proxyURL]) == asked)
        // Each request in absolute form (a `get` may ask more than once).
        #expect(proxy.requests.count >= 3 && proxy.requests.allSatisfy { $0.target == origin.url("/f.txt") })
        #expect(origin.requests.isEmpty)
    }

    @Test func noProxyAndUppercaseHTTPProxyLeaveTheOriginDirect() throws {
        #expect(try get(["http_proxy": proxyURL, "no_proxy": "127.0.0.1"]) == "from the origin")
        #expect(try get(["ALL_PROXY": proxyURL, "NO_PROXY": "*"]) == "from the origin")
        // libcurl never reads HTTP_PROXY for http:// (a CGI program's
        // environment carries a client's Proxy: header under that name).
        #expect(try get(["HTTP_PROXY": proxyURL]) == "from the origin")
        #expect(proxy.requests.isEmpty)
        #expect(origin.requests.count >= 3 && origin.requests.allSatisfy { $0.target == "/f.txt" })
    }
}
