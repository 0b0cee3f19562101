import Foundation
import Testing

@testable import FerryKit

/// When a request may say "no proxy" itself: only when no variable libcurl
/// could read for an HTTP(S) proxy has a value (the CLI test
/// `HTTPProxyEnvironmentTests` runs `ferry get` through a proxy).
struct HTTPProxyEnvironmentUnitTests {
    func isEmpty(_ env: [String: String]) -> Bool {
        var copies: [UnsafeMutablePointer<CChar>] = []
        defer { copies.forEach { free($0) } }
        return HTTPProxyEnvironment.isEmpty { name in
            guard let value = env[name] else { return nil }
            copies.append(strdup(value))
            return copies.last
        }
    }

    @Test func anySetVariableLeavesTheProxyToLibcurl() {
        #expect(isEmpty([:]))
        #expect(isEmpty(["PATH": "/bin", "ftp_proxy": "http://p:1", "socks_proxy": "x"]))
        // libcurl reads an empty variable as unset.
        #expect(isEmpty(Dictionary(uniqueKeysWithValues: HTTPProxyEnvironment.names.map { ($0, "") })))
        for name in HTTPProxyEnvironment.names {
            #expect(!isEmpty([name: "http://127.0.0.1:1"]), "\(name)")
        }
    }
}
