import Foundation

/// The entries of one FTP folder listing, and how many lines could not be read.
public struct FTPListing: Sendable, Hashable {
    /// The entries in server order. `.`, `..` and MLSD `cdir`/`pdir` lines never appear.
    public var entries: [RemoteEntry]
    /// Lines that were neither an entry nor known noise (blank lines, `total N`, `.`, `..`,
    /// `cdir`, `pdir`): a bad month, an impossible date, a malformed fact, an unknown format.
    public var skippedLines: Int

    /// Creates a listing.
    public init(entries: [RemoteEntry] = [], skippedLines: Int = 0) {
        self.entries = entries
        self.skippedLines = skippedLines
    }
}

/// Reads FTP folder listings: `LIST` replies (Unix `ls -l`, DOS/IIS, NetWare) and
/// `MLSD`/`MLST` fact lines (RFC 3659).
///
/// Every function is total: any input, however broken, yields entries and a count of
/// skipped lines, never a crash and never an entry with a guessed field. The parser scans
/// UTF-8 bytes by hand (no regular expressions) so 100k lines take milliseconds.
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
    ) -> FTPListing {
        let bytes = Array(text.utf8)
        let context = ListContext(folder: folder, now: now, timeZone: timeZone)
        var tokens: [Token] = []
        tokens.reserveCapacity(16)
        var listing = FTPListing()
        forEachLine(bytes) { lo, hi in
            listing.add(parseListLine(bytes, lo, hi, context, &tokens))
        }
        return listing
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
    public static func parseMLSD(_ text: String, folder: String) -> FTPListing {
        let bytes = Array(text.utf8)
        let prefix = folderPrefix(folder)
        var listing = FTPListing()
        forEachLine(bytes) { lo, hi in
            listing.add(parseMLSDListLine(bytes, lo, hi, prefix: prefix))
        }
        return listing
    }

    /// Parses one `MLSD` line or one fact line of an `MLST` reply (as `stat` receives it).
    ///
    /// The single leading space of an `MLST` fact line may be left on. When the pathname
    /// contains `/` (MLST replies name the full path), `path` is that pathname (resolved
    /// against `folder` when relative) and `name` is its last component. A `cdir` line
    /// with such a path describes that folder and is returned as a directory.
    ///
    /// - Parameters:
    ///   - line: One line, without or with its line end.
    ///   - folder: The absolute decoded path of the folder the line's name is relative to.
    /// - Returns: The entry, or nil for a malformed line, a `pdir`, or a `cdir`, `.`, `..`
    ///   that names no path.
    public static func parseMLSDLine(_ line: Substring, folder: String) -> RemoteEntry? {
        let bytes = Array(line.utf8)
        let (lo, hi) = trimLineEnd(bytes)
        guard let facts = parseFacts(bytes, lo, hi) else { return nil }
        if facts.type == .pdir { return nil }
        var pathname = text(bytes, facts.nameLo, facts.nameHi)
        guard !pathname.contains("\0") else { return nil }
        // A trailing slash carries no name ("/pub/" is "/pub"); keep the root itself.
        while pathname.count > 1, pathname.hasSuffix("/") { pathname.removeLast() }
        let path: String
        if pathname.utf8.first == slash {
            path = pathname
        } else if pathname.contains("/") {
            path = folderPrefix(folder) + pathname
        } else {
            if pathname == "." || pathname == ".." || facts.type == .cdir { return nil }
            path = folderPrefix(folder) + pathname
        }
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        guard !components.contains(where: { $0 == "." || $0 == ".." }) else { return nil }
        let name = components.last.map(String.init) ?? "/"
        return facts.entry(name: name, path: path)
    }

    /// Parses one `LIST` line.
    ///
    /// - Returns: The entry, or nil when the line is not one (also for `total N`, `.`, `..`).
    static func parseLISTLine(
        _ line: Substring, folder: String, now: Date,
        timeZone: TimeZone = TimeZone(identifier: "UTC")!
    ) -> RemoteEntry? {
        let bytes = Array(line.utf8)
        let (lo, hi) = trimLineEnd(bytes)
        var tokens: [Token] = []
        let context = ListContext(folder: folder, now: now, timeZone: timeZone)
        if case .entry(let entry) = parseListLine(bytes, lo, hi, context, &tokens) { return entry }
        return nil
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

    /// A run of non-blank bytes, as offsets into the line's byte array.
    struct Token {
        var lo: Int
        var hi: Int
        var count: Int { hi - lo }
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

extension FTPListing {
    mutating func add(_ line: FTPListingParser.ListingLine) {
        switch line {
        case .entry(let entry): entries.append(entry)
        case .ignored: break
        case .invalid: skippedLines += 1
        }
    }
}

private let space = UInt8(ascii: " ")
private let tab = UInt8(ascii: "\t")
private let lf = UInt8(ascii: "\n")
private let cr = UInt8(ascii: "\r")
private let slash = UInt8(ascii: "/")

@inline(__always) private func isBlank(_ c: UInt8) -> Bool { c == space || c == tab }
@inline(__always) private func isDigit(_ c: UInt8) -> Bool { c &- 48 < 10 }
@inline(__always) private func lower(_ c: UInt8) -> UInt8 {
    c >= 65 && c <= 90 ? c | 0x20 : c
}

extension FTPListingParser {
    /// Calls `body` with the bounds of every line, without its LF or CRLF.
    static func forEachLine(_ b: [UInt8], _ body: (Int, Int) -> Void) {
        var start = 0
        let n = b.count
        while start < n {
            var end = start
            while end < n, b[end] != lf { end += 1 }
            var hi = end
            if hi > start, b[hi - 1] == cr { hi -= 1 }
            body(start, hi)
            start = end + 1
        }
    }

    /// Bounds of a single line with any trailing CR/LF removed.
    static func trimLineEnd(_ b: [UInt8]) -> (Int, Int) {
        var hi = b.count
        while hi > 0, b[hi - 1] == lf || b[hi - 1] == cr { hi -= 1 }
        return (0, hi)
    }

    static func folderPrefix(_ folder: String) -> String {
        var f = folder
        // Bytes, not Characters (`"/\u{301}".hasPrefix("/")` is false in Swift).
        if f.utf8.first != slash { f = "/" + f }
        if f.utf8.last != slash { f += "/" }
        return f
    }

    static func text(_ b: [UInt8], _ lo: Int, _ hi: Int) -> String {
        String(decoding: b[lo..<hi], as: UTF8.self)
    }

    static func tokenize(_ b: [UInt8], _ lo: Int, _ hi: Int, into tokens: inout [Token]) {
        tokens.removeAll(keepingCapacity: true)
        var i = lo
        while i < hi {
            while i < hi, isBlank(b[i]) { i += 1 }
            if i == hi { break }
            let start = i
            while i < hi, !isBlank(b[i]) { i += 1 }
            tokens.append(Token(lo: start, hi: i))
        }
    }

    enum NameCheck { case ok, dot, bad }

    /// A listing names children: `.`/`..` are noise, and an empty name or one with `/` or
    /// NUL would make a path outside the folder (or no path at all).
    static func checkName(_ b: [UInt8], _ lo: Int, _ hi: Int) -> NameCheck {
        if lo >= hi { return .bad }
        if b[lo] == UInt8(ascii: "."),
            hi - lo == 1 || (hi - lo == 2 && b[lo + 1] == UInt8(ascii: "."))
        {
            return .dot
        }
        for i in lo..<hi where b[i] == slash || b[i] == 0 { return .bad }
        return .ok
    }

    /// True when the bytes equal `literal` ignoring ASCII case (`literal` is lowercase).
    static func equalsLowercased(_ b: [UInt8], _ lo: Int, _ hi: Int, _ literal: String) -> Bool {
        guard hi - lo == literal.utf8.count else { return false }
        var i = lo
        for c in literal.utf8 {
            if lower(b[i]) != c { return false }
            i += 1
        }
        return true
    }

    static func hasLowercasedPrefix(_ b: [UInt8], _ lo: Int, _ hi: Int, _ literal: String) -> Bool {
        let n = literal.utf8.count
        return hi - lo >= n && equalsLowercased(b, lo, lo + n, literal)
    }

    /// A small unsigned number of 1...`maxDigits` digits, exactly filling the bounds.
    static func number(_ b: [UInt8], _ lo: Int, _ hi: Int, maxDigits: Int) -> Int? {
        guard hi > lo, hi - lo <= maxDigits else { return nil }
        var v = 0
        for i in lo..<hi {
            guard isDigit(b[i]) else { return nil }
            v = v * 10 + Int(b[i] &- 48)
        }
        return v
    }

    enum Size {
        case value(Int64)
        case overflow
    }

    /// A byte count of digits (and, when `allowCommas`, grouping commas).
    /// Nil when the bytes are not a number; `.overflow` when they are one beyond `Int64`.
    static func size(_ b: [UInt8], _ lo: Int, _ hi: Int, allowCommas: Bool = false) -> Size? {
        var v: Int64 = 0
        var digits = 0
        var overflow = false
        for i in lo..<hi {
            let c = b[i]
            if c == UInt8(ascii: ","), allowCommas { continue }
            guard isDigit(c) else { return nil }
            digits += 1
            if !overflow {
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.addingReportingOverflow(Int64(c &- 48))
                if o1 || o2 { overflow = true } else { v = s }
            }
        }
        guard digits > 0 else { return nil }
        return overflow ? .overflow : .value(v)
    }

    /// `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fff` (fraction dropped). Values are not range-checked
    /// here: the shape says "this is a time", `RemoteTimestamp` then says whether it is real.
    static func clockTime(_ b: [UInt8], _ lo: Int, _ hi: Int)
        -> (hour: Int, minute: Int, second: Int, hasSeconds: Bool)?
    {
        var i = lo
        while i < hi, isDigit(b[i]) { i += 1 }
        guard let hour = number(b, lo, i, maxDigits: 2), i < hi, b[i] == UInt8(ascii: ":"),
            i + 3 <= hi, let minute = number(b, i + 1, i + 3, maxDigits: 2)
        else { return nil }
        i += 3
        if i == hi { return (hour, minute, 0, false) }
        guard b[i] == UInt8(ascii: ":"), i + 3 <= hi,
            let second = number(b, i + 1, i + 3, maxDigits: 2)
        else { return nil }
        i += 3
        if i < hi {
            guard b[i] == UInt8(ascii: "."), i + 1 < hi,
                number(b, i + 1, min(hi, i + 10), maxDigits: 9) != nil, hi - i <= 10
            else { return nil }
        }
        return (hour, minute, second, true)
    }

    /// English three-letter month names (and `Sept`), any case.
    static func month(_ b: [UInt8], _ lo: Int, _ hi: Int) -> Int? {
        let n = hi - lo
        guard n == 3 || n == 4 else { return nil }
        if n == 4 { return equalsLowercased(b, lo, hi, "sept") ? 9 : nil }
        let key =
            UInt32(lower(b[lo])) << 16 | UInt32(lower(b[lo + 1])) << 8 | UInt32(lower(b[lo + 2]))
        switch key {
        case 0x6A_61_6E: return 1  // jan
        case 0x66_65_62: return 2  // feb
        case 0x6D_61_72: return 3  // mar
        case 0x61_70_72: return 4  // apr
        case 0x6D_61_79: return 5  // may
        case 0x6A_75_6E: return 6  // jun
        case 0x6A_75_6C: return 7  // jul
        case 0x61_75_67: return 8  // aug
        case 0x73_65_70: return 9  // sep
        case 0x6F_63_74: return 10  // oct
        case 0x6E_6F_76: return 11  // nov
        case 0x64_65_63: return 12  // dec
        default: return nil
        }
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

    /// A yearless `Mon DD HH:MM` date: this year unless that is more than a day ahead of
    /// now (the server shows recent files that way; a future date means last year).
    /// Feb 29 falls back to last year when this year has none.
    static func inferYear(
        month: Int, day: Int, hour: Int, minute: Int, second: Int, _ context: ListContext
    ) -> RemoteTimestamp? {
        for year in stride(from: context.nowYear, through: context.nowYear - 1, by: -1) {
            guard
                let t = RemoteTimestamp(
                    year: year, month: month, day: day, hour: hour, minute: minute, second: second,
                    zone: .floating)
            else { continue }
            let minutes = daysFromCivil(year, month, day) * 1440 + hour * 60 + minute
            if year == context.nowYear, minutes - context.nowMinutes > 1440 { continue }
            return t
        }
        return nil
    }
}

// MARK: - LIST

extension FTPListingParser {
    static func parseListLine(
        _ b: [UInt8], _ lo: Int, _ hi: Int, _ context: ListContext, _ tokens: inout [Token]
    ) -> ListingLine {
        tokenize(b, lo, hi, into: &tokens)
        guard let first = tokens.first else { return .ignored }
        if isDigit(b[first.lo]) { return parseDOS(b, hi, tokens, context) }
        if equalsLowercased(b, first.lo, first.hi, "total"), tokens.count <= 2 { return .ignored }
        return parseUnix(b, hi, tokens, context)
    }

    // MARK: Unix

    /// `drwxr-xr-x+  12 owner group  4096 Mar 14 09:12 name`, and NetWare's
    /// `d [RWCEAFMS] owner  512 Mar 14 09:12 name`.
    ///
    /// Owner, group and link count vary (missing, numeric, containing spaces), so the
    /// parser anchors on the first "size, date" run after the permissions instead of
    /// counting columns; the name is everything after the one blank that follows the date.
    static func parseUnix(_ b: [UInt8], _ hi: Int, _ tokens: [Token], _ context: ListContext)
        -> ListingLine
    {
        let t0 = tokens[0]
        let typeChar = b[t0.lo]
        let firstField: Int
        if t0.count == 1, tokens.count > 1, b[tokens[1].lo] == UInt8(ascii: "["),
            b[tokens[1].hi - 1] == UInt8(ascii: "]")
        {
            guard typeChar == UInt8(ascii: "d") || typeChar == UInt8(ascii: "-") else {
                return .invalid
            }
            firstField = 2
        } else {
            guard isUnixPermissions(b, t0) else { return .invalid }
            firstField = 1
        }
        let kind: RemoteEntry.Kind
        switch typeChar {
        case UInt8(ascii: "-"): kind = .file
        case UInt8(ascii: "d"): kind = .directory
        case UInt8(ascii: "l"): kind = .symlink
        default: kind = .other
        }
        let isDevice = typeChar == UInt8(ascii: "c") || typeChar == UInt8(ascii: "b")

        var i = firstField + 1
        while i < tokens.count {
            defer { i += 1 }
            let sizeToken = tokens[i - 1]
            let size = isDevice ? nil : FTPListingParser.size(b, sizeToken.lo, sizeToken.hi)
            if isDevice ? !isDeviceNumber(b, sizeToken) : size == nil { continue }
            switch unixDate(b, tokens, at: i, context) {
            case .none: continue
            case .invalid: return .invalid
            case .date(let modified, let last):
                var nameLo = tokens[last].hi + 1
                // NetWare pads the name column; its names do not start with blanks.
                if firstField == 2 {
                    while nameLo < hi, isBlank(b[nameLo]) { nameLo += 1 }
                }
                return unixEntry(
                    b, nameLo: nameLo, hi: hi, kind: kind, size: size,
                    modified: modified, prefix: context.prefix)
            }
        }
        return .invalid
    }

    /// Ten characters like `drwxr-sr-t`, then an optional ACL/xattr/SELinux mark (`+`, `@`,
    /// `.`) and, on some servers, the link count glued on (`drwxr-xr-x+12`).
    static func isUnixPermissions(_ b: [UInt8], _ t: Token) -> Bool {
        guard t.count >= 10 else { return false }
        for i in (t.lo + 1)..<(t.lo + 10) {
            switch b[i] {
            case UInt8(ascii: "r"), UInt8(ascii: "w"), UInt8(ascii: "x"), UInt8(ascii: "s"),
                UInt8(ascii: "S"), UInt8(ascii: "t"), UInt8(ascii: "T"), UInt8(ascii: "l"),
                UInt8(ascii: "L"), UInt8(ascii: "-"), UInt8(ascii: "?"):
                continue
            default: return false
            }
        }
        switch b[t.lo] {
        case UInt8(ascii: "-"), UInt8(ascii: "d"), UInt8(ascii: "l"), UInt8(ascii: "c"),
            UInt8(ascii: "b"), UInt8(ascii: "p"), UInt8(ascii: "s"), UInt8(ascii: "D"),
            UInt8(ascii: "P"), UInt8(ascii: "n"), UInt8(ascii: "w"), UInt8(ascii: "?"):
            break
        default: return false
        }
        var i = t.lo + 10
        if i < t.hi,
            b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "@") || b[i] == UInt8(ascii: ".")
        {
            i += 1
        }
        while i < t.hi {
            guard isDigit(b[i]) else { return false }
            i += 1
        }
        return true
    }

    /// The minor half of `4, 64` or all of `4,64`.
    static func isDeviceNumber(_ b: [UInt8], _ t: Token) -> Bool {
        var digits = 0
        for i in t.lo..<t.hi {
            if isDigit(b[i]) { digits += 1 } else if b[i] != UInt8(ascii: ",") { return false }
        }
        return digits > 0
    }

    enum DateMatch {
        case none
        /// Shaped like a date but not a real one (day 32, hour 30): the line is bad.
        case invalid
        /// The date, and the index of its last token.
        case date(RemoteTimestamp, last: Int)
    }

    /// A Unix listing date starting at token `i`: `Mon DD HH:MM`, `Mon DD YYYY`,
    /// `DD Mon ...` (some locales), BSD `Mon DD HH:MM:SS YYYY`, or ISO
    /// `YYYY-MM-DD HH:MM[:SS[.f] ±hhmm]` (`ls --time-style=long-iso/full-iso`).
    static func unixDate(_ b: [UInt8], _ t: [Token], at i: Int, _ context: ListContext)
        -> DateMatch
    {
        let n = t.count
        if i + 2 < n {
            if let m = month(b, t[i].lo, t[i].hi),
                let d = number(b, t[i + 1].lo, t[i + 1].hi, maxDigits: 2)
            {
                let r = yearOrTime(b, t, at: i + 2, month: m, day: d, context)
                if case .none = r {} else { return r }
            }
            if let d = number(b, t[i].lo, t[i].hi, maxDigits: 2),
                let m = month(b, t[i + 1].lo, t[i + 1].hi)
            {
                let r = yearOrTime(b, t, at: i + 2, month: m, day: d, context)
                if case .none = r {} else { return r }
            }
        }
        if i + 1 < n, let (y, m, d) = isoDate(b, t[i]),
            let time = clockTime(b, t[i + 1].lo, t[i + 1].hi)
        {
            guard
                let local = RemoteTimestamp(
                    year: y, month: m, day: d, hour: time.hour, minute: time.minute,
                    second: time.second, zone: .floating)
            else { return .invalid }
            // full-iso always prints the zone after a time with seconds; long-iso never does.
            if time.hasSeconds, i + 2 < n, let offset = zoneOffset(b, t[i + 2]) {
                guard let utc = shifted(local, byMinutes: -offset) else { return .invalid }
                return .date(utc, last: i + 2)
            }
            return .date(local, last: i + 1)
        }
        return .none
    }

    static func yearOrTime(
        _ b: [UInt8], _ t: [Token], at j: Int, month: Int, day: Int, _ context: ListContext
    ) -> DateMatch {
        if let time = clockTime(b, t[j].lo, t[j].hi) {
            // BSD `ls -lT` prints seconds and the year; no one prints seconds without it.
            if time.hasSeconds, j + 1 < t.count,
                let year = number(b, t[j + 1].lo, t[j + 1].hi, maxDigits: 4),
                t[j + 1].count == 4
            {
                guard
                    let ts = RemoteTimestamp(
                        year: year, month: month, day: day, hour: time.hour, minute: time.minute,
                        second: time.second, zone: .floating)
                else { return .invalid }
                return .date(ts, last: j + 1)
            }
            guard
                let ts = inferYear(
                    month: month, day: day, hour: time.hour, minute: time.minute,
                    second: time.second, context)
            else { return .invalid }
            return .date(ts, last: j)
        }
        if t[j].count == 4, let year = number(b, t[j].lo, t[j].hi, maxDigits: 4) {
            guard let ts = RemoteTimestamp(year: year, month: month, day: day, zone: .floating)
            else { return .invalid }
            return .date(ts, last: j)
        }
        return .none
    }

    /// `YYYY-MM-DD`.
    static func isoDate(_ b: [UInt8], _ t: Token) -> (Int, Int, Int)? {
        guard t.count == 10, b[t.lo + 4] == UInt8(ascii: "-"), b[t.lo + 7] == UInt8(ascii: "-"),
            let y = number(b, t.lo, t.lo + 4, maxDigits: 4),
            let m = number(b, t.lo + 5, t.lo + 7, maxDigits: 2),
            let d = number(b, t.lo + 8, t.lo + 10, maxDigits: 2)
        else { return nil }
        return (y, m, d)
    }

    /// `+hhmm` / `-hhmm` as minutes east of UTC.
    static func zoneOffset(_ b: [UInt8], _ t: Token) -> Int? {
        guard t.count == 5, b[t.lo] == UInt8(ascii: "+") || b[t.lo] == UInt8(ascii: "-"),
            let h = number(b, t.lo + 1, t.lo + 3, maxDigits: 2), h <= 23,
            let m = number(b, t.lo + 3, t.lo + 5, maxDigits: 2), m <= 59
        else { return nil }
        return (b[t.lo] == UInt8(ascii: "-") ? -1 : 1) * (h * 60 + m)
    }

    /// `t` moved by `minutes`, as a UTC timestamp.
    static func shifted(_ t: RemoteTimestamp, byMinutes minutes: Int) -> RemoteTimestamp? {
        let total = daysFromCivil(t.year, t.month, t.day) * 1440 + t.hour * 60 + t.minute + minutes
        let days = total >= 0 ? total / 1440 : (total - 1439) / 1440
        let rest = total - days * 1440
        let (y, m, d) = civilFromDays(days)
        return RemoteTimestamp(
            year: y, month: m, day: d, hour: rest / 60, minute: rest % 60, second: t.second,
            zone: .utc)
    }

    static func unixEntry(
        _ b: [UInt8], nameLo: Int, hi: Int, kind: RemoteEntry.Kind, size: Size?,
        modified: RemoteTimestamp, prefix: String
    ) -> ListingLine {
        guard nameLo < hi else { return .invalid }
        var nameHi = hi
        var target: String?
        if kind == .symlink, let arrow = find(b, nameLo, hi, " -> ") {
            nameHi = arrow
            if arrow + 4 < hi { target = text(b, arrow + 4, hi) }
        }
        // `ls -p`/`-F` style servers mark folders with a trailing slash.
        if kind == .directory, nameHi - nameLo > 1, b[nameHi - 1] == slash { nameHi -= 1 }
        switch checkName(b, nameLo, nameHi) {
        case .dot: return .ignored
        case .bad: return .invalid
        case .ok: break
        }
        let name = text(b, nameLo, nameHi)
        var bytes: Int64?
        if case .value(let v) = size { bytes = v }
        return .entry(
            RemoteEntry(
                name: name, path: prefix + name, kind: kind, size: bytes, modified: modified,
                symlinkTarget: target))
    }

    /// The first occurrence of an ASCII `needle` in `b[lo..<hi]`.
    static func find(_ b: [UInt8], _ lo: Int, _ hi: Int, _ needle: String) -> Int? {
        let n = Array(needle.utf8)
        guard hi - lo >= n.count else { return nil }
        var i = lo
        outer: while i + n.count <= hi {
            for k in 0..<n.count where b[i + k] != n[k] {
                i += 1
                continue outer
            }
            return i
        }
        return nil
    }

    // MARK: DOS / IIS

    /// `03-14-23  09:12AM       <DIR>          name` and `03-14-2023  21:12  1234 name`:
    /// IIS, Windows FTP servers and some embedded ones.
    static func parseDOS(_ b: [UInt8], _ hi: Int, _ t: [Token], _ context: ListContext)
        -> ListingLine
    {
        guard t.count >= 3, let (year, month, day) = dosDate(b, t[0]),
            var time = clockTimeWithMeridiem(b, t[1])
        else { return .invalid }
        var k = 2
        if time.meridiem == nil {
            if equalsLowercased(b, t[2].lo, t[2].hi, "am") {
                time.meridiem = false
                k = 3
            } else if equalsLowercased(b, t[2].lo, t[2].hi, "pm") {
                time.meridiem = true
                k = 3
            }
        }
        var hour = time.hour
        if let pm = time.meridiem {
            // 12AM is midnight and 12PM noon; a 24-hour value with AM/PM is nonsense.
            guard hour <= 12 else { return .invalid }
            hour = hour % 12 + (pm ? 12 : 0)
        }
        guard k < t.count,
            let modified = RemoteTimestamp(
                year: year, month: month, day: day, hour: hour, minute: time.minute,
                second: time.second, zone: .floating)
        else { return .invalid }

        let field = t[k]
        let kind: RemoteEntry.Kind
        var size: Int64?
        if equalsLowercased(b, field.lo, field.hi, "<dir>") {
            kind = .directory
        } else if equalsLowercased(b, field.lo, field.hi, "<junction>")
            || equalsLowercased(b, field.lo, field.hi, "<symlink>")
            || equalsLowercased(b, field.lo, field.hi, "<symlinkd>")
        {
            kind = .symlink
        } else if let s = FTPListingParser.size(b, field.lo, field.hi, allowCommas: true) {
            kind = .file
            if case .value(let v) = s { size = v }
        } else {
            return .invalid
        }
        // The name is right after the padding; DOS names cannot keep leading blanks.
        var nameLo = field.hi
        while nameLo < hi, isBlank(b[nameLo]) { nameLo += 1 }
        var nameHi = hi
        var target: String?
        // `dir` shows links as `name [target]`.
        if kind == .symlink, nameHi > nameLo, b[nameHi - 1] == UInt8(ascii: "]"),
            let open = findLast(b, nameLo, nameHi, " [")
        {
            target = text(b, open + 2, nameHi - 1)
            nameHi = open
        }
        switch checkName(b, nameLo, nameHi) {
        case .dot: return .ignored
        case .bad: return .invalid
        case .ok: break
        }
        let name = text(b, nameLo, nameHi)
        return .entry(
            RemoteEntry(
                name: name, path: context.prefix + name, kind: kind, size: size, modified: modified,
                symlinkTarget: target?.isEmpty == false ? target : nil))
    }

    static func findLast(_ b: [UInt8], _ lo: Int, _ hi: Int, _ needle: String) -> Int? {
        let n = Array(needle.utf8)
        var i = hi - n.count
        while i >= lo {
            if (0..<n.count).allSatisfy({ b[i + $0] == n[$0] }) { return i }
            i -= 1
        }
        return nil
    }

    /// `MM-DD-YY`, `MM-DD-YYYY` (also with `/`) or `YYYY-MM-DD`. Two-digit years pivot at 70.
    static func dosDate(_ b: [UInt8], _ t: Token) -> (Int, Int, Int)? {
        var parts: [(Int, Int)] = []
        var start = t.lo
        var separator: UInt8?
        for i in t.lo...t.hi {
            if i == t.hi || !isDigit(b[i]) {
                if i < t.hi {
                    guard b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "/"),
                        separator == nil || separator == b[i]
                    else { return nil }
                    separator = b[i]
                }
                parts.append((start, i))
                start = i + 1
                guard parts.count <= 3 else { return nil }
            }
        }
        guard parts.count == 3 else { return nil }
        let widths = parts.map { $0.1 - $0.0 }
        if widths == [4, 2, 2] {
            guard let y = number(b, parts[0].0, parts[0].1, maxDigits: 4),
                let m = number(b, parts[1].0, parts[1].1, maxDigits: 2),
                let d = number(b, parts[2].0, parts[2].1, maxDigits: 2)
            else { return nil }
            return (y, m, d)
        }
        guard let m = number(b, parts[0].0, parts[0].1, maxDigits: 2),
            let d = number(b, parts[1].0, parts[1].1, maxDigits: 2),
            widths[2] == 2 || widths[2] == 4,
            var y = number(b, parts[2].0, parts[2].1, maxDigits: 4)
        else { return nil }
        if widths[2] == 2 { y += y < 70 ? 2000 : 1900 }
        return (y, m, d)
    }

    /// `09:12`, `09:12:30`, `09:12AM`, `9:12pm`. `meridiem` is true for PM, nil when absent.
    static func clockTimeWithMeridiem(_ b: [UInt8], _ t: Token)
        -> (hour: Int, minute: Int, second: Int, meridiem: Bool?)?
    {
        var hi = t.hi
        var meridiem: Bool?
        if t.count > 2, lower(b[hi - 1]) == UInt8(ascii: "m") {
            switch lower(b[hi - 2]) {
            case UInt8(ascii: "a"): meridiem = false
            case UInt8(ascii: "p"): meridiem = true
            default: return nil
            }
            hi -= 2
        }
        guard let time = clockTime(b, t.lo, hi) else { return nil }
        return (time.hour, time.minute, time.second, meridiem)
    }
}

// MARK: - MLSD

extension FTPListingParser {
    enum MLSDType: Equatable {
        case file, dir, cdir, pdir, symlink, other
    }

    /// The facts of one MLSD/MLST line that Ferry uses, and where the pathname is.
    struct Facts {
        var type: MLSDType = .other
        var symlinkTarget: String?
        var size: Size?
        var directorySize: Size?
        var modified: RemoteTimestamp?
        var perm: (canWrite: Bool, present: Bool) = (false, false)
        var nameLo = 0
        var nameHi = 0

        func entry(name: String, path: String) -> RemoteEntry {
            let kind: RemoteEntry.Kind
            switch type {
            case .file: kind = .file
            case .dir, .cdir, .pdir: kind = .directory
            case .symlink: kind = .symlink
            case .other: kind = .other
            }
            var bytes: Int64?
            if case .value(let v) = size ?? directorySize { bytes = v }
            return RemoteEntry(
                name: name, path: path, kind: kind, size: bytes, modified: modified,
                symlinkTarget: symlinkTarget,
                isReadOnly: kind == .file && perm.present && !perm.canWrite)
        }
    }

    static func parseMLSDListLine(_ b: [UInt8], _ lo: Int, _ hi: Int, prefix: String) -> ListingLine {
        var i = lo
        while i < hi, isBlank(b[i]) { i += 1 }
        if i == hi { return .ignored }
        guard let facts = parseFacts(b, lo, hi) else { return .invalid }
        if facts.type == .cdir || facts.type == .pdir { return .ignored }
        switch checkName(b, facts.nameLo, facts.nameHi) {
        case .dot: return .ignored
        case .bad: return .invalid
        case .ok: break
        }
        let name = text(b, facts.nameLo, facts.nameHi)
        return .entry(facts.entry(name: name, path: prefix + name))
    }

    /// `fact=value;fact=value; pathname` (RFC 3659 section 7.2).
    ///
    /// Facts end at the first `"; "`: a fact value cannot hold `;`, so this is right even
    /// when the name holds `; ` or a symlink target holds a space. A line starting with a
    /// space has no facts, unless it is an MLST fact line whose leading space was left on.
    static func parseFacts(_ b: [UInt8], _ lo: Int, _ hi: Int) -> Facts? {
        var facts = Facts()
        var start = lo
        if start < hi, b[start] == space {
            guard let end = factsEnd(b, start + 1, hi), hasEquals(b, start + 1, end) else {
                // No facts at all: legal, if unhelpful.
                facts.nameLo = start + 1
                facts.nameHi = hi
                return facts.nameLo < hi ? facts : nil
            }
            start += 1
        }
        guard let end = factsEnd(b, start, hi) else { return nil }
        facts.nameLo = end + 2
        facts.nameHi = hi
        guard facts.nameLo < hi else { return nil }

        var factLo = start
        while factLo <= end {
            var factHi = factLo
            while b[factHi] != UInt8(ascii: ";") { factHi += 1 }
            var eq = factLo
            while eq < factHi, b[eq] != UInt8(ascii: "=") { eq += 1 }
            // A fact needs a name and `=`; the value may be empty or start with `=`.
            guard eq > factLo, eq < factHi else { return nil }
            guard apply(b, nameLo: factLo, nameHi: eq, valueLo: eq + 1, valueHi: factHi, to: &facts)
            else { return nil }
            factLo = factHi + 1
        }
        return facts
    }

    /// Index of the `;` of the first `"; "` in the bounds.
    static func factsEnd(_ b: [UInt8], _ lo: Int, _ hi: Int) -> Int? {
        var i = lo
        while i + 1 < hi {
            if b[i] == UInt8(ascii: ";"), b[i + 1] == space { return i }
            i += 1
        }
        return nil
    }

    static func hasEquals(_ b: [UInt8], _ lo: Int, _ hi: Int) -> Bool {
        for i in lo..<hi where b[i] == UInt8(ascii: "=") { return true }
        return false
    }

    /// Records one fact; false when its value is malformed.
    static func apply(
        _ b: [UInt8], nameLo: Int, nameHi: Int, valueLo: Int, valueHi: Int, to facts: inout Facts
    ) -> Bool {
        if equalsLowercased(b, nameLo, nameHi, "type") {
            facts.symlinkTarget = nil
            if equalsLowercased(b, valueLo, valueHi, "file") {
                facts.type = .file
            } else if equalsLowercased(b, valueLo, valueHi, "dir") {
                facts.type = .dir
            } else if equalsLowercased(b, valueLo, valueHi, "cdir") {
                facts.type = .cdir
            } else if equalsLowercased(b, valueLo, valueHi, "pdir") {
                facts.type = .pdir
            } else if hasLowercasedPrefix(b, valueLo, valueHi, "os.unix=slink")
                || hasLowercasedPrefix(b, valueLo, valueHi, "os.unix=symlink")
            {
                facts.type = .symlink
                // `OS.unix=slink:/target` (proftpd); a bare `OS.unix=symlink` names none.
                var colon = valueLo
                while colon < valueHi, b[colon] != UInt8(ascii: ":") { colon += 1 }
                if colon + 1 < valueHi { facts.symlinkTarget = text(b, colon + 1, valueHi) }
            } else {
                // `OS.unix=chr-4/64`, `OS.unix=fifo`, vendor types.
                facts.type = .other
            }
        } else if equalsLowercased(b, nameLo, nameHi, "size") {
            guard let s = size(b, valueLo, valueHi) else { return false }
            facts.size = s
        } else if equalsLowercased(b, nameLo, nameHi, "sizd") {
            guard let s = size(b, valueLo, valueHi) else { return false }
            facts.directorySize = s
        } else if equalsLowercased(b, nameLo, nameHi, "modify") {
            guard let t = mlsdTime(b, valueLo, valueHi) else { return false }
            facts.modified = t
        } else if equalsLowercased(b, nameLo, nameHi, "perm") {
            facts.perm.present = true
            facts.perm.canWrite = false
            for i in valueLo..<valueHi
            where lower(b[i]) == UInt8(ascii: "w") || lower(b[i]) == UInt8(ascii: "a") {
                facts.perm.canWrite = true
            }
        }
        // Other facts (unique, UNIX.mode, media-type, ...) are not needed.
        return true
    }

    /// `YYYYMMDDHHMMSS[.fff]`, UTC.
    static func mlsdTime(_ b: [UInt8], _ lo: Int, _ hi: Int) -> RemoteTimestamp? {
        guard hi - lo >= 14,
            let year = number(b, lo, lo + 4, maxDigits: 4),
            let month = number(b, lo + 4, lo + 6, maxDigits: 2),
            let day = number(b, lo + 6, lo + 8, maxDigits: 2),
            let hour = number(b, lo + 8, lo + 10, maxDigits: 2),
            let minute = number(b, lo + 10, lo + 12, maxDigits: 2),
            let second = number(b, lo + 12, lo + 14, maxDigits: 2)
        else { return nil }
        if hi - lo > 14 {
            guard b[lo + 14] == UInt8(ascii: "."), hi - lo > 15 else { return nil }
            for i in (lo + 15)..<hi where !isDigit(b[i]) { return nil }
        }
        return RemoteTimestamp(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second,
            zone: .utc)
    }
}
