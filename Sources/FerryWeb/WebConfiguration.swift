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
    /// More folders the page may send its imports to instead (each keeps its own
    /// history, as `ferry sync` does); ``resolvedImportDirectory`` stays the default.
    /// The page can choose only among these: it never names a folder of its own.
    public var otherImportDirectories: [String] = []
    /// The most bytes of thumbnails and previews kept on disk (a quarter for
    /// thumbnails, the rest for previews); `nil` reads `FERRY_CACHE_SIZE`, else 512 MiB.
    public var imageCacheLimit: Int64?
    /// The most bytes of copies of remote files kept on disk; `nil` reads
    /// `FERRY_CACHE_SIZE`, else 1 GiB.
    public var fileCacheLimit: Int64?

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
        self.imageCacheLimit = nil
        self.fileCacheLimit = nil
    }

    /// The default bound of thumbnails and previews together: 512 MiB.
    public static let defaultImageCacheLimit: Int64 = 512 << 20
    /// The default bound of copies of remote files: 1 GiB.
    public static let defaultFileCacheLimit: Int64 = 1 << 30

    /// The image caches' bound in use.
    var resolvedImageCacheLimit: Int64 {
        imageCacheLimit ?? Self.environmentCacheLimit ?? Self.defaultImageCacheLimit
    }

    /// The copies' bound in use.
    var resolvedFileCacheLimit: Int64 {
        fileCacheLimit ?? Self.environmentCacheLimit ?? Self.defaultFileCacheLimit
    }

    private static var environmentCacheLimit: Int64? {
        ProcessInfo.processInfo.environment["FERRY_CACHE_SIZE"].flatMap { byteCount($0) }
    }

    /// A size as `ferry serve --cache-size` takes it: bytes, or a number with
    /// `K`, `M`, `G` or `T` (powers of 1024, an optional `B` or `iB` after it).
    ///
    /// - Parameter text: The size, e.g. `512M`, `2G`, `1048576`.
    /// - Returns: The bytes, or nil when `text` is no size.
    public static func byteCount(_ text: String) -> Int64? {
        var t = text.trimmingCharacters(in: .whitespaces).uppercased()
        for suffix in ["IB", "B"] where t.hasSuffix(suffix) && t.count > suffix.count {
            t.removeLast(suffix.count)
            break
        }
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var unit: Int64 = 1
        if let last = t.last, let u = units[last] {
            unit = u
            t.removeLast()
        }
        guard let n = Double(t), n >= 0, n.isFinite, n * Double(unit) < 9e18 else { return nil }
        return Int64(n * Double(unit))
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

    /// The folders the page may import to: the default first, then the others, each once.
    public var importChoices: [String] {
        var seen = Set<String>()
        return ([resolvedImportDirectory] + otherImportDirectories).filter { seen.insert($0).inserted }
    }

    /// The cache folder in use.
    var resolvedCacheDirectory: String {
        if let cacheDirectory { return cacheDirectory }
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return xdg + "/ferry" }
        return (environment["HOME"] ?? NSTemporaryDirectory()) + "/.cache/ferry"
    }
}
