/// Files that travel together: a raw file and its JPEG (the same stem in one
/// folder, as a camera writes RAW+JPEG), and the sidecars that follow a photo
/// (XMP from editors, THM from video cameras, WAV voice memos, AAE from phones).
///
/// `ferry sync` puts a group's members in one folder under one stem (a
/// collision numbers them all alike: `IMG_0001 (2).CR2` with
/// `IMG_0001 (2).JPG`), files them by the day its photo was taken, and deletes
/// them from the source only when every member's copy is verified.
package enum PhotoGroups {
    /// Extensions (lowercase) of files that describe another: they never lead a group.
    package static let sidecarExtensions: Set<String> = ["xmp", "thm", "wav", "aae"]

    /// The group a remote path belongs to: its folder and its stem, ignoring case
    /// (`/DCIM/100/IMG_0001.CR2` and `/DCIM/100/img_0001.xmp` are one group). A
    /// sidecar named after the whole file (`IMG_0001.CR2.xmp`, as darktable
    /// writes) belongs to that file's group.
    package static func key(_ path: String) -> String {
        let folder = LocalPath.parent(path)
        var name = Substring(LocalPath.lastComponent(path))
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            let ext = name[name.index(after: dot)...].lowercased()
            name = name[..<dot]
            if sidecarExtensions.contains(ext), let inner = name.lastIndex(of: "."), inner != name.startIndex {
                name = name[..<inner]
            }
        }
        return folder + "\n" + name.lowercased()
    }

    /// Whether a file is a sidecar (it follows its photo, it never leads).
    static func isSidecar(_ path: String) -> Bool {
        sidecarExtensions.contains(LocalPath.pathExtension(path).lowercased())
    }

    /// The groups of more than one member among `paths`, by ``key(_:)``; in each,
    /// the photos first (by name), then the sidecars (by name).
    static func groups(_ paths: [String]) -> [String: [String]] {
        var byKey: [String: [String]] = [:]
        for p in paths { byKey[key(p), default: []].append(p) }
        return byKey.filter { $0.value.count > 1 }.mapValues { members in
            members.sorted { a, b in
                let (sa, sb) = (isSidecar(a), isSidecar(b))
                return sa != sb ? !sa : a < b
            }
        }
    }

    /// The name `name` takes in a group numbered `n` (1: as it is), keeping a
    /// darktable-style sidecar's full inner name: `IMG_0001.CR2.xmp` becomes
    /// `IMG_0001 (2).CR2.xmp`.
    static func numbered(_ name: String, _ n: Int) -> String {
        guard n > 1 else { return name }
        let last = LocalPath.lastComponent(name)
        let folder = name.count > last.count ? String(name.dropLast(last.count)) : ""
        let parts = last.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count >= 3, sidecarExtensions.contains(parts.last!.lowercased()), !parts[0].isEmpty {
            let stem = parts.dropLast(2).joined(separator: ".")
            return folder + "\(stem) (\(n)).\(parts[parts.count - 2]).\(parts.last!)"
        }
        return SyncNaming.numbered(name, n)
    }
}
