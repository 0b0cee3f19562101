import Foundation

/// Where imported files go, and names that clobber nothing.
package enum SyncNaming {
    /// `IMG_0001.JPG` → `IMG_0001 (2).JPG` (n ≥ 2); `README` → `README (2)`;
    /// `.profile` → `.profile (2)`.
    /// Only the last component is numbered: `/a.b/README` → `/a.b/README (2)`.
    static func numbered(_ name: String, _ n: Int) -> String {
        guard n > 1 else { return name }
        let slash = name.lastIndex(of: "/").map { name.index(after: $0) } ?? name.startIndex
        if let dot = name[slash...].lastIndex(of: "."), dot != slash {
            return "\(name[..<dot]) (\(n))\(name[dot...])"
        }
        return "\(name) (\(n))"
    }

    /// The relative path of `remote` below the sync root `root` (`/DCIM` +
    /// `/DCIM/100__TSB/A.JPG` → `100__TSB/A.JPG`).
    static func relative(_ remote: String, root: String) -> String {
        var prefix = root
        if !prefix.hasSuffix("/") { prefix += "/" }
        if remote.hasPrefix(prefix) { return String(remote.dropFirst(prefix.count)) }
        var r = Substring(remote)
        while r.hasPrefix("/") { r = r.dropFirst() }
        return String(r)
    }

    /// `YYYY-MM-DD` of a timestamp: a floating (camera) time as written, a UTC time
    /// in `zone`.
    static func dayFolder(_ t: RemoteTimestamp, zone: TimeZone) -> String {
        if t.zone == .floating { return String(format: "%04d-%02d-%02d", t.year, t.month, t.day) }
        return dayFolder(t.date(), zone: zone)
    }

    /// `YYYY-MM-DD` of an instant in `zone`.
    static func dayFolder(_ d: Date, zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day], from: d)
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }

    /// Whether `path` may be used for a new download whose `.part` journal would
    /// name `source`: nothing is there, and no other download's partial file is.
    static func isFree(_ path: String, source: String, identity: String? = nil) -> Bool {
        if LocalFile.exists(path) { return false }
        let part = path + ".part"
        guard LocalFile.exists(part) else { return true }
        // A .part of this very download is ours to resume; one of another source's
        // is left alone. Without a journal it cannot be resumed by anyone.
        guard let journal = DownloadJournal.load(from: DownloadJournal.path(forPart: part)) else { return true }
        return journal.describes(source: source, identity: identity)
    }

    /// Where the date layout stages a photo until its date is known: one file
    /// per photo directly in the staging folder, `HASH-NAME` (a stable name, so
    /// a rerun resumes its `.part`), with no folder of its own to make and
    /// remove per photo (a mkdir and an rmdir per file, which under many small
    /// photos wait on the staging folder's lock). A name too long for that
    /// (`NAME.part` near the file system's 255 bytes) keeps a folder of its own:
    /// `HASH/NAME`.
    static func stagingPath(in directory: String, key: String, name: String) -> String {
        let hash = stableHash(key)
        let root = directory + "/" + SyncEngine.stagingFolder + "/"
        let flat = hash + "-" + name
        // ".part" and its journal's ".part.journal" must still fit.
        if flat.utf8.count + 16 <= 255 { return root + flat }
        return root + hash + "/" + name
    }

    /// The photo's own name in a staging path (``stagingPath(in:key:name:)``),
    /// for showing where it goes: `NAME` of `.../HASH-NAME` or `.../HASH/NAME`.
    package static func stagedName(_ path: String) -> String {
        let last = LocalPath.lastComponent(path)
        let hashLength = 16
        let utf8 = Array(last.utf8)
        if utf8.count > hashLength + 1, utf8[hashLength] == UInt8(ascii: "-"),
            utf8[..<hashLength].allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) })
        {
            return String(decoding: utf8[(hashLength + 1)...], as: UTF8.self)
        }
        return last
    }

    /// A short stable name for a remote file, for its staging folder.
    static func stableHash(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        let s = String(h, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}
