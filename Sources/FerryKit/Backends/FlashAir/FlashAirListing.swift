import Foundation

/// The FAT attribute bits FlashAir reports for each listed entry.
public struct FlashAirAttributes: OptionSet, Sendable, Hashable {
    /// The ATTRIBUTE number of the listing line.
    public var rawValue: UInt16

    /// Creates attributes from the listing's ATTRIBUTE number.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Bit 0: read-only.
    public static let readOnly = FlashAirAttributes(rawValue: 1 << 0)
    /// Bit 1: hidden.
    public static let hidden = FlashAirAttributes(rawValue: 1 << 1)
    /// Bit 2: system file.
    public static let system = FlashAirAttributes(rawValue: 1 << 2)
    /// Bit 3: volume label.
    public static let volumeLabel = FlashAirAttributes(rawValue: 1 << 3)
    /// Bit 4: directory.
    public static let directory = FlashAirAttributes(rawValue: 1 << 4)
    /// Bit 5: archive (set by FAT on every written file).
    public static let archive = FlashAirAttributes(rawValue: 1 << 5)
}

/// One line of an op=100 listing, field by field, as a card sends it.
public struct FlashAirRawEntry: Sendable, Hashable {
    /// The folder the entry is in (`/DCIM`); `/` or empty for the root.
    public var directory: String
    /// The file or folder name; may contain commas and non-ASCII characters.
    public var name: String
    /// Size in bytes (0 for folders).
    public var size: Int64
    /// FAT attribute bits.
    public var attributes: FlashAirAttributes
    /// FAT modification date and time, local to the camera.
    public var dateTime: FATDateTime

    /// Creates a listing line.
    public init(
        directory: String, name: String, size: Int64, attributes: FlashAirAttributes,
        dateTime: FATDateTime
    ) {
        self.directory = directory
        self.name = name
        self.size = size
        self.attributes = attributes
        self.dateTime = dateTime
    }
}

/// Reads and writes the `command.cgi?op=100` folder listing.
///
/// The body is `WLANSD_FILELIST`, then one `DIRECTORY,NAME,SIZE,ATTRIBUTE,DATE,TIME`
/// line per entry, CRLF-terminated. Names and folder names may contain commas, so
/// the four numbers are taken from the right and the known folder is stripped from
/// what remains.
public enum FlashAirListing {
    /// The first line of every listing.
    public static let header = "WLANSD_FILELIST"

    /// Parses an op=100 reply into entries, keeping the card's order.
    ///
    /// Tolerates a missing header, blank lines, and LF, CRLF or CR line ends.
    /// Entries are never dropped for bad values: an impossible date gives
    /// `modified == nil`, a size too large for `Int64` gives `size == nil`, an
    /// attribute too large for 16 bits gives kind `.other`. Folders get
    /// `size == nil`. Lines with fewer than five commas, a non-decimal numeric
    /// field, an empty name, or a name containing `/` are skipped and counted;
    /// `.` and `..` are skipped without counting.
    ///
    /// - Parameters:
    ///   - body: The reply body.
    ///   - folder: The folder that was asked for (`DIR=`), e.g. `/` or `/DCIM`; used to
    ///     split `DIRECTORY,NAME` and to build each entry's path.
    /// - Returns: The entries and the number of lines that could not be read.
    public static func parse(_ body: String, folder: String) -> (
        entries: [RemoteEntry], skippedLines: Int
    ) {
        let folder = RemotePath.normalize(folder, keepingServerRoot: false)
        var entries: [RemoteEntry] = []
        var skipped = 0
        for rawLine in body.utf8.split(
            omittingEmptySubsequences: true, whereSeparator: { $0 == 0x0A || $0 == 0x0D })
        {
            var line = Substring(rawLine)
            if line.first == "\u{FEFF}" { line = line.dropFirst() }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed == header { continue }
            switch parseLine(line, folder: folder) {
            case .entry(let entry): entries.append(entry)
            case .ignored: continue
            case .unreadable: skipped += 1
            }
        }
        return (entries, skipped)
    }

    /// Produces the op=100 reply a real card sends for `folder`.
    ///
    /// The header line, then `DIRECTORY,NAME,SIZE,ATTR,DATE,TIME` per entry, every
    /// line ending in CRLF. DIRECTORY is the entry's `directory`, or `folder` when that
    /// is empty; the root is written as an empty field. Entries whose name contains
    /// CR or LF cannot be written in this format and are left out.
    ///
    /// - Parameters:
    ///   - folder: The folder that was asked for (`DIR=`).
    ///   - entries: The lines to send, in order.
    /// - Returns: The reply body.
    public static func render(folder: String, entries: [FlashAirRawEntry]) -> String {
        var out = header + "\r\n"
        for entry in entries {
            if entry.name.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) { continue }
            let dir = RemotePath.normalize(entry.directory.isEmpty ? folder : entry.directory, keepingServerRoot: false)
            out += dir == "/" ? "" : dir
            out += ",\(entry.name),\(entry.size),\(entry.attributes.rawValue),"
            out += "\(entry.dateTime.date),\(entry.dateTime.time)\r\n"
        }
        return out
    }

    private enum LineResult {
        case entry(RemoteEntry)
        case ignored
        case unreadable
    }

    private enum Number {
        case value(UInt64)
        case tooLarge
    }

    private static func parseLine(_ line: Substring, folder: String) -> LineResult {
        // The four numeric fields, from the right.
        var fields: [Substring] = []
        var end = line.endIndex
        var cursor = line.endIndex
        while fields.count < 4 {
            guard let comma = line[..<cursor].lastIndex(of: ",") else { return .unreadable }
            fields.append(line[line.index(after: comma)..<end])
            end = comma
            cursor = comma
        }
        var numbers: [Number] = []
        for field in fields.reversed() {
            guard let n = decimal(field) else { return .unreadable }
            numbers.append(n)
        }
        let rest = line[..<end]  // DIRECTORY,NAME
        guard let name = splitName(rest, folder: folder) else { return .unreadable }
        if name == "." || name == ".." { return .ignored }
        guard !name.isEmpty, !name.contains("/") else { return .unreadable }

        var size: Int64?
        if case .value(let v) = numbers[0], v <= UInt64(Int64.max) { size = Int64(v) }
        var attributes: FlashAirAttributes?
        if case .value(let v) = numbers[1], v <= 0xFFFF {
            attributes = FlashAirAttributes(rawValue: UInt16(v))
        }
        var modified: RemoteTimestamp?
        if case .value(let d) = numbers[2], d <= 0xFFFF, case .value(let t) = numbers[3],
            t <= 0xFFFF
        {
            modified = FATDateTime(date: UInt16(d), time: UInt16(t)).timestamp
        }

        let kind: RemoteEntry.Kind
        if let attributes {
            if attributes.contains(.directory) {
                kind = .directory
            } else if attributes.contains(.volumeLabel) {
                kind = .other
            } else {
                kind = .file
            }
        } else {
            kind = .other
        }
        let attrs = attributes ?? []
        return .entry(
            RemoteEntry(
                name: name, path: RemotePath.join(folder, name), kind: kind,
                size: kind == .directory ? nil : size, modified: modified,
                isHidden: !attrs.isDisjoint(with: [.hidden, .system]),
                isReadOnly: attrs.contains(.readOnly)))
    }

    /// Splits `DIRECTORY,NAME` knowing the folder asked for; falls back to the first comma.
    private static func splitName(_ rest: Substring, folder: String) -> String? {
        let bytes = rest.utf8
        var prefixes: [String] = []
        if folder == "/" {
            prefixes = [",", "/,"]
        } else {
            prefixes = [folder + ",", folder + "/,"]
        }
        for prefix in prefixes where startsCaseInsensitive(bytes, with: prefix.utf8) {
            let start = bytes.index(bytes.startIndex, offsetBy: prefix.utf8.count)
            return String(Substring(bytes[start...]))
        }
        guard let comma = rest.firstIndex(of: ",") else { return nil }
        return String(rest[rest.index(after: comma)...])
    }

    /// Byte-wise prefix test, ignoring ASCII case only (FAT folder names are
    /// case-insensitive; the card may spell the folder as stored, not as asked).
    private static func startsCaseInsensitive(
        _ bytes: Substring.UTF8View, with prefix: String.UTF8View
    ) -> Bool {
        guard bytes.count >= prefix.count else { return false }
        return zip(bytes, prefix).allSatisfy { $0.asciiLowercased == $1.asciiLowercased }
    }

    /// A field of ASCII digits (surrounding spaces allowed); nil when it is anything else.
    private static func decimal(_ field: Substring) -> Number? {
        let digits = field.utf8.drop(while: { $0 == 0x20 || $0 == 0x09 })
            .reversed().drop(while: { $0 == 0x20 || $0 == 0x09 }).reversed()
        guard !digits.isEmpty else { return nil }
        var value: UInt64 = 0
        var overflow = false
        for b in digits {
            guard (0x30...0x39).contains(b) else { return nil }
            if overflow { continue }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(b - 0x30))
            if o1 || o2 { overflow = true } else { value = a }
        }
        return overflow ? .tooLarge : .value(value)
    }
}
