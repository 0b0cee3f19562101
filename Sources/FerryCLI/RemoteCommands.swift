import FerryKit
import Foundation

/// `--cacert FILE`, as in curl.
let cacertOption = CommandSpec.Option(
    long: "cacert", short: nil, takesValue: true,
    help: "trust the certificate authorities in this PEM file (default: CURL_CA_BUNDLE, SSL_CERT_FILE, the system's)",
    valueName: "FILE")

/// Options every command that talks to a server accepts.
let connectionOptions: [CommandSpec.Option] = [
    .init(long: "insecure", short: "k", takesValue: false, help: "accept TLS certificates that do not verify"),
    cacertOption,
    .init(
        long: "connections", short: nil, takesValue: true, help: "connections to this server at once", valueName: "N"),
]

/// The command's connection options: TLS (`--insecure`, `--cacert` or curl's
/// CA variables), `--connections`, and credentials resolved for every scheme as
/// the README promises (the URL, `FERRY_USER`/`FERRY_PASSWORD`, `~/.netrc`).
func connectionOptions(_ args: ParsedArguments) throws -> ConnectionOptions {
    var options = ConnectionOptions(verifyTLS: !args.has("insecure"), resolveCredentials: true)
    options.caCertificateFile = ConnectionOptions.caCertificateFile(given: args.value("cacert"))
    if args.value("connections") != nil {
        options.maxConnections = try args.int("connections", default: 1, in: 1...64)
    }
    return options
}

/// Opens the file system a URL names, with the command's connection options.
func openFileSystem(_ url: RemoteURL, _ args: ParsedArguments) throws -> any RemoteFileSystem {
    try Ferry.fileSystem(for: url, options: connectionOptions(args))
}

/// A remote URL argument (a local path is refused: these commands act on servers).
func remoteURL(_ text: String, for command: String) throws -> RemoteURL {
    let u = try RemoteURL(parsing: text)
    if u.scheme == .file {
        throw UsageError(
            message: "'\(command)' wants a remote URL (flashair://, ftp://, ...), not the local path \(text)")
    }
    return u
}

/// Runs `body` on every URL argument, reporting each failure and going on;
/// 1 when any failed. Bad URLs stop everything first (exit 2).
func forEachURL(
    _ args: ParsedArguments, command: String, operation: String, console: Console,
    _ body: (any RemoteFileSystem, RemoteURL) async throws -> Void
) async throws -> Int32 {
    let urls = try args.positionals.map { try remoteURL($0, for: command) }
    var failed = 0
    for url in urls {
        do {
            try await body(openFileSystem(url, args), url)
        } catch {
            console.error("ferry \(command): \(FerryError.wrap(error, operation: operation, target: url.redacted))")
            failed += 1
        }
    }
    return failed == 0 ? 0 : 1
}

/// `ferry ls URL [--json] [--all]`
enum ListCommand: Command {
    static let spec = CommandSpec(
        name: "ls", summary: "list one folder",
        usage: "ferry ls URL [--json] [--all]",
        options: [
            .init(long: "json", short: nil, takesValue: false, help: "print one JSON array"),
            .init(long: "all", short: "a", takesValue: false, help: "include hidden and system entries"),
        ] + connectionOptions,
        minPositionals: 1, maxPositionals: 1,
        details: "Folders come first, then files, each sorted by name.")

    struct JSONEntry: Encodable {
        var name: String
        var path: String
        var type: String
        var size: Int64?
        var modified: String?
        var hidden: Bool
        var readOnly: Bool
        var target: String?

        enum CodingKeys: String, CodingKey { case name, path, type, size, modified, hidden, readOnly, target }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(path, forKey: .path)
            try c.encode(type, forKey: .type)
            // size and modified are always present, null when unknown.
            try c.encode(size, forKey: .size)
            try c.encode(modified, forKey: .modified)
            try c.encode(hidden, forKey: .hidden)
            try c.encode(readOnly, forKey: .readOnly)
            try c.encodeIfPresent(target, forKey: .target)
        }
    }

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        let url = try remoteURL(args.positionals[0], for: "ls")
        let fs = try openFileSystem(url, args)
        let entries = try await fs.list(url.path)
            .filter { args.has("all") || !$0.isHidden }
            .sorted { ($0.isDirectory ? 0 : 1, $0.name) < ($1.isDirectory ? 0 : 1, $1.name) }
        if args.has("json") {
            let rows = entries.map {
                JSONEntry(
                    name: $0.name, path: $0.path, type: $0.kind.rawValue, size: $0.size, modified: $0.modified?.iso8601,
                    hidden: $0.isHidden, readOnly: $0.isReadOnly, target: $0.symlinkTarget)
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
            console.out(String(decoding: try encoder.encode(rows), as: UTF8.self) + "\n")
            return 0
        }
        var text = ""
        for e in entries {
            let kind = e.isDirectory ? "d" : e.kind == .symlink ? "l" : e.kind == .other ? "?" : "-"
            let size = e.isDirectory ? "" : e.size.map { String($0) } ?? "?"
            let date =
                e.modified.map { t in
                    String(format: "%04d-%02d-%02d %02d:%02d", t.year, t.month, t.day, t.hour, t.minute)
                } ?? "????-??-?? ??:??"
            var name = e.name + (e.isDirectory ? "/" : "")
            if let target = e.symlinkTarget { name += " -> " + target }
            text += "\(kind) \(size.leftPadded(to: 12)) \(date)  \(name)\n"
        }
        console.show(text)
        if !args.has("quiet") {
            console.error("\(entries.count) item\(entries.count == 1 ? "" : "s") in \(url.redacted)")
        }
        return 0
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

/// `ferry rm URL...`
enum RemoveCommand: Command {
    static let spec = CommandSpec(
        name: "rm", summary: "delete remote files", usage: "ferry rm URL...",
        options: connectionOptions, minPositionals: 1, maxPositionals: nil)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        try await forEachURL(args, command: "rm", operation: "delete", console: console) { fs, url in
            try await fs.delete(url.path)
            if !args.has("quiet") { console.error("deleted \(url.redacted)") }
        }
    }
}

/// `ferry mkdir URL... [-p]`
enum MakeDirectoryCommand: Command {
    static let spec = CommandSpec(
        name: "mkdir", summary: "create remote folders", usage: "ferry mkdir URL... [-p]",
        options: [.init(long: "parents", short: "p", takesValue: false, help: "create missing parent folders too")]
            + connectionOptions,
        minPositionals: 1, maxPositionals: nil)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        try await forEachURL(args, command: "mkdir", operation: "mkdir", console: console) { fs, url in
            try await fs.makeDirectory(url.path, createParents: args.has("parents"))
        }
    }
}

/// `ferry rmdir URL...`
enum RemoveDirectoryCommand: Command {
    static let spec = CommandSpec(
        name: "rmdir", summary: "remove empty remote folders", usage: "ferry rmdir URL...",
        options: connectionOptions, minPositionals: 1, maxPositionals: nil)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        try await forEachURL(args, command: "rmdir", operation: "rmdir", console: console) { fs, url in
            try await fs.removeDirectory(url.path)
        }
    }
}

/// `ferry mv URL NEWNAME`
enum MoveCommand: Command {
    static let spec = CommandSpec(
        name: "mv", summary: "rename or move a remote file or folder", usage: "ferry mv URL NEWNAME",
        options: connectionOptions, minPositionals: 2, maxPositionals: 2,
        details: "NEWNAME is a name in the same folder, or an absolute path on the same server.")

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        let url = try remoteURL(args.positionals[0], for: "mv")
        var newName = args.positionals[1]
        if newName.contains("://") {
            let target = try remoteURL(newName, for: "mv")
            guard target.hostKey == url.hostKey else {
                throw UsageError(message: "mv works within one server; download and upload to copy between servers")
            }
            newName = target.path
        }
        let destination = newName.hasPrefix("/") ? newName : remoteJoin(remoteParent(url.path), newName)
        try await openFileSystem(url, args).rename(url.path, to: destination)
        return 0
    }
}
