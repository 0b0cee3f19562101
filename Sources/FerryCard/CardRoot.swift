import FerryKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why the card refuses a path.
enum CardRefusal: Error, Equatable {
    /// `..`, `.`, a backslash, NUL, or a symbolic link that leaves the card's
    /// folder: 403.
    case forbidden
    /// Nothing there: 404.
    case notFound

    /// The HTTP status the card answers.
    var status: Int { self == .forbidden ? 403 : 404 }
}

/// The folder `ferry card` serves, and the one place where a card path becomes
/// a local path.
///
/// Every request path (decoded: `%2e%2e` is already `..`) must be made of plain
/// names; the local path it names, with symbolic links resolved, must stay
/// inside the root. Nothing outside can be read, listed, written or deleted.
///
/// A path without a leading `/` (`upload.cgi?DEL=old.gcode`, `UPDIR=gcode`,
/// `command.cgi?op=100&DIR=DCIM`) is read from the card's root, as the card's
/// FAT code does: it keeps no current folder, so every path starts at the root
/// (FatFs with relative paths off ignores a leading separator). flashair-sync
/// deletes that way and takes the card's `SUCCESS` as done.
struct CardRoot: Sendable {
    /// The served folder, with symbolic links resolved and no trailing slash.
    let path: String

    /// Resolves `folder` (which must exist and be a folder).
    init(_ folder: String) throws {
        guard let real = CardRoot.realPath(folder) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: folder])
        }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: real, isDirectory: &isDir), isDir.boolValue else {
            throw CocoaError(.fileReadInvalidFileName, userInfo: [NSFilePathErrorKey: folder])
        }
        path = real == "/" ? "" : real
    }

    /// The plain names of a card path: `/DCIM//100__TSB` and `DCIM/100__TSB` →
    /// `["DCIM", "100__TSB"]` (a path without a leading `/` starts at the root).
    ///
    /// - Throws: `.forbidden` for NUL, `.` or `..` components, or backslashes (a
    ///   Windows-style `..\`).
    static func components(_ cardPath: String) throws(CardRefusal) -> [String] {
        guard !cardPath.utf8.contains(0), !cardPath.contains("\\") else { throw .forbidden }
        let parts = cardPath.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if parts.contains(where: { $0 == "." || $0 == ".." }) { throw .forbidden }
        return parts
    }

    /// The local path of something that exists under the root.
    ///
    /// - Throws: `.notFound` when nothing is there, `.forbidden` for a path that
    ///   is not plain or that resolves (through symbolic links) outside the root.
    func existing(_ cardPath: String) throws(CardRefusal) -> String {
        let parts = try CardRoot.components(cardPath)
        let joined = path + "/" + parts.joined(separator: "/")
        guard let real = CardRoot.realPath(joined) else {
            // A dangling link, or nothing at all.
            var st = stat()
            if lstat(joined, &st) == 0 { throw .forbidden }
            throw .notFound
        }
        guard contains(real) else { throw .forbidden }
        return real
    }

    /// The local path where something new called by `cardPath` would go: its
    /// folder must exist inside the root, and the name must not be a link out.
    ///
    /// - Throws: `.notFound` when the folder is missing, `.forbidden` as for
    ///   ``existing(_:)`` or for the root itself.
    func creatable(_ cardPath: String) throws(CardRefusal) -> String {
        var parts = try CardRoot.components(cardPath)
        guard let name = parts.popLast() else { throw .forbidden }
        let folder = try existing("/" + parts.joined(separator: "/"))
        let target = (folder == "/" ? "" : folder) + "/" + name
        var st = stat()
        if lstat(target, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK {
            guard let real = CardRoot.realPath(target), contains(real) else { throw .forbidden }
        }
        return target
    }

    /// The card path of a local path inside the root (`/` for the root).
    func cardPath(of local: String) -> String {
        let rest = local.dropFirst(path.count)
        return rest.isEmpty ? "/" : String(rest)
    }

    /// Whether a resolved local path is the root or inside it.
    ///
    /// Compares bytes, as the file system does: Swift's `==` and `hasPrefix` treat
    /// canonically equivalent text as equal, so a link to a sibling `cafe\u{301}`
    /// looked inside a root named `caf\u{E9}` (NFC) and was served.
    func contains(_ real: String) -> Bool {
        let bytes = real.utf8
        if path.isEmpty { return bytes.first == UInt8(ascii: "/") }
        return bytes.elementsEqual(path.utf8) || bytes.starts(with: (path + "/").utf8)
    }

    /// realpath(3); nil when the path does not resolve.
    static func realPath(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    /// The entries of a local folder as a card lists them (op=100, an ez Share page), sorted by name.
    /// Symbolic links are followed when they stay inside the root, and left out
    /// when they lead outside or nowhere.
    func entries(ofLocal folder: String, cardFolder: String) -> [FlashAirRawEntry] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var out: [FlashAirRawEntry] = []
        for name in names.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
            let full = (folder == "/" ? "" : folder) + "/" + name
            var st = stat()
            guard lstat(full, &st) == 0 else { continue }
            if (st.st_mode & S_IFMT) == S_IFLNK {
                guard let real = CardRoot.realPath(full), contains(real), stat(real, &st) == 0 else { continue }
            }
            let kind = st.st_mode & S_IFMT
            guard kind == S_IFDIR || kind == S_IFREG else { continue }
            let modified = Date(
                timeIntervalSince1970: TimeInterval(st.st_mtim.tv_sec) + TimeInterval(st.st_mtim.tv_nsec) / 1e9)
            out.append(
                FlashAirRawEntry(
                    directory: cardFolder, name: name, size: kind == S_IFDIR ? 0 : Int64(st.st_size),
                    attributes: CardHandler.attributes(name: name, stat: st),
                    dateTime: FATDateTime(date: modified, timeZone: .current)))
        }
        return out
    }
}
