import FerryKit
import Foundation

/// How `ferry serve` runs: what it shows, where it listens, and its safety.
public struct WebConfiguration: Sendable {
    /// The source to show; `nil` opens on the connect page.
    public var source: RemoteURL?
    /// The address to bind. Anything but a loopback address requires the access token.
    public var host: String
    /// The port; 0 picks a free one.
    public var port: Int
    /// The access token. `nil` makes one when ``host`` is not loopback (and none on loopback).
    public var accessToken: String?
    /// Where thumbnails and copies of remote files are cached; `nil` uses
    /// `$XDG_CACHE_HOME/ferry` (or `~/.cache/ferry`).
    public var cacheDirectory: String?
    /// Connection options for the backend (TLS, connection limit).
    public var connectionOptions: ConnectionOptions
    /// Where the page's imports go (created on the first import); `nil` uses
    /// `~/Pictures/Ferry`. The folder keeps the history `ferry sync` keeps, so
    /// `ferry sync SOURCE DIR` and the page agree on what is imported.
    public var importDirectory: String?

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - source: The URL to show, or `nil` for the connect page.
    ///   - host: The address to bind.
    ///   - port: The port; 0 picks a free one.
    public init(source: RemoteURL? = nil, host: String = "127.0.0.1", port: Int = 0) {
        self.source = source
        self.host = host
        self.port = port
        self.accessToken = nil
        self.cacheDirectory = nil
        self.connectionOptions = ConnectionOptions()
        self.importDirectory = nil
    }

    /// Whether ``host`` only accepts connections from this machine.
    public var isLoopback: Bool {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    /// The import folder in use.
    public var resolvedImportDirectory: String {
        if let importDirectory { return importDirectory }
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSTemporaryDirectory()
        return home + "/Pictures/Ferry"
    }

    /// The cache folder in use.
    var resolvedCacheDirectory: String {
        if let cacheDirectory { return cacheDirectory }
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return xdg + "/ferry" }
        return (environment["HOME"] ?? NSTemporaryDirectory()) + "/.cache/ferry"
    }
}
