import Foundation

/// The short forms: default options, `URL`-typed local files, `mkdir -p`.
extension RemoteFileSystem {
    /// Starts downloading `path` with the default options: refuse to overwrite,
    /// resume a `.part` left by an earlier run, create missing parent folders.
    ///
    /// - Parameters:
    ///   - path: The remote file.
    ///   - destination: The local file; a leading `~` is the home folder.
    /// - Returns: The running transfer; await its `result`.
    public func download(_ path: String, to destination: String) -> Transfer {
        download(path, to: destination, options: DownloadOptions())
    }

    /// Starts downloading `path` to a local file URL.
    ///
    /// - Parameters:
    ///   - path: The remote file.
    ///   - destination: A `file:` URL.
    ///   - options: Overwrite policy, resume, retries; the defaults when left out.
    /// - Returns: The running transfer; await its `result`.
    public func download(_ path: String, to destination: URL, options: DownloadOptions = DownloadOptions())
        -> Transfer
    {
        download(path, to: destination.path, options: options)
    }

    /// Starts uploading a local file with the default options: refuse to
    /// overwrite, create missing remote folders, resume where the server allows.
    ///
    /// - Parameters:
    ///   - source: The local file; a leading `~` is the home folder.
    ///   - path: The remote file.
    /// - Returns: The running transfer; await its `result`.
    public func upload(_ source: String, to path: String) -> Transfer {
        upload(source, to: path, options: UploadOptions())
    }

    /// Starts uploading a local file URL.
    ///
    /// - Parameters:
    ///   - source: A `file:` URL.
    ///   - path: The remote file.
    ///   - options: Overwrite policy, parents, resume; the defaults when left out.
    /// - Returns: The running transfer; await its `result`.
    public func upload(_ source: URL, to path: String, options: UploadOptions = UploadOptions()) -> Transfer {
        upload(source.path, to: path, options: options)
    }

    /// Creates a folder and any missing folders above it; one that exists is fine.
    ///
    /// - Parameter path: The folder.
    /// - Throws: `FerryError`: the server's refusal, `destinationExists` for a file of that name.
    public func makeDirectory(_ path: String) async throws(FerryError) {
        try await makeDirectory(path, createParents: true)
    }
}

extension Ferry {
    /// Opens the remote file system a Foundation `URL` names (`ftp://`, `https://`,
    /// `flashair://`, `file://`).
    ///
    /// - Parameters:
    ///   - url: The URL.
    ///   - options: TLS and credentials; the defaults when left out.
    /// - Returns: The file system; its `url` is the parsed URL.
    /// - Throws: `FerryError` `invalidURL` or `unsupportedScheme`.
    public static func fileSystem(for url: URL, options: ConnectionOptions = .init()) throws(FerryError)
        -> any RemoteFileSystem
    {
        try fileSystem(for: RemoteURL(parsing: url.absoluteString), options: options)
    }

    /// Starts downloading a Foundation `URL` to a local file.
    ///
    /// - Parameters:
    ///   - url: The remote file.
    ///   - destination: The local file (a path with `~`, or use the `URL` form).
    ///   - options: Overwrite policy, resume, retries; the defaults when left out.
    /// - Returns: The running transfer; a bad URL gives one that already failed.
    public static func download(_ url: URL, to destination: String, options: DownloadOptions = .init()) -> Transfer {
        do {
            return download(try RemoteURL(parsing: url.absoluteString), to: destination, options: options)
        } catch {
            return Transfer.failed(error, source: url.absoluteString, destination: destination)
        }
    }

    /// Starts downloading a Foundation `URL` to a local file URL.
    ///
    /// - Parameters:
    ///   - url: The remote file.
    ///   - destination: A `file:` URL.
    ///   - options: Overwrite policy, resume, retries; the defaults when left out.
    /// - Returns: The running transfer.
    public static func download(_ url: URL, to destination: URL, options: DownloadOptions = .init()) -> Transfer {
        download(url, to: destination.path, options: options)
    }
}
