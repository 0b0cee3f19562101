import FerryKit
import Foundation

/// Options every command that talks to a server accepts.
enum ConnectionKeys {
    static let insecure = Flag(
        "insecure", short: "k", help: "accept TLS certificates that do not verify; SFTP: skip the host key check")
    static let connections = ValueOption<Int?>(
        "connections", help: "connections to this server at once", in: 1...64)
    /// As in curl.
    static let cacert = ValueOption(
        "cacert",
        help:
            "trust the certificate authorities in this PEM file (default: CURL_CA_BUNDLE, SSL_CERT_FILE, the system's)",
        valueName: "FILE")
}

/// Timeouts, as in curl.
enum TimeoutKeys {
    static let connect = seconds(
        "connect-timeout", help: "give up opening a connection after this many seconds")
    static let timeout = seconds(
        "timeout", help: "a connection that moves nothing for this many seconds is dead (then retried)")

    /// Seconds, more than 0 and at most a day; nil when absent.
    static func seconds(_ long: String, help: String) -> ValueOption<Duration?> {
        ValueOption(long, help: help, valueName: "S", default: nil, wants: "a number of seconds") { text in
            guard let n = Double(text), n > 0, n <= 86_400 else { return nil }
            return Duration.milliseconds(Int64(n * 1000))
        }
    }
}

/// The connection options as declared in a command's spec.
let connectionOptions: [any OptionKey] =
    [
        ConnectionKeys.insecure, ConnectionKeys.cacert, ConnectionKeys.connections, TimeoutKeys.connect,
        TimeoutKeys.timeout,
    ]
    + sshOptions

/// What every request of the command follows (`RequestSettings`): `-v`'s trace
/// on stderr, `--connect-timeout`, `--timeout`.
func requestSettings(_ args: ParsedArguments, console: Console) throws -> RequestSettings {
    var settings = RequestSettings()
    func seconds(_ key: ValueOption<Duration?>) throws -> Duration? {
        guard args.declared.contains(key.option.long) else { return nil }
        return try args.value(key)
    }
    settings.connectTimeout = try seconds(TimeoutKeys.connect)
    settings.stallTimeout = try seconds(TimeoutKeys.timeout)
    if args.has(CommonOptions.verbose) {
        let secrets = traceSecrets(args.positionals)
        settings.trace = { line in
            var text = line.text
            for secret in secrets { text = text.replacingOccurrences(of: secret, with: "****") }
            let mark =
                switch line.kind {
                case .info: "*"
                case .sent: ">"
                case .received: "<"
                }
            console.error("\(mark) \(text)")
        }
    }
    return settings
}

/// Passwords the trace must never show, beside what FerryKit masks: those in
/// the command's URLs and `FERRY_PASSWORD`, as given and percent-encoded.
func traceSecrets(_ positionals: [String]) -> [String] {
    var found: [String] = []
    for p in positionals where p.contains("://") {
        if let u = try? RemoteURL(parsing: p), let password = u.password, !password.isEmpty { found.append(password) }
    }
    if let p = ProcessInfo.processInfo.environment["FERRY_PASSWORD"], !p.isEmpty { found.append(p) }
    let encoded = found.compactMap { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) }
    return Array(Set(found + encoded)).filter { $0.count >= 2 }.sorted { $0.count > $1.count }
}

/// Options of the commands that move files (`get`, `put`).
enum TransferKeys {
    static let jobs = ValueOption("jobs", short: "j", help: "transfers at once", default: 4, in: 1...64)
    static let retries = ValueOption(
        "retries", help: "failed tries in a row before giving up", default: 5, in: 0...100)
    static let json = Flag("json", help: "print JSON lines of progress and results")
    /// As in curl and wget; Ferry resumes anyway.
    static let resume = Flag(
        "continue", short: "c", help: "resume a partial file (the default; accepted for curl -C - and wget -c)")

    /// `-c` changes nothing: said once, unless quiet.
    static func sayResumingIsTheDefault(_ args: ParsedArguments, command: String, console: Console) {
        guard args.has(resume), !args.has(CommonOptions.quiet), !args.has(CommonOptions.json) else { return }
        console.error("ferry \(command): -c/--continue is the default: Ferry resumes from the .part file anyway.")
    }
}

/// The transfer options a command shares with the others that move files (`get`,
/// `put`, `sync`): how many at once, how many failed tries, and what to do with a
/// destination that differs. It is the one place they become ``DownloadOptions``
/// and ``UploadOptions``, with the rule that `--overwrite` and `--skip-existing`
/// exclude each other.
struct TransferOptionGroup: Sendable {
    var jobs: ValueOption<Int>
    /// Nil for a command without `--retries` (`put`: the library's default).
    var retries: ValueOption<Int>?
    /// Nil for a command that never replaces (`sync`).
    var overwrite: Flag?
    var skipExisting: Flag?

    /// What the group's options say, read once.
    struct Values: Sendable, Equatable {
        var jobs: Int
        var maxRetries: Int?
        var overwrite: OverwritePolicy
        var verifyTLS: Bool

        /// Download options with these values (the rest as the library has them).
        var download: DownloadOptions {
            var o = DownloadOptions()
            (o.overwrite, o.maxRetries, o.verifyTLS) = (overwrite, maxRetries ?? o.maxRetries, verifyTLS)
            return o
        }

        /// Upload options with these values (the rest as the library has them).
        var upload: UploadOptions {
            var o = UploadOptions()
            (o.overwrite, o.maxRetries, o.verifyTLS) = (overwrite, maxRetries ?? o.maxRetries, verifyTLS)
            return o
        }
    }

    /// Usage errors of the group's options: both of `--overwrite` and
    /// `--skip-existing`, or a number out of range.
    func validate(_ args: ParsedArguments) throws {
        _ = try values(args)
    }

    /// The values of the group's options, or the usage error they make.
    func values(_ args: ParsedArguments) throws -> Values {
        let replace = overwrite.map(args.has) ?? false
        let keep = skipExisting.map(args.has) ?? false
        if replace && keep {
            throw UsageError(message: "--overwrite and --skip-existing exclude each other")
        }
        return Values(
            jobs: try args.value(jobs), maxRetries: try retries.map { try args.value($0) },
            overwrite: replace ? .overwrite : keep ? .skip : .fail, verifyTLS: !args.has(ConnectionKeys.insecure))
    }
}

/// The one place a command's connection options are built: TLS (`--insecure`,
/// `--cacert` or curl's CA variables), `--connections`, and credentials resolved
/// for every scheme as the README promises (the URL, `FERRY_USER`/`FERRY_PASSWORD`,
/// `~/.netrc`).
func connectionSettings(_ args: ParsedArguments) throws -> ConnectionOptions {
    var options = ConnectionOptions(verifyTLS: !args.has(ConnectionKeys.insecure), resolveCredentials: true)
    options.caCertificateFile = ConnectionOptions.caCertificateFile(given: args.value(ConnectionKeys.cacert))
    try applySSHOptions(&options, args)
    if let n = try args.value(ConnectionKeys.connections) { options.maxConnections = n }
    return options
}

/// Opens the file system a URL names, with the command's connection options.
func openFileSystem(_ url: RemoteURL, _ args: ParsedArguments) throws -> any RemoteFileSystem {
    var opener = FileSystemOpener(args)
    return try opener.open(url)
}

/// Opens the file systems of a command's URLs: the connection options are built
/// once, and credentials resolved once per server and user (`Credentials.resolve`:
/// the URL, `FERRY_USER`/`FERRY_PASSWORD`, `~/.netrc`), not once per URL: `ferry
/// get URL1 ... URL1000` read and parsed `~/.netrc` a thousand times (bench/RESULTS.md,
/// issue 19). Every URL gets the credentials the resolution gives it.
struct FileSystemOpener {
    let args: ParsedArguments
    private var options: ConnectionOptions?
    /// What `Credentials.resolve` gave for a server and the user and password in
    /// the URL (all it reads of a URL is its host, user and password).
    private var credentials: [Server: Credentials] = [:]
    private var last: (server: Server, credentials: Credentials)?

    private struct Server: Hashable {
        var scheme: RemoteURL.Scheme
        var host: String
        var port: Int?
        var user: String?
        var password: String?
    }

    init(_ args: ParsedArguments) { self.args = args }

    /// The file system `url` names, as `openFileSystem` opens it.
    mutating func open(_ url: RemoteURL) throws -> any RemoteFileSystem {
        var options: ConnectionOptions
        if let built = self.options {
            options = built
        } else {
            options = try connectionSettings(args)
            self.options = options
        }
        warnIfHostKeyUnchecked(url, options)
        if options.credentials == nil && options.resolveCredentials {
            let server = Server(
                scheme: url.scheme, host: url.host, port: url.port, user: url.user, password: url.password)
            // Nil from the resolution (anonymous) is kept as `.anonymous`, which
            // `ConnectionOptions` and the SFTP login treat the same way.
            // Most commands name one server: compared first, without hashing.
            if let last, last.server == server {
                options.credentials = last.credentials
            } else {
                var found = credentials[server] ?? Credentials.resolve(for: url) ?? .anonymous
                // The password typed at the prompt, for the user who had none.
                if let typed = PasswordPrompt.value, (found.password ?? "").isEmpty,
                    let user = found.isAnonymous ? url.user : found.user
                {
                    found = Credentials(user: user, password: typed)
                }
                credentials[server] = found
                options.credentials = found
                last = (server, found)
            }
        }
        return try Ferry.fileSystem(for: url, options: options)
    }
}

/// A remote URL argument (a local path is refused: these commands act on servers).
func remoteURL(_ text: String, for command: String) throws -> RemoteURL {
    if let bare = bareHostURL(text) { return try RemoteURL(parsing: bare) }
    let u = try RemoteURL(parsing: text)
    if u.scheme == .file {
        throw UsageError(
            message: "'\(command)' wants a remote URL (flashair://, ftp://, ...), not the local path \(text)")
    }
    return u
}

/// What a transfer waiting for its source's only connection is shown as.
func waitingText(for url: RemoteURL, connections: Int?) -> String? {
    if url.scheme == .flashair || url.scheme == .ezshare { return "waiting for the card (1 connection)" }
    if let n = connections { return "waiting for the server (\(n) connection\(n == 1 ? "" : "s"))" }
    return nil
}

/// `host/path` or `host:port/path` as curl takes it: `http://host/path`, when
/// it cannot be a local path that exists and its first part looks like a host
/// (a dot, a port, or `localhost`).
func bareHostURL(_ text: String) -> String? {
    // By bytes: Foundation's `contains` on a String was 5.8K instructions per
    // argument, 2% of a 1,000-URL `get` (bench/cpu_bench.py).
    guard !hasSchemeSeparator(text),
        let first = text.split(separator: "/", omittingEmptySubsequences: false).first,
        !first.isEmpty, !text.hasPrefix("."), !text.hasPrefix("~")
    else { return nil }
    let parts = first.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count <= 2, let host = parts.first, !host.isEmpty,
        host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }),
        !host.hasPrefix("."), !host.hasSuffix(".")
    else { return nil }
    if parts.count == 2 { guard let port = Int(parts[1]), (1...65535).contains(port) else { return nil } }
    guard parts.count == 2 || host.contains(".") || host.lowercased() == "localhost" else { return nil }
    guard !FileManager.default.fileExists(atPath: text) else { return nil }
    return "http://" + text
}

/// Whether `text` holds `://`, by its bytes.
private func hasSchemeSeparator(_ text: String) -> Bool {
    var run = 0  // how much of "://" the bytes so far end with
    for b in text.utf8 {
        switch (run, b) {
        case (_, UInt8(ascii: ":")): run = 1
        case (1, UInt8(ascii: "/")): run = 2
        case (2, UInt8(ascii: "/")): return true
        default: run = 0
        }
    }
    return false
}
