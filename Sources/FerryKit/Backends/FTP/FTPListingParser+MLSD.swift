import Foundation

// MARK: - MLSD and MLST (RFC 3659)

extension FTPListingParser {
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
        guard !line.isEmpty else { return nil }
        var line = line
        return line.withUTF8 { parseMLSTFacts(trimLineEnd($0[...]), folder: folder) }
    }

    /// `parseMLSDLine` on the line's bytes.
    static func parseMLSTFacts(_ line: Bytes, folder: String) -> RemoteEntry? {
        guard let facts = parseFacts(line) else { return nil }
        if facts.type == .pdir { return nil }
        var pathname = text(facts.name)
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

    enum MLSDType: Equatable {
        case file, dir, cdir, pdir, symlink, other
    }

    /// The facts of one MLSD/MLST line that Ferry uses, and the pathname's bytes.
    struct Facts {
        var type: MLSDType = .other
        var symlinkTarget: String?
        var size: Size?
        var directorySize: Size?
        var modified: RemoteTimestamp?
        var perm: (canWrite: Bool, present: Bool) = (false, false)
        var name = FTPListingParser.noBytes

        func entry(name: String, path: String) -> RemoteEntry {
            let kind: RemoteEntry.Kind
            switch type {
            case .file: kind = .file
            case .dir, .cdir, .pdir: kind = .directory
            case .symlink: kind = .symlink
            case .other: kind = .other
            }
            return RemoteEntry(
                name: name, path: path, kind: kind, size: (size ?? directorySize)?.bytes, modified: modified,
                symlinkTarget: symlinkTarget,
                isReadOnly: kind == .file && perm.present && !perm.canWrite)
        }
    }

    static func parseMLSDListLine(_ line: Bytes, prefix: String) -> ListingLine {
        let p = raw(line)
        var i = line.startIndex
        while i < line.endIndex, isBlank(p[i]) { i += 1 }
        if i == line.endIndex { return .ignored }
        guard let facts = parseFacts(line) else { return .invalid }
        if facts.type == .cdir || facts.type == .pdir { return .ignored }
        switch checkName(facts.name) {
        case .dot: return .ignored
        case .bad: return .invalid
        case .ok: break
        }
        let name = text(facts.name)
        return .entry(facts.entry(name: name, path: prefix + name))
    }

    /// `fact=value;fact=value; pathname` (RFC 3659 section 7.2).
    ///
    /// Facts end at the first `"; "`: a fact value cannot hold `;`, so this is right even
    /// when the name holds `; ` or a symlink target holds a space. A line starting with a
    /// space has no facts, unless it is an MLST fact line whose leading space was left on.
    static func parseFacts(_ line: Bytes) -> Facts? {
        var facts = Facts()
        var factText = line
        if line.first == space {
            let afterSpace = line.dropFirst()
            guard let end = factsEnd(afterSpace), afterSpace[..<end].contains(UInt8(ascii: "=")) else {
                // No facts at all: legal, if unhelpful.
                facts.name = afterSpace
                return facts.name.isEmpty ? nil : facts
            }
            factText = afterSpace
        }
        guard let end = factsEnd(factText) else { return nil }
        facts.name = line.dropFirst(end + 2 - line.startIndex)
        guard !facts.name.isEmpty else { return nil }

        // Every fact up to and with the `;` at `end`.
        let p = raw(factText)
        var factStart = factText.startIndex
        while factStart <= end {
            var semicolon = factStart
            while p[semicolon] != UInt8(ascii: ";") { semicolon += 1 }
            var eq = factStart
            while eq < semicolon, p[eq] != UInt8(ascii: "=") { eq += 1 }
            // A fact needs a name and `=`; the value may be empty or start with `=`.
            guard eq > factStart, eq < semicolon else { return nil }
            guard apply(name: factText[factStart..<eq], value: factText[(eq + 1)..<semicolon], to: &facts)
            else { return nil }
            factStart = semicolon + 1
        }
        return facts
    }

    /// Index of the `;` of the first `"; "`.
    static func factsEnd(_ s: Bytes) -> Int? {
        let p = raw(s)
        var i = s.startIndex
        while i + 1 < s.endIndex {
            if p[i] == UInt8(ascii: ";"), p[i + 1] == space { return i }
            i += 1
        }
        return nil
    }

    /// Records one fact; false when its value is malformed.
    static func apply(name: Bytes, value: Bytes, to facts: inout Facts) -> Bool {
        if equalsLowercased(name, "type") {
            facts.symlinkTarget = nil
            if equalsLowercased(value, "file") {
                facts.type = .file
            } else if equalsLowercased(value, "dir") {
                facts.type = .dir
            } else if equalsLowercased(value, "cdir") {
                facts.type = .cdir
            } else if equalsLowercased(value, "pdir") {
                facts.type = .pdir
            } else if hasLowercasedPrefix(value, "os.unix=slink") || hasLowercasedPrefix(value, "os.unix=symlink") {
                facts.type = .symlink
                // `OS.unix=slink:/target` (proftpd); a bare `OS.unix=symlink` names none.
                if let colon = value.firstIndex(of: UInt8(ascii: ":")), colon + 1 < value.endIndex {
                    facts.symlinkTarget = text(value[(colon + 1)...])
                }
            } else {
                // `OS.unix=chr-4/64`, `OS.unix=fifo`, vendor types.
                facts.type = .other
            }
        } else if equalsLowercased(name, "size") {
            guard let s = size(value) else { return false }
            facts.size = s
        } else if equalsLowercased(name, "sizd") {
            guard let s = size(value) else { return false }
            facts.directorySize = s
        } else if equalsLowercased(name, "modify") {
            guard let t = RemoteTimestamp.timeVal(value) else { return false }
            facts.modified = t
        } else if equalsLowercased(name, "perm") {
            facts.perm.present = true
            facts.perm.canWrite = false
            for c in value where c.asciiLowercased == UInt8(ascii: "w") || c.asciiLowercased == UInt8(ascii: "a") {
                facts.perm.canWrite = true
            }
        }
        // Other facts (unique, UNIX.mode, media-type, ...) are not needed.
        return true
    }
}
