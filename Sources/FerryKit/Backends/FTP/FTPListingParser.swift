import Foundation

/// Reads FTP folder listings: `LIST` replies (Unix `ls -l`, DOS/IIS, NetWare) and
/// `MLSD`/`MLST` fact lines (RFC 3659).
///
/// Every function is total: any input, however broken, yields entries and a count of
/// skipped lines, never a crash and never an entry with a guessed field. The parser scans
/// UTF-8 bytes by hand (no regular expressions) so 100k lines take milliseconds.
///
/// A line is read as a `Line`: its bytes (an `ArraySlice` of the reply, so that every
/// token and field is a slice with the reply's indices) and its blank-separated tokens.
/// This file holds the entry points, the choice of format per line and the pieces the
/// formats share; `+Unix.swift`, `+DOS.swift` and `+MLSD.swift` read one format each.
public enum FTPListingParser {
    /// Parses the body of a `LIST` reply.
    ///
    /// Each line may be in Unix, DOS/IIS or NetWare style; the style is chosen per line.
    /// Line ends may be any mix of CRLF and LF.
    ///
    /// - Parameters:
    ///   - text: The reply body, decoded (lossily, if the server's bytes were not UTF-8).
    ///   - folder: The absolute decoded path of the listed folder, such as `/pub`. Each
    ///     entry's `path` is this folder joined with the entry's name.
    ///   - now: The current time, used to infer the year of recent Unix dates
    ///     (`Mon DD HH:MM`); a date more than one day after `now` belongs to last year.
    ///   - timeZone: The zone in which the year of `now` is read. LIST times themselves are
    ///     server-local and are returned as `.floating` timestamps.
    /// - Returns: The entries, and how many lines could not be read.
    public static func parseLIST(
        _ text: String, folder: String, now: Date,
        timeZone: TimeZone = TimeZone(identifier: "UTC")!
    ) -> DirectoryListing {
        let context = ListContext(folder: folder, now: now, timeZone: timeZone)
        var text = text
        return text.withUTF8 { reply in
            var line = Line()
            var listing = DirectoryListing()
            forEachLine(reply) { lineBytes in
                line.read(lineBytes)
                listing.add(parseListLine(line, context))
            }
            return listing
        }
    }

    /// Parses the body of an `MLSD` reply: one `fact=value;...; name` line per entry.
    ///
    /// Types `cdir` and `pdir` (and names `.`, `..`) are left out and not counted. A name
    /// containing `/` is counted as skipped, since a listing names children only.
    ///
    /// - Parameters:
    ///   - text: The reply body.
    ///   - folder: The absolute decoded path of the listed folder, such as `/pub`.
    /// - Returns: The entries, and how many lines could not be read.
    public static func parseMLSD(_ text: String, folder: String) -> DirectoryListing {
        let prefix = folderPrefix(folder)
        var text = text
        return text.withUTF8 { reply in
            var listing = DirectoryListing()
            forEachLine(reply) { line in
                listing.add(parseMLSDListLine(line, prefix: prefix))
            }
            return listing
        }
    }

    /// Parses one `LIST` line.
    ///
    /// - Returns: The entry, or nil when the line is not one (also for `total N`, `.`, `..`).
    static func parseLISTLine(
        _ line: Substring, folder: String, now: Date,
        timeZone: TimeZone = TimeZone(identifier: "UTC")!
    ) -> RemoteEntry? {
        guard !line.isEmpty else { return nil }
        let context = ListContext(folder: folder, now: now, timeZone: timeZone)
        var line = line
        return line.withUTF8 { bytes in
            var tokens = Line()
            tokens.read(trimLineEnd(bytes[...]))
            if case .entry(let entry) = parseListLine(tokens, context) { return entry }
            return nil
        }
    }

    /// Chooses the format of one `LIST` line: a line starting with a digit is DOS/IIS
    /// (its date comes first), `total N` is noise, anything else Unix or NetWare.
    static func parseListLine(_ line: Line, _ context: ListContext) -> ListingLine {
        guard let first = line.tokens.first else { return .ignored }
        if isDigit(first.first!) { return parseDOS(line, context) }
        if equalsLowercased(first, "total"), line.tokens.count <= 2 { return .ignored }
        return parseUnix(line, context)
    }
}

// MARK: - Shared pieces

extension FTPListingParser {
    /// What one line turned out to be.
    enum ListingLine {
        case entry(RemoteEntry)
        /// Known noise: blank, `total N`, `.`, `..`, `cdir`, `pdir`. Not counted.
        case ignored
        /// Unreadable; counted in `skippedLines`.
        case invalid
    }

    /// Bytes of a listing with the indices of the reply they came from: a line, a
    /// token, a field inside a token. A view into the reply's UTF-8, valid only
    /// while the entry point that made it runs (no reference counting per token:
    /// `ArraySlice` tokens made the parser twice as slow).
    typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    /// No bytes.
    static var noBytes: Bytes { UnsafeBufferPointer<UInt8>(start: nil, count: 0)[...] }

    /// One line of a listing: its bytes (without the line end) and its runs of
    /// non-blank bytes. Reused from line to line, so that its token storage is
    /// allocated once per listing.
    struct Line {
        private(set) var bytes: Bytes = FTPListingParser.noBytes
        private(set) var tokens: [Bytes] = []

        init() { tokens.reserveCapacity(16) }

        /// Reads a new line, replacing the previous one.
        mutating func read(_ line: Bytes) {
            bytes = line
            tokens.removeAll(keepingCapacity: true)
            let p = FTPListingParser.raw(line)
            var i = line.startIndex
            let end = line.endIndex
            while i < end {
                while i < end, FTPListingParser.isBlank(p[i]) { i += 1 }
                if i == end { break }
                let start = i
                while i < end, !FTPListingParser.isBlank(p[i]) { i += 1 }
                tokens.append(line[start..<i])
            }
        }

        /// The bytes from `index` to the end of the line (empty past the end).
        func rest(from index: Int) -> Bytes {
            index < bytes.endIndex ? bytes[index...] : bytes[bytes.endIndex...]
        }
    }

    /// What `LIST` parsing needs to know besides the line, computed once per listing.
    struct ListContext {
        /// The folder with one trailing slash, ready to prepend to names.
        let prefix: String
        /// The year of "now" in the requested zone.
        let nowYear: Int
        /// "Now" as minutes since 1970-01-01 00:00 on the wall clock of the requested zone.
        let nowMinutes: Int

        init(folder: String, now: Date, timeZone: TimeZone) {
            prefix = FTPListingParser.folderPrefix(folder)
            let seconds = now.timeIntervalSince1970 + Double(timeZone.secondsFromGMT(for: now))
            // Clamp so absurd injected dates cannot trap the Int conversion.
            let minutes = Int((max(-1e14, min(1e14, seconds)) / 60).rounded(.down))
            let days = minutes >= 0 ? minutes / 1440 : (minutes - 1439) / 1440
            nowYear = FTPListingParser.civilFromDays(days).year
            nowMinutes = minutes
        }
    }
}

extension DirectoryListing {
    mutating func add(_ line: FTPListingParser.ListingLine) {
        switch line {
        case .entry(let entry): entries.append(entry)
        case .ignored: break
        case .invalid: skippedLines += 1
        }
    }
}

extension FTPListingParser {
    static var space: UInt8 { UInt8(ascii: " ") }
    static var tab: UInt8 { UInt8(ascii: "\t") }
    static var lf: UInt8 { UInt8(ascii: "\n") }
    static var cr: UInt8 { UInt8(ascii: "\r") }
    static var slash: UInt8 { UInt8(ascii: "/") }

    @inline(__always) static func isBlank(_ c: UInt8) -> Bool { c == space || c == tab }
    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c &- 48 < 10 }
}

extension FTPListingParser {
    /// Calls `body` with every line, without its LF or CRLF.
    static func forEachLine(_ b: UnsafeBufferPointer<UInt8>, _ body: (Bytes) -> Void) {
        guard let p = b.baseAddress else { return }
        var start = 0
        let n = b.count
        while start < n {
            var end = start
            while end < n, p[end] != lf { end += 1 }
            var hi = end
            if hi > start, p[hi - 1] == cr { hi -= 1 }
            body(b[start..<hi])
            start = end + 1
        }
    }

    /// Where the reply's bytes are, for loops over single bytes: indexing an
    /// `UnsafePointer` costs nothing even in a debug build, a `Slice`'s subscript
    /// is a call. Every `Bytes` but `noBytes` is a view into a reply that is not
    /// empty (the entry points return early for an empty one), so it has one.
    @inline(__always) static func raw(_ s: Bytes) -> UnsafePointer<UInt8> {
        s.base.baseAddress!
    }

    /// A single line with any trailing CR/LF removed.
    static func trimLineEnd(_ b: Bytes) -> Bytes {
        var hi = b.endIndex
        while hi > b.startIndex, b[hi - 1] == lf || b[hi - 1] == cr { hi -= 1 }
        return b[b.startIndex..<hi]
    }

    static func folderPrefix(_ folder: String) -> String {
        var f = folder
        // Bytes, not Characters (`"/\u{301}".hasPrefix("/")` is false in Swift).
        if f.utf8.first != slash { f = "/" + f }
        if f.utf8.last != slash { f += "/" }
        return f
    }

    static func text(_ s: Bytes) -> String {
        String(decoding: s, as: UTF8.self)
    }

    enum NameCheck { case ok, dot, bad }

    /// A listing names children: `.`/`..` are noise, and an empty name or one with `/` or
    /// NUL would make a path outside the folder (or no path at all).
    static func checkName(_ name: Bytes) -> NameCheck {
        guard let first = name.first else { return .bad }
        if first == UInt8(ascii: "."),
            name.count == 1 || (name.count == 2 && name.last == UInt8(ascii: "."))
        {
            return .dot
        }
        let p = raw(name)
        for i in name.startIndex..<name.endIndex where p[i] == slash || p[i] == 0 { return .bad }
        return .ok
    }

    /// The entry a `LIST` line names, or `.ignored` for `.` and `..`, `.invalid` for
    /// a name no child can have.
    static func listEntry(
        _ name: Bytes, prefix: String, kind: RemoteEntry.Kind, size: Int64?, modified: RemoteTimestamp,
        target: String?
    ) -> ListingLine {
        switch checkName(name) {
        case .dot: return .ignored
        case .bad: return .invalid
        case .ok: break
        }
        let nameText = text(name)
        return .entry(
            RemoteEntry(
                name: nameText, path: prefix + nameText, kind: kind, size: size, modified: modified,
                symlinkTarget: target))
    }

    /// True when the bytes equal `literal` ignoring ASCII case (`literal` is lowercase).
    static func equalsLowercased(_ s: Bytes, _ literal: String) -> Bool {
        guard s.count == literal.utf8.count else { return false }
        let p = raw(s)
        var i = s.startIndex
        for c in literal.utf8 {
            if p[i].asciiLowercased != c { return false }
            i += 1
        }
        return true
    }

    static func hasLowercasedPrefix(_ s: Bytes, _ literal: String) -> Bool {
        let n = literal.utf8.count
        return s.count >= n && equalsLowercased(s.prefix(n), literal)
    }

    /// A small unsigned number of 1...`maxDigits` digits, exactly filling the bytes.
    static func number(_ s: Bytes, maxDigits: Int) -> Int? {
        guard !s.isEmpty, s.count <= maxDigits else { return nil }
        let p = raw(s)
        var v = 0
        for i in s.startIndex..<s.endIndex {
            guard isDigit(p[i]) else { return nil }
            v = v * 10 + Int(p[i] &- 48)
        }
        return v
    }

    enum Size {
        case value(Int64)
        case overflow

        /// The size, when it fits.
        var bytes: Int64? {
            if case .value(let v) = self { return v }
            return nil
        }
    }

    /// A byte count of digits (and, when `allowCommas`, grouping commas).
    /// Nil when the bytes are not a number; `.overflow` when they are one beyond `Int64`.
    static func size(_ s: Bytes, allowCommas: Bool = false) -> Size? {
        var v: Int64 = 0
        var digits = 0
        var overflow = false
        let p = raw(s)
        for i in s.startIndex..<s.endIndex {
            let c = p[i]
            if c == UInt8(ascii: ","), allowCommas { continue }
            guard isDigit(c) else { return nil }
            digits += 1
            if !overflow {
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (sum, o2) = m.addingReportingOverflow(Int64(c &- 48))
                if o1 || o2 { overflow = true } else { v = sum }
            }
        }
        guard digits > 0 else { return nil }
        return overflow ? .overflow : .value(v)
    }

    /// `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fff` (fraction dropped). Values are not range-checked
    /// here: the shape says "this is a time", `RemoteTimestamp` then says whether it is real.
    static func clockTime(_ s: Bytes) -> (hour: Int, minute: Int, second: Int, hasSeconds: Bool)? {
        let hi = s.endIndex
        var i = s.startIndex
        while i < hi, isDigit(s[i]) { i += 1 }
        guard let hour = number(s[s.startIndex..<i], maxDigits: 2), i < hi, s[i] == UInt8(ascii: ":"),
            i + 3 <= hi, let minute = number(s[(i + 1)..<(i + 3)], maxDigits: 2)
        else { return nil }
        i += 3
        if i == hi { return (hour, minute, 0, false) }
        guard s[i] == UInt8(ascii: ":"), i + 3 <= hi, let second = number(s[(i + 1)..<(i + 3)], maxDigits: 2)
        else { return nil }
        i += 3
        if i < hi {
            guard s[i] == UInt8(ascii: "."), i + 1 < hi,
                number(s[(i + 1)..<min(hi, i + 10)], maxDigits: 9) != nil, hi - i <= 10
            else { return nil }
        }
        return (hour, minute, second, true)
    }

    // MARK: Calendar arithmetic

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// The date `days` after 1970-01-01.
    static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
