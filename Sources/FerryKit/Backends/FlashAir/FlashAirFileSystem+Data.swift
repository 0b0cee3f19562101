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
        Data(try await read(path, range: range, sizeLimit: nil))
    }

    /// Reads a whole file from the card, refusing one over `limit` before its body.
    public func data(at path: String, limit: Int) async throws(FerryError) -> Data {
        try await HTTPMemoryRead.whole(limit: limit, shown: shown(path)) {
            (range, sizeLimit) async throws(FerryError) -> [UInt8] in
            try await read(path, range: range, sizeLimit: sizeLimit)
        }
    }

    private func read(_ path: String, range: Range<Int64>, sizeLimit: Int64?) async throws(FerryError) -> [UInt8] {
        try await HTTPMemoryRead.read(
            url.with(path: RemotePath.normalize(path, keepingServerRoot: false)), wireScheme: "http", range: range,
            sizeLimit: sizeLimit, engine: engine, verifyTLS: true)
    }

    /// The card's CID (op=120); nil when its firmware lacks it.
    public func mediumIdentifier() async throws(FerryError) -> String? { try await cardID() }

    /// Whether the card's `upload.cgi` works (op=118); nil when the firmware does not say.
    public func acceptsChanges() async throws(FerryError) -> Bool? { try await uploadsEnabled() }

    /// The card with one try and short timeouts, for watching op=121.
    public func forChangePolling(interval: Duration) -> any RemoteFileSystem { forPolling(interval: interval) }
}
