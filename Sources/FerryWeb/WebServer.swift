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
    public var openURL: String {
        var host = configuration.host
        if host == "0.0.0.0" || host == "::" || host == "[::]" {
            host = ProcessInfo.processInfo.hostName
        }
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let authority = bare.contains(":") ? "[\(bare)]:\(port)" : "\(bare):\(port)"
        var url = "http://\(authority)/"
        if let token = configuration.accessToken { url += "?token=\(token)" }
        return url
    }
}
