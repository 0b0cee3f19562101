import Foundation

// MARK: - LIST, DOS / IIS style

extension FTPListingParser {
    /// `03-14-23  09:12AM       <DIR>          name` and `03-14-2023  21:12  1234 name`:
    /// IIS, Windows FTP servers and some embedded ones.
    static func parseDOS(_ line: Line, _ context: ListContext) -> ListingLine {
        let t = line.tokens
        guard t.count >= 3, let (year, month, day) = dosDate(t[0]), var time = clockTimeWithMeridiem(t[1])
        else { return .invalid }
        var k = 2
        if time.meridiem == nil {
            if equalsLowercased(t[2], "am") {
                time.meridiem = false
                k = 3
            } else if equalsLowercased(t[2], "pm") {
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
                second: time.second, zone: .floating, precision: time.hasSeconds ? .second : .minute)
        else { return .invalid }

        let field = t[k]
        let kind: RemoteEntry.Kind
        var size: Int64?
        if equalsLowercased(field, "<dir>") {
            kind = .directory
        } else if equalsLowercased(field, "<junction>") || equalsLowercased(field, "<symlink>")
            || equalsLowercased(field, "<symlinkd>")
        {
            kind = .symlink
        } else if let s = FTPListingParser.size(field, allowCommas: true) {
            kind = .file
            size = s.bytes
        } else {
            return .invalid
        }
        // The name is right after the padding; DOS names cannot keep leading blanks.
        var name = line.rest(from: field.endIndex)
        while let c = name.first, isBlank(c) { name = name.dropFirst() }
        var target: String?
        // `dir` shows links as `name [target]`.
        if kind == .symlink, name.last == UInt8(ascii: "]"), let open = findLast(" [", in: name) {
            target = text(name[(open + 2)..<(name.endIndex - 1)])
            name = name[..<open]
        }
        return listEntry(
            name, prefix: context.prefix, kind: kind, size: size, modified: modified,
            target: target?.isEmpty == false ? target : nil)
    }

    /// The index of the last occurrence of an ASCII `needle` in `s`.
    static func findLast(_ needle: String, in s: Bytes) -> Int? {
        let n = Array(needle.utf8)
        var i = s.endIndex - n.count
        while i >= s.startIndex {
            if (0..<n.count).allSatisfy({ s[i + $0] == n[$0] }) { return i }
            i -= 1
        }
        return nil
    }

    /// `MM-DD-YY`, `MM-DD-YYYY` (also with `/`) or `YYYY-MM-DD`. Two-digit years pivot at 70.
    static func dosDate(_ t: Bytes) -> (Int, Int, Int)? {
        var parts: [Bytes] = []
        var start = t.startIndex
        var separator: UInt8?
        for i in t.startIndex...t.endIndex {
            if i == t.endIndex || !isDigit(t[i]) {
                if i < t.endIndex {
                    guard t[i] == UInt8(ascii: "-") || t[i] == UInt8(ascii: "/"), separator == nil || separator == t[i]
                    else { return nil }
                    separator = t[i]
                }
                parts.append(t[start..<i])
                start = i + 1
                guard parts.count <= 3 else { return nil }
            }
        }
        guard parts.count == 3 else { return nil }
        let widths = parts.map(\.count)
        if widths == [4, 2, 2] {
            guard let y = number(parts[0], maxDigits: 4), let m = number(parts[1], maxDigits: 2),
                let d = number(parts[2], maxDigits: 2)
            else { return nil }
            return (y, m, d)
        }
        guard let m = number(parts[0], maxDigits: 2), let d = number(parts[1], maxDigits: 2),
            widths[2] == 2 || widths[2] == 4, var y = number(parts[2], maxDigits: 4)
        else { return nil }
        if widths[2] == 2 { y += y < 70 ? 2000 : 1900 }
        return (y, m, d)
    }

    /// `09:12`, `09:12:30`, `09:12AM`, `9:12pm`. `meridiem` is true for PM, nil when absent.
    static func clockTimeWithMeridiem(_ t: Bytes) -> (
        hour: Int, minute: Int, second: Int, meridiem: Bool?, hasSeconds: Bool
    )? {
        var clock = t
        var meridiem: Bool?
        if t.count > 2, t[t.endIndex - 1].asciiLowercased == UInt8(ascii: "m") {
            switch t[t.endIndex - 2].asciiLowercased {
            case UInt8(ascii: "a"): meridiem = false
            case UInt8(ascii: "p"): meridiem = true
            default: return nil
            }
            clock = t.dropLast(2)
        }
        guard let time = clockTime(clock) else { return nil }
        return (time.hour, time.minute, time.second, meridiem, time.hasSeconds)
    }
}
