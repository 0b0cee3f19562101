import Foundation

extension WebDAVFileSystem {
    /// Ranges come with HTTP `Range` requests: in-memory reads and thumbnails
    /// from the first bytes work.
    public var capabilities: RemoteCapabilities { [.rangeReads] }

    /// Reads one byte range with a `Range` request, as HTTP does
    /// (see ``RemoteFileSystem/data(at:range:)``).
    public func data(at path: String, range: Range<Int64>) async throws(FerryError) -> Data {
        try await memoryFile(path).data(range: range)
    }

    /// Reads a whole file, refusing it before its body when the server announces
    /// a size over `limit`, else after `limit + 1` bytes.
    public func data(at path: String, limit: Int) async throws(FerryError) -> Data {
        try await memoryFile(path).data(limit: limit)
    }

    private func memoryFile(_ path: String) -> HTTPMemoryRead.File {
        HTTPMemoryRead.File(
            shown: display(path), engine: engine, wireScheme: wireScheme, verifyTLS: settings.verifyTLS,
            settings: settings
        ) { target(path) }
    }
}
