import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The card's memory of writes: the op=102 "written since last asked" flag and
/// the op=121 time of the last write.
///
/// Writes through upload.cgi are recorded as they happen. Writes by anything
/// else (the "camera": another program changing the folder) are noticed by a
/// fingerprint of the whole tree (names, sizes, modification times) taken when
/// op=102 or op=121 is asked. Not thread-safe: the card keeps it under its lock.
struct CardChangeTracker: Sendable {
    /// When the card "booted" (started).
    let boot: ContinuousClock.Instant
    private var fingerprint: Int
    private var flag = false
    private var lastWrite: Duration = .zero

    /// Starts with the tree as it is now and the flag clear.
    init(root: String) {
        boot = .now
        fingerprint = CardChangeTracker.fingerprint(of: root)
    }

    /// A write happened through the card (upload, delete, new folder).
    mutating func recordWrite() {
        flag = true
        lastWrite = .now - boot
    }

    /// op=102: whether anything was written since the last ask; clears the flag.
    mutating func takeFlag(root: String) -> Bool {
        look(root)
        defer { flag = false }
        return flag
    }

    /// op=121: milliseconds since boot at the last write (0 when never written).
    mutating func lastWriteMilliseconds(root: String) -> Int64 {
        look(root)
        return Int64(lastWrite / .milliseconds(1))
    }

    private mutating func look(_ root: String) {
        let now = CardChangeTracker.fingerprint(of: root)
        if now != fingerprint {
            fingerprint = now
            recordWrite()
        }
    }

    /// A hash of every path, kind, size and modification time under `root`
    /// (at most 200,000 entries; a card holds far fewer).
    static func fingerprint(of root: String) -> Int {
        // A sum of one hash per entry: the order readdir returns them in does not matter.
        var sum = 0
        var pending = [root]
        var seen = 0
        while let folder = pending.popLast(), seen < 200_000 {
            guard let dir = opendir(folder) else { continue }
            defer { closedir(dir) }
            while let e = readdir(dir) {
                let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
                    String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
                }
                if name == "." || name == ".." { continue }
                let full = folder + "/" + name
                var st = stat()
                guard lstat(full, &st) == 0 else { continue }
                seen += 1
                var hasher = Hasher()
                hasher.combine(full)
                hasher.combine(st.st_mode)
                hasher.combine(st.st_size)
                hasher.combine(st.st_mtim.tv_sec)
                hasher.combine(st.st_mtim.tv_nsec)
                sum = sum &+ hasher.finalize()
                if (st.st_mode & S_IFMT) == S_IFDIR { pending.append(full) }
            }
        }
        return sum
    }
}
