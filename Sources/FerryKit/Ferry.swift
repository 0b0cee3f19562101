import Foundation

/// Entry points that pick the right backend for a URL.
public enum Ferry {
    /// Ferry's version.
    public static let version = "0.1.0"

    /// Opens the remote file system a URL names.
    ///
    /// - Throws: nothing today (every scheme has a backend); kept so a backend may refuse a URL.
    public static func fileSystem(for url: RemoteURL, options: ConnectionOptions = .init()) throws(FerryError)
        -> any RemoteFileSystem
    {
        if let limit = options.maxConnections, url.scheme != .ezshare && url.scheme != .smb {
            setConnectionLimit(limit, for: url)
        }
        switch url.scheme {
        case .http, .https:
            return HTTPFileSystem(url: url, options: options)
        case .ftp, .ftps, .ftpes:
            return FTPFileSystem(url: url, options: options)
        case .sftp:
            return SFTPFileSystem(url: url, options: options)
        case .flashair:
            return FlashAirFileSystem(url: url, options: options)
        case .ezshare:
            // One connection whatever the options say: the card serves no more.
            return EzShareFileSystem(url: url)
        case .file:
            return LocalFileSystem(url: url)
        case .camera, .ptpip:
            return CameraFileSystem(url: url)
        case .dav, .davs:
            return WebDAVFileSystem(url: url, options: options)
        case .smb:
            return SMBFileSystem(url: url, options: options)
        }
    }

    /// Starts downloading one URL to a local file.
    public static func download(_ url: RemoteURL, to destination: String, options: DownloadOptions = .init())
        -> Transfer
    {
        do {
            let fs = try fileSystem(for: url, options: ConnectionOptions(verifyTLS: options.verifyTLS))
            return fs.download(url.path, to: destination, options: options)
        } catch {
            return Transfer.failed(error, source: url.redacted, destination: destination)
        }
    }

    /// Sets the global connection limits of the shared transfer engine, and the
    /// transfers at once per SMB server and per SFTP server over OpenSSH (whose
    /// options set no `maxConnections`).
    ///
    /// - Parameters:
    ///   - total: Transfers at once over all servers.
    ///   - perHost: Transfers at once per server.
    ///   - widenFarServers: A web server (HTTP, HTTPS, WebDAV) whose answers
    ///     take 15 ms or more gets twice `perHost`: small files over a long
    ///     round trip are bound by the waits, not the link. A server with a
    ///     limit of its own (``setConnectionLimit(_:for:)``) keeps it.
    public static func setConnectionLimits(total: Int, perHost: Int, widenFarServers: Bool = false) {
        CurlEngine.shared.setLimits(
            .init(total: max(1, total), perHost: max(1, perHost), widensFarServers: widenFarServers))
        ConnectionSlots.setDefaultSize(perHost)
    }

    /// Sets the connection limit for one server (`RemoteURL.hostKey`); a FlashAir card gets 1.
    public static func setConnectionLimit(_ limit: Int, for url: RemoteURL) {
        CurlEngine.shared.setHostLimit(url.hostKey, limit)
    }
}
