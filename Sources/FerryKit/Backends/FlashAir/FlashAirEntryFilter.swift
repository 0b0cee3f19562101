/// Tells which entries of a card a photo browser should hide by default: the
/// card's own system folders (`/SD_WLAN`, `/GUPIXINF`), its control image (op=109),
/// and entries with the FAT hidden or system attribute.
///
/// ```swift
/// let filter = FlashAirEntryFilter(controlImage: "/DCIM/100__TSB/FA000001.JPG")
/// let shown = filter.visible(entries)  // what `ferry ls` prints without --all
/// ```
public struct FlashAirEntryFilter: Sendable, Hashable {
    /// Folders in the root that belong to the card, not to the camera.
    public static let systemFolders = ["SD_WLAN", "GUPIXINF"]

    /// The control image path the card reported (op=109), if any.
    public var controlImage: String?

    /// Creates a filter.
    ///
    /// - Parameter controlImage: The path from op=109, or nil when the card has none.
    public init(controlImage: String? = nil) {
        self.controlImage = controlImage
    }

    /// Whether `path` is one of the card's own entries. FAT names compare without case.
    ///
    /// - Parameter path: An absolute, decoded path.
    public func isSystemPath(_ path: String) -> Bool {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        for folder in FlashAirEntryFilter.systemFolders where Self.sameName(p, "/" + folder) {
            return true
        }
        if let controlImage, Self.sameName(p, RemotePath.normalize(controlImage, keepingServerRoot: false)) {
            return true
        }
        return false
    }

    /// Whether a browser should hide `entry` unless asked for everything.
    ///
    /// - Parameter entry: An entry as listed.
    public func hides(_ entry: RemoteEntry) -> Bool {
        entry.isHidden || isSystemPath(entry.path)
    }

    /// The entries a browser shows by default, in the same order.
    ///
    /// - Parameter entries: A listing.
    public func visible(_ entries: [RemoteEntry]) -> [RemoteEntry] {
        entries.filter { !hides($0) }
    }

    /// The entry with `isHidden` set when it is a system entry.
    ///
    /// - Parameter entry: An entry as listed.
    public func marked(_ entry: RemoteEntry) -> RemoteEntry {
        guard !entry.isHidden, isSystemPath(entry.path) else { return entry }
        var e = entry
        e.isHidden = true
        return e
    }

    private static func sameName(_ a: String, _ b: String) -> Bool {
        a == b || a.lowercased() == b.lowercased()
    }
}
