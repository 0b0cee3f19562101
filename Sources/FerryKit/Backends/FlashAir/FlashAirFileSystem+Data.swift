import Foundation

extension FlashAirFileSystem {
    /// A card counts folders (op=101), makes thumbnails (`thumbnail.cgi`),
    /// describes itself, reports writes (op=102, op=121), reads ranges when its
    /// firmware honours `Range` (others are cut off after the range), and wants
    /// one request at a time.
    public var capabilities: RemoteCapabilities {
        [.nativeCount, .sourceThumbnails, .cardInfo, .changeDetection, .rangeReads, .oneConnection]
    }

    /// Reads one byte range of a file on the card (`GET` with `Range`).
    public func data(at path: String, range: Range<Int64>) async throws(FerryError) -> Data {
        try await memoryFile(path).data(range: range)
    }

    /// Reads a whole file from the card, refusing one over `limit` before its body.
    public func data(at path: String, limit: Int) async throws(FerryError) -> Data {
        try await memoryFile(path).data(limit: limit)
    }

    private func memoryFile(_ path: String) -> HTTPMemoryRead.File {
        HTTPMemoryRead.File(shown: shown(path), engine: engine, wireScheme: "http") {
            url.with(path: RemotePath.normalize(path, keepingServerRoot: false))
        }
    }

    /// The card's CID (op=120); nil when its firmware lacks it.
    public func mediumIdentifier() async throws(FerryError) -> String? { try await cardID() }

    /// Whether the card's `upload.cgi` works (op=118); nil when the firmware does not say.
    public func acceptsChanges() async throws(FerryError) -> Bool? { try await uploadsEnabled() }

    /// The card with one try and short timeouts, for watching op=121.
    public func forChangePolling(interval: Duration) -> any RemoteFileSystem { forPolling(interval: interval) }
}
