import Foundation

// MARK: - RFC 3659 time-val (`MDTM`, the `MLSD`/`MLST` `modify` fact)

extension RemoteTimestamp {
    /// Parses an RFC 3659 `time-val`, `YYYYMMDDHHMMSS[.sss]` in UTC, as an `MDTM`
    /// reply or a `modify` fact writes it: exactly fourteen digits, then optionally
    /// `.` and one or more digits (a fraction of a second, dropped).
    ///
    /// Nil for anything else, and for a time that is not real (month 13,
    /// 31 February, hour 24); a leap second (60) is kept, as `RemoteTimestamp`
    /// keeps it. The one reader of the form: the listing parser and the download
    /// journal's validator both come here.
    init?(timeVal text: String) {
        var text = text
        guard let t = text.withUTF8({ RemoteTimestamp.timeVal($0[...]) }) else { return nil }
        self = t
    }

    /// `init(timeVal:)` on bytes (the listing parser's form).
    static func timeVal(_ s: Slice<UnsafeBufferPointer<UInt8>>) -> RemoteTimestamp? {
        guard s.count >= 14 else { return nil }
        let lo = s.startIndex
        func number(_ from: Int, _ count: Int) -> Int? {
            var v = 0
            for i in (lo + from)..<(lo + from + count) {
                let digit = s[i] &- 48
                guard digit < 10 else { return nil }
                v = v * 10 + Int(digit)
            }
            return v
        }
        guard let year = number(0, 4), let month = number(4, 2), let day = number(6, 2),
            let hour = number(8, 2), let minute = number(10, 2), let second = number(12, 2)
        else { return nil }
        if s.count > 14 {
            guard s[lo + 14] == UInt8(ascii: "."), s.count > 15, s[(lo + 15)...].allSatisfy({ $0 &- 48 < 10 })
            else { return nil }
        }
        return RemoteTimestamp(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, zone: .utc)
    }

    /// The `time-val` form to the second (`20240501120000`), as `MDTM` answers;
    /// the fields as they are, whatever the zone.
    var timeVal: String {
        String(format: "%04d%02d%02d%02d%02d%02d", year, month, day, hour, minute, second)
    }
}
