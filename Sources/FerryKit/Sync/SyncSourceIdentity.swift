import Foundation

/// Who a sync source is, for the import history: a FlashAir card by its CID (so
/// the same card is known at any address, and another card at the same address is
/// not), anything else by scheme, host, port and root path.
public struct SyncSourceIdentity: Sendable, Hashable {
    /// The history key: `flashair-cid:0353...` or `ftp://host:21/DCIM`.
    public var key: String
    /// The card's CID, when the source is a card that reports one (op=120).
    public var cid: String?

    /// The identity of a non-card source, or a card without op=120.
    public init(url: RemoteURL) {
        var root = url.path
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        if url.scheme == .file {
            key = "file://" + root
        } else {
            key = "\(url.scheme.rawValue)://\(url.host.lowercased()):\(url.port ?? url.defaultPort)\(root)"
        }
        cid = nil
    }

    /// The identity of a card with a CID.
    public init(cid: String) {
        let c = cid.lowercased()
        key = "flashair-cid:" + c
        self.cid = c
    }
}

extension FlashAirFileSystem {
    /// The card's CID (op=120); nil when the firmware lacks it.
    func cardID() async throws(FerryError) -> String? {
        do {
            let text = try await command(120, operation: "identify card").trimmedText
            guard (16...40).contains(text.count), text.allSatisfy(\.isHexDigit) else { return nil }
            return text
        } catch  where error.code == .unsupportedOperation {
            return nil
        }
    }

    /// Whether the card's upload.cgi works (op=118); nil when the firmware does not say.
    func uploadsEnabled() async throws(FerryError) -> Bool? {
        do {
            return try await command(118, operation: "uploads enabled").trimmedText == "1"
        } catch  where error.code == .unsupportedOperation {
            return nil
        }
    }

    /// The same card with a light request policy for watching: one try and short
    /// timeouts, so a vanished card is noticed in seconds, not after retries.
    func forPolling(interval: Duration) -> FlashAirFileSystem {
        var p = RequestPolicy()
        p.tries = 1
        p.connectTimeout = .seconds(5)
        p.stallTimeout = max(.seconds(5), interval)
        return FlashAirFileSystem(url: url, engine: engine, options: ConnectionOptions(maxConnections: 1), policy: p)
    }
}
