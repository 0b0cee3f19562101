import Foundation

/// When a photo was taken, as its Exif data records it: `DateTimeOriginal`
/// with `SubSecTimeOriginal` and `OffsetTimeOriginal` (Exif 2.31).
///
/// Reads a JPEG (its Exif APP1 segment), a TIFF-based raw file (CR2, NEF,
/// ARW, DNG, ORF, RW2, PEF: the Exif IFD, else IFD0) or a CR3 file (its `CMT2`
/// box, the Exif IFD, else `CMT1`, IFD0; see `CR3`) from its first bytes:
/// ``prefixLength`` is enough for every camera, and 64 KiB for nearly all.
/// Where the original time is missing, `DateTimeDigitized` (with its own
/// sub-seconds and offset) stands in; `DateTime` (IFD0) is the time of the
/// last edit and is not used.
///
/// Pure and defensive: truncated data, looping or out-of-range IFD offsets,
/// bogus counts and impossible dates (`0000:00:00 00:00:00`, February 30) give
/// nil, never a crash or a hang.
public struct CaptureDate: Sendable, Hashable, CustomStringConvertible {
    /// The camera's clock when the photo was taken: a floating (zone-less)
    /// local time. This is the day to file a photo by (`--layout date`): the
    /// day as the photographer saw it, wherever they were.
    public var local: RemoteTimestamp
    /// The fraction of the second (`SubSecTimeOriginal`), in nanoseconds; 0 when not recorded.
    public var nanoseconds: Int
    /// The camera's offset from UTC in seconds (`OffsetTimeOriginal`, `+02:00` is 7200),
    /// or nil when not recorded (most cameras before 2017).
    public var utcOffsetSeconds: Int?

    /// Creates a capture date.
    ///
    /// - Precondition: `local` is floating and `nanoseconds` is in 0..<1_000_000_000.
    public init(local: RemoteTimestamp, nanoseconds: Int = 0, utcOffsetSeconds: Int? = nil) {
        precondition(local.zone == .floating && (0..<1_000_000_000).contains(nanoseconds), "bad capture date")
        self.local = local
        self.nanoseconds = nanoseconds
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    /// The time as a ``RemoteTimestamp``: UTC when the offset is recorded,
    /// else the floating local time (as a card's FAT times are).
    public var timestamp: RemoteTimestamp { utc ?? local }

    /// The UTC time, when the offset is recorded.
    public var utc: RemoteTimestamp? {
        guard let utcOffsetSeconds else { return nil }
        let seconds = local.date(floatingIn: TimeZone(identifier: "UTC")!).timeIntervalSince1970
        return RemoteTimestamp(utc: Date(timeIntervalSince1970: seconds - Double(utcOffsetSeconds)))
    }

    /// The instant, with the sub-seconds; a time without an offset is read in `timeZone`.
    public func date(floatingIn timeZone: TimeZone = .current) -> Date {
        let zone = utcOffsetSeconds.flatMap { TimeZone(secondsFromGMT: $0) } ?? timeZone
        return local.date(floatingIn: zone).addingTimeInterval(Double(nanoseconds) / 1e9)
    }

    /// `2024-06-01T12:00:00.250+02:00`: the local time, the fraction when
    /// recorded, and the offset when recorded.
    public var description: String {
        var s = local.iso8601
        if nanoseconds > 0 {
            var fraction = String(format: "%09d", nanoseconds)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            s += "." + fraction
        }
        if let offset = utcOffsetSeconds {
            let minutes = abs(offset) / 60
            s += String(format: "%@%02d:%02d", offset < 0 ? "-" : "+", minutes / 60, minutes % 60)
        }
        return s
    }

    /// The extensions (lowercase) of the files ``read(from:)`` finds a date in:
    /// JPEG, the TIFF-based raw formats and CR3. `ferry sync --layout date` files these
    /// by the day they were taken, the rest by their time on the source.
    public static let fileExtensions: Set<String> = [
        "jpg", "jpeg", "jpe", "tif", "tiff", "dng", "cr2", "nef", "nrw", "arw", "srf", "sr2", "pef", "orf", "rw2",
        "cr3",
    ]

    /// How many leading bytes of a photo to read for its date (256 KiB).
    public static let prefixLength = 256 * 1024

    /// The capture date in a photo's first bytes (a JPEG, a TIFF-based raw file or a CR3 file).
    ///
    /// - Parameter bytes: The file, or its first bytes (``prefixLength`` is enough).
    /// - Returns: The date, or nil when the bytes record none that is valid.
    public static func read(from bytes: some Sequence<UInt8>) -> CaptureDate? {
        let bytes = Array(bytes)
        // (TIFF, IFD) pairs: the Exif IFD first, then IFD0.
        var ifds: [(ExifTIFF, ExifTIFF.IFD)] = []
        if CR3.isCR3(bytes) {
            // CR3: CMT2 is a TIFF of its own whose IFD0 is the Exif IFD; CMT1's IFD0 is IFD0.
            let (ifd0, exif) = ExifTIFF.inCR3(bytes)
            for tiff in [exif, ifd0] {
                var visited: Set<Int> = []
                if let tiff, let ifd = tiff.ifd(at: tiff.firstIFD, visited: &visited) { ifds.append((tiff, ifd)) }
            }
        } else {
            guard let tiff = ExifTIFF.locate(in: bytes) else { return nil }
            var visited: Set<Int> = []
            guard let ifd0 = tiff.ifd(at: tiff.firstIFD, visited: &visited) else { return nil }
            if let exif = tiff.ifd(at: tiff.number(ifd0[0x8769]), visited: &visited) { ifds.append((tiff, exif)) }
            ifds.append((tiff, ifd0))
        }
        // (date, sub-seconds, offset) tags: the original time, then the digitized one.
        for (dateTag, subTag, offsetTag) in [(0x9003, 0x9291, 0x9011), (0x9004, 0x9292, 0x9012)] {
            for (tiff, ifd) in ifds {
                guard let local = parseDate(tiff.text(ifd[dateTag])) else { continue }
                let offset = ifds.lazy.compactMap { parseOffset($0.0.text($0.1[offsetTag])) }.first
                return CaptureDate(
                    local: local, nanoseconds: parseFraction(tiff.text(ifd[subTag])) ?? 0,
                    utcOffsetSeconds: parseOffset(tiff.text(ifd[offsetTag])) ?? offset)
            }
        }
        return nil
    }

    /// The capture date of a local file, reading only its first ``prefixLength`` bytes.
    ///
    /// - Returns: The date, or nil when the file records none.
    /// - Throws: `FerryError` (`.localIO`) when the file cannot be opened or read.
    public static func read(fileAt path: String) throws(FerryError) -> CaptureDate? {
        return read(from: try LocalFile.prefix(ofFileAt: path, length: prefixLength))
    }

    /// `YYYY:MM:DD HH:MM:SS` (Exif; `-` between the date's fields is accepted), or nil.
    static func parseDate(_ text: String?) -> RemoteTimestamp? {
        guard let text else { return nil }
        let c = Array(text.utf8)
        guard c.count >= 19, c[10] == 0x20 || c[10] == 0x54 else { return nil }
        func field(_ range: Range<Int>) -> Int? {
            var v = 0
            for i in range {
                guard (0x30...0x39).contains(c[i]) else { return nil }
                v = v * 10 + Int(c[i] - 0x30)
            }
            return v
        }
        for (i, separator) in [(4, [0x3A, 0x2D]), (7, [0x3A, 0x2D]), (13, [0x3A]), (16, [0x3A])] {
            guard separator.contains(Int(c[i])) else { return nil }
        }
        guard let year = field(0..<4), let month = field(5..<7), let day = field(8..<10),
            let hour = field(11..<13), let minute = field(14..<16), let second = field(17..<19)
        else { return nil }
        return RemoteTimestamp(
            year: year, month: month, day: day, hour: hour, minute: minute, second: min(second, 59),
            zone: .floating)
    }

    /// Sub-second digits (`"25"` is 0.25 s) as nanoseconds; digits past the ninth are dropped.
    static func parseFraction(_ text: String?) -> Int? {
        guard let text, !text.isEmpty else { return nil }
        let digits = Array(text.utf8)
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        var value = 0
        for i in 0..<9 { value = value * 10 + (i < digits.count ? Int(digits[i] - 0x30) : 0) }
        return value
    }

    /// `+HH:MM` or `-HH:MM` as seconds east of UTC, within ±18 hours; nil otherwise.
    static func parseOffset(_ text: String?) -> Int? {
        guard let text else { return nil }
        let c = Array(text.utf8)
        guard c.count == 6, c[0] == 0x2B || c[0] == 0x2D, c[3] == 0x3A,
            [1, 2, 4, 5].allSatisfy({ (0x30...0x39).contains(c[$0]) })
        else { return nil }
        let hours = Int(c[1] - 0x30) * 10 + Int(c[2] - 0x30)
        let minutes = Int(c[4] - 0x30) * 10 + Int(c[5] - 0x30)
        guard hours <= 18, minutes < 60 else { return nil }
        let seconds = (hours * 60 + minutes) * 60
        return c[0] == 0x2D ? -seconds : seconds
    }
}
