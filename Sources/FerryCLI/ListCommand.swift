import FerryKit
import Foundation

/// `ferry ls URL [-l [-h]] [--json] [--all]`
enum ListCommand: Command {
    enum Keys {
        static let json = Flag("json", help: "print one JSON array")
        static let all = Flag("all", short: "a", help: "include hidden and system entries")
        static let long = Flag("long", short: "l", help: "type, size, date and name in aligned columns")
        static let human = Flag(
            "human-readable", short: "h", help: "with -l, sizes as 1.2 MB (-h is --help for every other command)")
        static let recursive = Flag(
            "recursive", short: "R", help: "list every folder below too, names as paths below URL")
    }

    static let spec = CommandSpec(
        name: "ls", summary: "list one folder (or one file)",
        usage: "ferry ls URL [-l [-h]] [-R] [--json] [--all]",
        options: [Keys.json, Keys.all, Keys.long, Keys.human, Keys.recursive, Glob.ignoreCase] + connectionOptions,
        minPositionals: 1, maxPositionals: 1,
        details: """
            Folders come first, then files, each sorted by name. A file's URL lists that
            file; a pattern (*, ?, [...]) in the last part of the URL lists the matching
            entries. Without -l, each line is "TYPE SIZE DATE  NAME" with the size right-aligned
            in 12 columns, a stable format for scripts; -l aligns the columns to the widest
            entry and -h shows sizes for people, with the time as precisely as the source
            knows it: seconds when it gives them, 20:16 when only the minute (web folder
            pages, FTP LIST for this year), the date alone when only the day. --json
            prints one array; "modifiedPrecision" is "second", "minute" or "day".
            -R lists the whole tree below URL, each entry named by its path below URL
            (sub/IMG_0001.JPG), folders before their contents; with --json, one object
            per line (JSON lines) instead of one array, so a large tree streams.
            """)

    struct JSONEntry: Encodable {
        var name: String
        var path: String
        var type: String
        // size and modified are always present, null when unknown.
        @JSONNullable var size: Int64?
        @JSONNullable var modified: String?
        /// How precisely `modified` is known: `second`, `minute` or `day`; null without a time.
        @JSONNullable var modifiedPrecision: String?
        var hidden: Bool
        var readOnly: Bool
        var target: String?
    }

    static func row(_ e: RemoteEntry) -> JSONEntry {
        JSONEntry(
            name: e.name, path: e.path, type: e.kind.rawValue, size: e.size, modified: e.modified?.iso8601,
            modifiedPrecision: e.modified?.precision.rawValue, hidden: e.isHidden, readOnly: e.isReadOnly,
            target: e.symlinkTarget)
    }

    /// `ls -R`: the tree below the URL, named by paths below it.
    static func listTree(_ fs: any RemoteFileSystem, _ url: RemoteURL, _ args: ParsedArguments, console: Console)
        async throws -> Int32
    {
        let (folders, files) = try await fs.walk(url.path, includeHidden: args.has(Keys.all))
        let base = url.path.hasSuffix("/") ? url.path : url.path + "/"
        // Folders before their contents: sorted by path, a folder's path is a prefix of its entries'.
        let entries = (folders + files).sorted { $0.path < $1.path }
        if args.has(Keys.json) {
            for e in entries { console.json(row(e)) }
            return 0
        }
        let named = entries.map { e -> RemoteEntry in
            var e = e
            if e.path.hasPrefix(base) { e.name = String(e.path.dropFirst(base.count)) }
            return e
        }
        console.show(args.has(Keys.long) ? longListing(named, human: args.has(Keys.human)) : plainListing(named))
        if !args.has(CommonOptions.quiet) {
            let f = files.count == 1 ? "" : "s"
            let d = folders.count == 1 ? "" : "s"
            console.error("\(files.count) file\(f) in \(folders.count) folder\(d) below \(url.redacted)")
        }
        return 0
    }

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        let url = try remoteURL(args.positionals[0], for: "ls")
        let fs = try openFileSystem(url, args)
        // `ferry ls camera://` with several cameras connected: which, and how to pick one.
        if let camera = fs as? CameraFileSystem, url.path == "/", let several = try await camera.severalCameras() {
            console.out(several.table.map { $0 + "\n" }.joined())
            console.error(several.hint)
            return 0
        }
        if args.has(Keys.recursive) { return try await listTree(fs, url, args, console: console) }
        let listed: [RemoteEntry]
        var shown = url.redacted
        if let matches = try await Glob.expand(
            url, in: fs, includeHidden: args.has(Keys.all), ignoreCase: args.has(Glob.ignoreCase))
        {
            listed = matches
            shown = "\(url.with(path: remoteParent(url.path)).redacted) matching \(localName(url.path))"
        } else {
            listed = try await list(fs, url)
        }
        let entries =
            listed
            .filter { args.has(Keys.all) || !$0.isHidden }
            .sorted { ($0.isDirectory ? 0 : 1, $0.name) < ($1.isDirectory ? 0 : 1, $1.name) }
        if args.has(Keys.json) {
            let rows = entries.map(row)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
            console.out(String(decoding: try encoder.encode(rows), as: UTF8.self) + "\n")
            return 0
        }
        console.show(
            args.has(Keys.long) ? longListing(entries, human: args.has(Keys.human)) : plainListing(entries))
        if !args.has(CommonOptions.quiet) {
            console.error("\(entries.count) item\(entries.count == 1 ? "" : "s") in \(shown)")
        }
        return 0
    }

    /// A folder's entries; for a file, that one file (as `ls FILE` does).
    static func list(_ fs: any RemoteFileSystem, _ url: RemoteURL) async throws -> [RemoteEntry] {
        do {
            return try await fs.list(url.path)
        } catch let listError {
            guard !url.isFolderPath, url.path != "/", [.notFound, .badListing].contains(listError.code)
            else { throw notACard(listError, url) }
            guard let entry = try? await fs.stat(url.path), !entry.isDirectory else { throw notACard(listError, url) }
            return [entry]
        }
    }

    /// A host that answers but has no command.cgi is no FlashAir card.
    static func notACard(_ error: FerryError, _ url: RemoteURL) -> FerryError {
        guard url.scheme == .flashair, error.code == .notFound, error.serverCode == 404 else { return error }
        return InfoCommand.notACardError(url)
    }

    static func kind(_ e: RemoteEntry) -> String {
        e.isDirectory ? "d" : e.kind == .symlink ? "l" : e.kind == .other ? "?" : "-"
    }

    static func date(_ e: RemoteEntry) -> String {
        e.modified.map { t in
            String(format: "%04d-%02d-%02d %02d:%02d", t.year, t.month, t.day, t.hour, t.minute)
        } ?? "????-??-?? ??:??"
    }

    /// `-l`: the time as precisely as the source knows it, padded to one width:
    /// seconds when it gave them, `20:16` when only the minute, the date alone when only the day.
    static func preciseDate(_ e: RemoteEntry) -> String {
        guard let t = e.modified else { return "????-??-?? ??:??:??" }
        let day = String(format: "%04d-%02d-%02d", t.year, t.month, t.day)
        switch t.precision {
        case .second: return day + String(format: " %02d:%02d:%02d", t.hour, t.minute, t.second)
        case .minute: return day + String(format: " %02d:%02d   ", t.hour, t.minute)
        case .day: return day + "         "
        }
    }

    static func name(_ e: RemoteEntry) -> String {
        var name = e.name + (e.isDirectory ? "/" : "")
        if let target = e.symlinkTarget { name += " -> " + target }
        return name
    }

    /// The format scripts read: unchanged since the first release.
    static func plainListing(_ entries: [RemoteEntry]) -> String {
        var text = ""
        for e in entries {
            let size = e.isDirectory ? "" : e.size.map { String($0) } ?? "?"
            text += "\(kind(e)) \(size.leftPadded(to: 12)) \(date(e))  \(name(e))\n"
        }
        return text
    }

    /// `-l`: columns as wide as their widest entry; `-h`: sizes for people.
    static func longListing(_ entries: [RemoteEntry], human: Bool) -> String {
        let sizes = entries.map { e in
            e.isDirectory ? "-" : e.size.map { human ? Format.bytes($0) : String($0) } ?? "?"
        }
        let width = sizes.map(\.count).max() ?? 1
        var text = ""
        for (e, size) in zip(entries, sizes) {
            text += "\(kind(e))  \(size.leftPadded(to: width))  \(preciseDate(e))  \(name(e))\n"
        }
        return text
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
