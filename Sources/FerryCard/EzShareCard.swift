import FerryKit
import FerryServer
import Foundation

/// `ferry card --kind ezshare`: serves a local folder as an ez Share Wi-Fi SD
/// card does, so Ferry's client, tests, demos and other ez Share tools work
/// without one.
///
/// `GET /dir?dir=A:%5CDCIM` answers the card's folder page (GB2312 names, 8.3
/// aliases in the links, unpadded dates, KB sizes rounded up, `.` and `..`, the
/// totals), `GET /download?file=DCIM%5C...` the bytes with `Range`, `ETag` and
/// `Last-Modified`, `GET /client?command=version` the firmware. The `dir` and
/// `file` parameters are taken percent-encoded or with raw backslashes. File
/// links are absolute, as on the card, but name the address the emulator was
/// reached at (the request's `Host`), never the card's 192.168.4.1. Nothing
/// can be changed; one connection at a time by default, as on the card.
///
/// ```swift
/// let card = try EzShareCard(folder: "/tmp/photos")
/// try card.start()
/// print(card.cardURL)  // ezshare://127.0.0.1:PORT/
/// card.stop()
/// ```
public final class EzShareCard: Sendable {
    /// How the emulated ez Share card presents itself.
    public struct Configuration: Sendable, Hashable {
        /// What `/client?command=version` reports.
        public var firmware = "LZ1801EDPG:1.0.0:2016-03-19:72 LZ1801EDRS:1.0.0:2016-03-19:72 SPEED:-H:SPEED"
        /// Connections, latency, rate: one connection by default, as the card.
        public var limits = CardLimits(maxConnections: 1)

        /// The defaults: the card's firmware string, one connection, full speed.
        public init() {}
    }

    /// The folder served, with symbolic links resolved.
    public let folder: String
    /// How the card presents itself.
    public let configuration: Configuration
    private let server: HTTPServer
    private let handler: EzShareHandler

    /// Prepares a card; nothing listens until ``start()``.
    ///
    /// - Throws: when `folder` does not exist or is not a folder.
    public init(folder: String, host: String = "127.0.0.1", port: Int = 0, configuration: Configuration = .init())
        throws
    {
        let root = try CardRoot(folder)
        self.folder = root.path.isEmpty ? "/" : root.path
        self.configuration = configuration
        let handler = EzShareHandler(root: root, firmware: configuration.firmware)
        self.handler = handler
        server = HTTPServer(host: host, port: port, options: configuration.limits.serverOptions) { request in
            handler.handle(request)
        }
    }

    /// Starts serving.
    ///
    /// - Throws: `HTTPServerError` when the address cannot be bound.
    public func start() throws {
        try server.start()
        handler.setFallbackHost(String(server.baseURL.dropFirst("http://".count)))
    }

    /// Stops serving and closes every connection.
    public func stop() {
        server.stop()
    }

    /// The port the card listens on.
    public var port: Int { server.port }

    /// `http://HOST:PORT/`, what a browser or another ez Share tool talks to.
    public var httpURL: String { server.baseURL + "/" }

    /// `ezshare://HOST:PORT/`, what Ferry's client talks to.
    public var cardURL: String { "ezshare" + server.baseURL.dropFirst(4) + "/" }
}
