import FerryKit
import Foundation

/// Options every command that talks to a server accepts.
enum ConnectionKeys {
    static let insecure = Flag(
        "insecure", short: "k", help: "accept TLS certificates that do not verify; SFTP: skip the host key check")
    static let connections = ValueOption("connections", help: "connections to this server at once", valueName: "N")
    /// As in curl.
    static let cacert = ValueOption(
        "cacert",
        help:
            "trust the certificate authorities in this PEM file (default: CURL_CA_BUNDLE, SSL_CERT_FILE, the system's)",
        valueName: "FILE")
}

/// The connection options as declared in a command's spec.
let connectionOptions: [any OptionKey] =
    [ConnectionKeys.insecure, ConnectionKeys.cacert, ConnectionKeys.connections] + sshOptions

/// Options of the commands that move files (`get`, `put`).
enum TransferKeys {
    static let jobs = ValueOption("jobs", short: "j", help: "transfers at once (default 4)", valueName: "N")
    static let retries = ValueOption(
        "retries", help: "failed tries in a row before giving up (default 5)", valueName: "N")
    static let json = Flag("json", help: "print JSON lines of progress and results")
}

/// The one place a command's connection options are built: TLS (`--insecure`,
/// `--cacert` or curl's CA variables), `--connections`, and credentials resolved
/// for every scheme as the README promises (the URL, `FERRY_USER`/`FERRY_PASSWORD`,
/// `~/.netrc`).
func connectionSettings(_ args: ParsedArguments) throws -> ConnectionOptions {
    var options = ConnectionOptions(verifyTLS: !args.has(ConnectionKeys.insecure), resolveCredentials: true)
    options.caCertificateFile = ConnectionOptions.caCertificateFile(given: args.value(ConnectionKeys.cacert))
    applySSHOptions(&options, args)
    if args.value(ConnectionKeys.connections) != nil {
        options.maxConnections = try args.int(ConnectionKeys.connections, default: 1, in: 1...64)
    }
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
                let found = credentials[server] ?? Credentials.resolve(for: url) ?? .anonymous
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
