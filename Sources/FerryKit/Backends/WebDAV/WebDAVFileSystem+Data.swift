import Foundation

extension WebDAVFileSystem {
    /// Ranges come with HTTP `Range` requests: in-memory reads and thumbnails
    /// from the first bytes work.
    public var capabilities: RemoteCapabilities { [.rangeReads] }

    /// Reads one byte range with a `Range` request, as HTTP does
    /// (see ``RemoteFileSystem/data(at:range:)``).
    public func data(at path: String, range: Range<Int64>) async throws(FerryError) -> Data {
        Data(try await read(path, range: range, sizeLimit: nil))
    }

    /// Reads a whole file, refusing it before its body when the server announces
    /// a size over `limit`, else after `limit + 1` bytes.
    public func data(at path: String, limit: Int) async throws(FerryError) -> Data {
        try await HTTPMemoryRead.whole(limit: limit, shown: display(path)) {
            (range, sizeLimit) async throws(FerryError) -> [UInt8] in
            try await read(path, range: range, sizeLimit: sizeLimit)
        }
    }

    private func read(_ path: String, range: Range<Int64>, sizeLimit: Int64?) async throws(FerryError) -> [UInt8] {
        try await HTTPMemoryRead.read(
            target(path), wireScheme: wireScheme, range: range, sizeLimit: sizeLimit, engine: engine,
            verifyTLS: settings.verifyTLS, settings: settings)
    }
}
