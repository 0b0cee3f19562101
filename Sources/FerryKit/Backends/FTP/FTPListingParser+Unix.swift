import Foundation

// MARK: - LIST, Unix and NetWare style

extension FTPListingParser {
    /// `drwxr-xr-x+  12 owner group  4096 Mar 14 09:12 name`, and NetWare's
    /// `d [RWCEAFMS] owner  512 Mar 14 09:12 name`.
    ///
    /// Owner, group and link count vary (missing, numeric, containing spaces), so the
    /// parser anchors on the first "size, date" run after the permissions instead of
    /// counting columns; the name is everything after the one blank that follows the date.
    static func parseUnix(_ line: Line, _ context: ListContext) -> ListingLine {
        let tokens = line.tokens
        let t0 = tokens[0]
        let typeChar = t0.first!
        let firstField: Int
        if t0.count == 1, tokens.count > 1, tokens[1].first == UInt8(ascii: "["),
            tokens[1].last == UInt8(ascii: "]")
        {
            guard typeChar == UInt8(ascii: "d") || typeChar == UInt8(ascii: "-") else {
                return .invalid
            }
            firstField = 2
        } else {
            guard isUnixPermissions(t0) else { return .invalid }
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
            let size = isDevice ? nil : FTPListingParser.size(sizeToken)
            if isDevice ? !isDeviceNumber(sizeToken) : size == nil { continue }
            switch unixDate(line, at: i, context) {
            case .none: continue
            case .invalid: return .invalid
            case .date(let modified, let last):
                var name = line.rest(from: tokens[last].endIndex + 1)
                // NetWare pads the name column; its names do not start with blanks.
                if firstField == 2 {
                    while let c = name.first, isBlank(c) { name = name.dropFirst() }
                }
                return unixEntry(name, kind: kind, size: size, modified: modified, prefix: context.prefix)
            }
        }
        return .invalid
    }

    /// Ten characters like `drwxr-sr-t`, then an optional ACL/xattr/SELinux mark (`+`, `@`,
    /// `.`) and, on some servers, the link count glued on (`drwxr-xr-x+12`).
    static func isUnixPermissions(_ t: Bytes) -> Bool {
        guard t.count >= 10 else { return false }
        let lo = t.startIndex
        for c in t[(lo + 1)..<(lo + 10)] {
            switch c {
            case UInt8(ascii: "r"), UInt8(ascii: "w"), UInt8(ascii: "x"), UInt8(ascii: "s"),
                UInt8(ascii: "S"), UInt8(ascii: "t"), UInt8(ascii: "T"), UInt8(ascii: "l"),
                UInt8(ascii: "L"), UInt8(ascii: "-"), UInt8(ascii: "?"):
                continue
            default: return false
            }
        }
        switch t[lo] {
        case UInt8(ascii: "-"), UInt8(ascii: "d"), UInt8(ascii: "l"), UInt8(ascii: "c"),
            UInt8(ascii: "b"), UInt8(ascii: "p"), UInt8(ascii: "s"), UInt8(ascii: "D"),
            UInt8(ascii: "P"), UInt8(ascii: "n"), UInt8(ascii: "w"), UInt8(ascii: "?"):
            break
        default: return false
        }
        var rest = t[(lo + 10)...]
        if let mark = rest.first, mark == UInt8(ascii: "+") || mark == UInt8(ascii: "@") || mark == UInt8(ascii: ".") {
            rest = rest.dropFirst()
        }
        return rest.allSatisfy(isDigit)
    }

    /// The minor half of `4, 64` or all of `4,64`.
    static func isDeviceNumber(_ t: Bytes) -> Bool {
        var digits = 0
        for c in t {
            if isDigit(c) { digits += 1 } else if c != UInt8(ascii: ",") { return false }
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
    static func unixDate(_ line: Line, at i: Int, _ context: ListContext) -> DateMatch {
        let t = line.tokens
        let n = t.count
        if i + 2 < n {
            if let m = month(t[i]), let d = number(t[i + 1], maxDigits: 2) {
                let r = yearOrTime(line, at: i + 2, month: m, day: d, context)
                if case .none = r {} else { return r }
            }
            if let d = number(t[i], maxDigits: 2), let m = month(t[i + 1]) {
                let r = yearOrTime(line, at: i + 2, month: m, day: d, context)
                if case .none = r {} else { return r }
            }
        }
        if i + 1 < n, let (y, m, d) = isoDate(t[i]), let time = clockTime(t[i + 1]) {
            guard
                let local = RemoteTimestamp(
                    year: y, month: m, day: d, hour: time.hour, minute: time.minute,
                    second: time.second, zone: .floating, precision: time.hasSeconds ? .second : .minute)
            else { return .invalid }
            // full-iso always prints the zone after a time with seconds; long-iso never does.
            if time.hasSeconds, i + 2 < n, let offset = zoneOffset(t[i + 2]) {
                guard let utc = shifted(local, byMinutes: -offset) else { return .invalid }
                return .date(utc, last: i + 2)
            }
            return .date(local, last: i + 1)
        }
        return .none
    }

    static func yearOrTime(_ line: Line, at j: Int, month: Int, day: Int, _ context: ListContext) -> DateMatch {
        let t = line.tokens
        if let time = clockTime(t[j]) {
            // BSD `ls -lT` prints seconds and the year; no one prints seconds without it.
            if time.hasSeconds, j + 1 < t.count, let year = number(t[j + 1], maxDigits: 4), t[j + 1].count == 4 {
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
                    second: time.second, precision: time.hasSeconds ? .second : .minute, context)
            else { return .invalid }
            return .date(ts, last: j)
        }
        if t[j].count == 4, let year = number(t[j], maxDigits: 4) {
            guard let ts = RemoteTimestamp(year: year, month: month, day: day, zone: .floating, precision: .day)
            else { return .invalid }
            return .date(ts, last: j)
        }
        return .none
    }

    /// English three-letter month names (and `Sept`), any case.
    static func month(_ s: Bytes) -> Int? {
        let n = s.count
        guard n == 3 || n == 4 else { return nil }
        if n == 4 { return equalsLowercased(s, "sept") ? 9 : nil }
        let lo = s.startIndex
        let key =
            UInt32(s[lo].asciiLowercased) << 16 | UInt32(s[lo + 1].asciiLowercased) << 8
            | UInt32(s[lo + 2].asciiLowercased)
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

    /// `YYYY-MM-DD`.
    static func isoDate(_ t: Bytes) -> (Int, Int, Int)? {
        let lo = t.startIndex
        guard t.count == 10, t[lo + 4] == UInt8(ascii: "-"), t[lo + 7] == UInt8(ascii: "-"),
            let y = number(t[lo..<(lo + 4)], maxDigits: 4),
            let m = number(t[(lo + 5)..<(lo + 7)], maxDigits: 2),
            let d = number(t[(lo + 8)..<(lo + 10)], maxDigits: 2)
        else { return nil }
        return (y, m, d)
    }

    /// `+hhmm` / `-hhmm` as minutes east of UTC.
    static func zoneOffset(_ t: Bytes) -> Int? {
        let lo = t.startIndex
        guard t.count == 5, t[lo] == UInt8(ascii: "+") || t[lo] == UInt8(ascii: "-"),
            let h = number(t[(lo + 1)..<(lo + 3)], maxDigits: 2), h <= 23,
            let m = number(t[(lo + 3)..<(lo + 5)], maxDigits: 2), m <= 59
        else { return nil }
        return (t[lo] == UInt8(ascii: "-") ? -1 : 1) * (h * 60 + m)
    }

    /// `t` moved by `minutes`, as a UTC timestamp.
    static func shifted(_ t: RemoteTimestamp, byMinutes minutes: Int) -> RemoteTimestamp? {
        let total = daysFromCivil(t.year, t.month, t.day) * 1440 + t.hour * 60 + t.minute + minutes
        let days = total >= 0 ? total / 1440 : (total - 1439) / 1440
        let rest = total - days * 1440
        let (y, m, d) = civilFromDays(days)
        return RemoteTimestamp(
            year: y, month: m, day: d, hour: rest / 60, minute: rest % 60, second: t.second,
            zone: .utc, precision: t.precision)
    }

    /// A yearless `Mon DD HH:MM` date: this year unless that is more than a day ahead of
    /// now (the server shows recent files that way; a future date means last year).
    /// Feb 29 falls back to last year when this year has none.
    static func inferYear(
        month: Int, day: Int, hour: Int, minute: Int, second: Int, precision: RemoteTimestamp.Precision = .second,
        _ context: ListContext
    ) -> RemoteTimestamp? {
        for year in stride(from: context.nowYear, through: context.nowYear - 1, by: -1) {
            guard
                let t = RemoteTimestamp(
                    year: year, month: month, day: day, hour: hour, minute: minute, second: second,
                    zone: .floating, precision: precision)
            else { continue }
            let minutes = daysFromCivil(year, month, day) * 1440 + hour * 60 + minute
            if year == context.nowYear, minutes - context.nowMinutes > 1440 { continue }
            return t
        }
        return nil
    }

    /// The entry for the bytes after the date: the name, and for a link ` -> target`.
    static func unixEntry(
        _ rest: Bytes, kind: RemoteEntry.Kind, size: Size?, modified: RemoteTimestamp, prefix: String
    ) -> ListingLine {
        guard !rest.isEmpty else { return .invalid }
        var name = rest
        var target: String?
        if kind == .symlink, let arrow = find(" -> ", in: rest) {
            name = rest[..<arrow]
            if arrow + 4 < rest.endIndex { target = text(rest[(arrow + 4)...]) }
        }
        // `ls -p`/`-F` style servers mark folders with a trailing slash.
        if kind == .directory, name.count > 1, name.last == slash { name = name.dropLast() }
        return listEntry(name, prefix: prefix, kind: kind, size: size?.bytes, modified: modified, target: target)
    }

    /// The index of the first occurrence of an ASCII `needle` in `s`.
    static func find(_ needle: String, in s: Bytes) -> Int? {
        let n = Array(needle.utf8)
        guard s.count >= n.count else { return nil }
        var i = s.startIndex
        outer: while i + n.count <= s.endIndex {
            for k in 0..<n.count where s[i + k] != n[k] {
                i += 1
                continue outer
            }
            return i
        }
        return nil
    }
}
