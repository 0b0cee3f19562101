import FerryKit
import FerryServer
import Foundation

/// `ferry serve`: the browser UI and its JSON API on an ``HTTPServer``.
///
/// ```swift
/// let server = try WebServer(configuration: .init(source: try RemoteURL(parsing: "/srv/photos")))
/// try server.start()
/// print(server.openURL)  // http://127.0.0.1:PORT/
/// ```
public final class WebServer: Sendable {
    /// The configuration, with the access token filled in when one is required.
    public let configuration: WebConfiguration
    private let api: WebAPI
    private let server: HTTPServer

    /// Creates a server; nothing listens until ``start()``.
    ///
    /// - Parameter configuration: What to show and where to listen.
    /// - Throws: `FerryError` when the source URL has no backend.
    public init(configuration: WebConfiguration) throws {
        var configuration = configuration
        if configuration.accessToken == nil, !configuration.isLoopback {
            configuration.accessToken = AccessGuard.makeToken()
        }
        self.configuration = configuration
        let api = try WebAPI(configuration: configuration)
        self.api = api
        var options = HTTPServer.Options(
            maxConnections: 64, connectionTimeout: .seconds(60),
            temporaryDirectory: api.uploadSpool)
        if configuration.accessToken != nil {
            // A quarter of the slots only for clients that show the token, so a
            // crowd without it cannot keep them out.
            let access = AccessGuard(token: configuration.accessToken)
            options.reservedSlots = options.maxConnections / 4
            options.isTrusted = { access.proves($0) }
        }
        server = HTTPServer(host: configuration.host, port: configuration.port, options: options) { request in
            await api.handle(request)
        }
    }

    /// Binds and starts serving.
    ///
    /// - Throws: `HTTPServerError` when the address cannot be bound.
    public func start() throws {
        try server.start()
    }

    /// Stops serving and closes every connection.
    public func stop() {
        server.stop()
        api.cleanUp()
    }

    /// The port the server listens on.
    public var port: Int { server.port }

    /// The URL a person opens: the server's address, with the access token
    /// when one is required. A wildcard bind (`0.0.0.0`, `::`) shows this
    /// machine's host name instead.
    public var openURL: String { openURLs[0] }

    /// The page's address for every way in: on a wildcard host (`0.0.0.0`, `::`)
    /// one for each of this machine's non-loopback IPv4 addresses, by number (a
    /// phone on the same Wi-Fi usually cannot resolve the machine's name), the
    /// host name only when there is none; else the one host.
    public var openURLs: [String] {
        let host = configuration.host
        if host == "0.0.0.0" || host == "::" || host == "[::]" {
            let addresses = WebServer.localIPv4Addresses()
            let hosts = addresses.isEmpty ? [ProcessInfo.processInfo.hostName] : addresses
            return hosts.map(url(host:))
        }
        return [url(host: host)]
    }

    /// This machine's IPv4 addresses but loopback's (`getifaddrs`), interfaces that are up.
    static func localIPv4Addresses() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var out: [String] = []
        var p: UnsafeMutablePointer<ifaddrs>? = first
        while let a = p {
            defer { p = a.pointee.ifa_next }
            guard let sa = a.pointee.ifa_addr, sa.pointee.sa_family == sa_family_t(AF_INET),
                a.pointee.ifa_flags & UInt32(IFF_UP) != 0, a.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0
            else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                var addr = sin.pointee.sin_addr
                _ = inet_ntop(AF_INET, &addr, &text, socklen_t(INET_ADDRSTRLEN))
            }
            let s = String(cString: text)
            if !s.isEmpty && !out.contains(s) { out.append(s) }
        }
        return out
    }

    private func url(host: String) -> String {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let authority = bare.contains(":") ? "[\(bare)]:\(port)" : "\(bare):\(port)"
        var url = "http://\(authority)/"
        if let token = configuration.accessToken { url += "?token=\(token)" }
        return url
    }
}
