import FerryKit
import FerryServer
import Foundation

/// `ferry card`: serves a local folder as a Toshiba FlashAir card, so Ferry's
/// own client, tests, demos and third-party FlashAir tools can work without one.
///
/// It speaks the card's HTTP API as docs/FLASHAIR.md describes it: every
/// `command.cgi` operation, `upload.cgi` (WRITEPROTECT, UPDIR, FTIME, multipart
/// POST, DEL), `thumbnail.cgi`, `config.cgi`, and plain downloads with `Range`.
/// FAT attributes and dates come from the files (dates in local time). The
/// card's limits are available as options: one connection at a time, latency,
/// a byte rate, a firmware without some operations, no Range, no uploads.
///
/// ```swift
/// let card = try FlashAirCard(folder: "/tmp/photos")
/// try card.start()
/// print(card.cardURL)  // flashair://127.0.0.1:PORT/
/// card.stop()
/// ```
public final class FlashAirCard: Sendable {
    /// The folder served, with symbolic links resolved.
    public let folder: String
    /// How the card presents itself.
    public let configuration: FlashAirCardConfiguration
    private let server: HTTPServer

    /// Prepares a card; nothing listens until ``start()``.
    ///
    /// - Parameters:
    ///   - folder: The local folder to serve as the card's root.
    ///   - host: The address to bind (127.0.0.1 by default).
    ///   - port: The port; 0 lets the system pick one (read ``port`` after starting).
    ///   - configuration: Firmware, CID, uploads, Range, connections, latency, rate.
    /// - Throws: when `folder` does not exist or is not a folder.
    public init(
        folder: String, host: String = "127.0.0.1", port: Int = 0,
        configuration: FlashAirCardConfiguration = .init()
    ) throws {
        let root = try CardRoot(folder)
        self.folder = root.path.isEmpty ? "/" : root.path
        self.configuration = configuration
        let handler = CardHandler(root: root, configuration: configuration)
        let options = configuration.limits.serverOptions
        // Uploads are spooled in the system's temporary folder; storing one is a
        // rename when that is on the same file system, else a copy beside the
        // destination and a rename (CardHandler.place).
        server = HTTPServer(host: host, port: port, options: options) { request in
            handler.handle(request)
        }
    }

    /// Starts serving.
    ///
    /// - Throws: `HTTPServerError` when the address cannot be bound.
    public func start() throws {
        try server.start()
    }

    /// Stops serving and closes every connection.
    public func stop() {
        server.stop()
    }

    /// The port the card listens on.
    public var port: Int { server.port }

    /// `http://HOST:PORT/`, what a browser or a FlashAir tool talks to.
    public var httpURL: String { server.baseURL + "/" }

    /// `flashair://HOST:PORT/`, what Ferry's client talks to.
    public var cardURL: String { "flashair" + server.baseURL.dropFirst(4) + "/" }
}
