import Foundation

/// What a card says about itself: `ferry info`.
///
/// Every field is optional: a card whose firmware lacks an operation answers 400,
/// and the field stays nil. ``supportedOperations`` and ``unsupportedOperations``
/// record which `command.cgi` operations were probed and how they answered.
public struct FlashAirInfo: Sendable, Hashable {
    /// Firmware version (op=108), e.g. `F19BAW3AW2.00.00`.
    public var firmware: String?
    /// The network name (op=104).
    public var ssid: String?
    /// The card's CID register (op=120), 32 hex digits (some firmware sends 31).
    public var cid: String?
    /// Free and total space (op=140).
    public var capacity: FlashAirCapacity?
    /// Whether `upload.cgi` works (op=118).
    public var uploadEnabled: Bool?
    /// The card's time zone in 15-minute units (op=221), e.g. 36 for UTC+9.
    public var timeZoneQuarterHours: Int?
    /// Time since boot of the host's last write (op=121).
    public var lastWrite: Duration?
    /// The control image path (op=109).
    public var controlImage: String?
    /// The wireless mode (op=110): 0/2/3 manual, 4/5/6 at power-on.
    public var wirelessMode: Int?
    /// The wireless timeout in milliseconds (op=111).
    public var wirelessTimeoutMilliseconds: Int?
    /// The 16-character application info (op=117).
    public var applicationInfo: String?
    /// The WebDAV level (op=220): 0 off, 1 read-only, 2 read and write.
    public var webDAVLevel: Int?
    /// The card's WebDAV ("drive mode"), when op=220 reports a level above 0 and
    /// the card's port answers `OPTIONS /` with a `DAV` header: `dav://HOST:PORT/`.
    public var webDAVURL: RemoteURL?
    /// Whether the WebDAV drive is read-only (`WEBDAV=1`); nil when the card offers none.
    public var webDAVReadOnly: Bool? {
        guard webDAVURL != nil, let webDAVLevel else { return nil }
        return webDAVLevel < 2
    }
    /// Operations that answered (not 400), ascending.
    public var supportedOperations: [Int] = []
    /// Operations that answered 400 (missing from this firmware or disabled), ascending.
    public var unsupportedOperations: [Int] = []

    /// Creates an empty description.
    public init() {}

    /// The operations `info()` asks for. Not op=102 (asking clears the flag for
    /// another poller), not 105 (the network key is a secret), not 106/107
    /// (they describe the asking client), not 130/131 (need arguments).
    public static let probedOperations = [104, 108, 109, 110, 111, 117, 118, 120, 121, 140, 220, 221]

    /// The card generation the firmware version names: `W-01` for `1.00.x` up to
    /// `W-04` for `4.00.x`; nil when the version does not end in one.
    public var generation: String? {
        guard let firmware else { return nil }
        let tail = firmware.reversed().prefix { $0.isNumber || $0 == "." }
        let version = String(tail.reversed())
        guard let major = version.split(separator: ".").first.flatMap({ Int($0) }), (1...9).contains(major),
            version.split(separator: ".").count == 3
        else { return nil }
        return "W-0\(major)"
    }

    /// The time zone as a `TimeZone`, when the card reported one.
    public var timeZone: TimeZone? {
        timeZoneQuarterHours.flatMap { TimeZone(secondsFromGMT: $0 * 15 * 60) }
    }
}
