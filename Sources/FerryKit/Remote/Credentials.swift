import Foundation

/// A user name and password for one server. The password is never printed:
/// `description` shows `***`.
public struct Credentials: Sendable, Hashable, CustomStringConvertible {
    /// The user name.
    public var user: String
    /// The password; nil logs in with the user name alone.
    public var password: String?

    /// Creates credentials.
    public init(user: String, password: String?) {
        self.user = user
        self.password = password
    }

    /// The user name, with `***` for a password.
    public var description: String { password == nil ? user : "\(user):***" }

    /// The anonymous login, said explicitly: FTP logs in as `anonymous` (libcurl's
    /// usual password), HTTP sends no authorization.
    public static let anonymous = Credentials(user: "anonymous", password: nil)

    /// Whether this is the anonymous login (`Credentials.anonymous`).
    public var isAnonymous: Bool { self == .anonymous }

    /// The user and password written in the URL (`ftp://ann:pw@host/`), nil when
    /// it names no user. Reads nothing else.
    public static func inURL(_ url: RemoteURL) -> Credentials? {
        url.user.map { Credentials(user: $0, password: url.password) }
    }

    /// Finds the credentials for a URL as the `ferry` command does: the URL's own
    /// user and password first; then `FERRY_PASSWORD` (for the URL's user, or with
    /// `FERRY_USER` when the URL names none); then `~/.netrc` (`machine HOST login
    /// USER password PASS`, or `default`; `NETRC` names another file). Nil means
    /// anonymous.
    ///
    /// The library calls this only when asked (`ConnectionOptions.resolveCredentials`):
    /// by itself it reads no environment variable and no `~/.netrc`.
    ///
    /// - Parameters:
    ///   - url: The URL to find credentials for (its host and user pick the
    ///     `~/.netrc` entry).
    ///   - environment: The variables to read; nil: this process's, each looked
    ///     up by name.
    ///   - netrcPath: The netrc file to read; nil: `NETRC`, else `~/.netrc`.
    public static func resolve(
        for url: RemoteURL, environment: [String: String]? = nil, netrcPath: String? = nil
    ) -> Credentials? {
        if let user = url.user, let password = url.password {
            return Credentials(user: user, password: password)
        }
        let variable = EnvironmentLookup(environment)
        if let user = url.user, let password = variable["FERRY_PASSWORD"] {
            return Credentials(user: user, password: password)
        }
        if url.user == nil, let password = variable["FERRY_PASSWORD"], let user = variable["FERRY_USER"] {
            return Credentials(user: user, password: password)
        }
        let path = netrcPath ?? (variable["NETRC"] ?? (variable["HOME"] ?? NSHomeDirectory()) + "/.netrc")
        if let text = try? String(contentsOfFile: path, encoding: .utf8),
            let found = Netrc.lookup(text, host: url.host, user: url.user)
        {
            return found
        }
        return inURL(url)
    }
}

/// A reader for `~/.netrc`, as curl reads it: tokens separated by blanks or line
/// ends, `"quoted tokens"` with `\"`, `\\`, `\n`, `\r`, `\t` escapes (a password
/// with spaces), `#` comments, and `macdef NAME` followed by a macro body that
/// runs to the next empty line and is skipped.
enum Netrc {
    static func tokens(_ text: String) -> [String] {
        var tokens: [String] = []
        var skippingMacro = false
        // "\r\n" is one Character in Swift: split on both line ends.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = line.hasSuffix("\r") ? line.dropLast() : line
            if skippingMacro {
                if line.allSatisfy({ $0 == " " || $0 == "\t" }) { skippingMacro = false }
                continue
            }
            var chars = line[...]
            var lineTokens: [String] = []
            while true {
                chars = chars.drop { $0 == " " || $0 == "\t" }
                guard let first = chars.first, first != "#" else { break }
                var token = ""
                if first == "\"" {
                    chars = chars.dropFirst()
                    var escaped = false
                    while let c = chars.first {
                        chars = chars.dropFirst()
                        if escaped {
                            switch c {
                            case "n": token.append("\n")
                            case "r": token.append("\r")
                            case "t": token.append("\t")
                            default: token.append(c)
                            }
                            escaped = false
                        } else if c == "\\" {
                            escaped = true
                        } else if c == "\"" {
                            break
                        } else {
                            token.append(c)
                        }
                    }
                } else {
                    let end = chars.firstIndex { $0 == " " || $0 == "\t" } ?? chars.endIndex
                    token = String(chars[..<end])
                    chars = chars[end...]
                }
                lineTokens.append(token)
            }
            if let m = lineTokens.firstIndex(of: "macdef") {
                // The macro body starts on the next line; keep `macdef NAME` only.
                tokens += lineTokens[...min(m + 1, lineTokens.count - 1)]
                skippingMacro = true
            } else {
                tokens += lineTokens
            }
        }
        return tokens
    }

    /// The entry for `host` (and `user`, when given), falling back to `default`.
    static func lookup(_ text: String, host: String, user: String?) -> Credentials? {
        let tokens = Netrc.tokens(text)
        var entries: [(machine: String?, login: String?, password: String?)] = []
        var i = 0
        while i < tokens.count {
            switch tokens[i] {
            case "machine":
                entries.append((i + 1 < tokens.count ? tokens[i + 1] : nil, nil, nil))
                i += 2
            case "default":
                entries.append((nil, nil, nil))
                i += 1
            case "login":
                if !entries.isEmpty, i + 1 < tokens.count { entries[entries.count - 1].login = tokens[i + 1] }
                i += 2
            case "password":
                if !entries.isEmpty, i + 1 < tokens.count { entries[entries.count - 1].password = tokens[i + 1] }
                i += 2
            case "account", "macdef":
                i += 2
            default:
                i += 1
            }
        }
        func matches(_ e: (machine: String?, login: String?, password: String?)) -> Bool {
            guard let login = e.login else { return false }
            return user == nil || user == login
        }
        if let e = entries.first(where: { $0.machine?.lowercased() == host.lowercased() && matches($0) }) {
            return Credentials(user: e.login!, password: e.password)
        }
        if let e = entries.first(where: { $0.machine == nil && matches($0) }) {
            return Credentials(user: e.login!, password: e.password)
        }
        return nil
    }
}

/// How to connect to a server, whatever the protocol.
public struct ConnectionOptions: Sendable, Hashable {
    /// Verify TLS certificates (turn off only for a known self-signed server: `--insecure`).
    public var verifyTLS: Bool = true
    /// At most this many connections to this server at once; nil = the engine's default
    /// (FlashAir cards default to 1).
    public var maxConnections: Int?
    /// Who to log in as (FTP) or authenticate as (HTTP: Basic, or Digest when the
    /// server asks for it). `Credentials.anonymous` says "nobody" explicitly.
    ///
    /// Nil: the user and password written in the URL, if any, else anonymous,
    /// unless `resolveCredentials` asks for more. Nothing is read from the
    /// environment or `~/.netrc` unless asked.
    public var credentials: Credentials?
    /// With no `credentials`, resolve them as the `ferry` command does
    /// (`Credentials.resolve(for:)`: the URL, `FERRY_USER`/`FERRY_PASSWORD`,
    /// `~/.netrc`) for every URL opened with these options. Off by default.
    public var resolveCredentials: Bool = false
    /// A PEM file of certificate authorities to trust instead of the system's
    /// (a private CA or a self-signed server's own certificate). Nil: the system's.
    public var caCertificateFile: String?
    /// Extra header lines for every HTTP(S) request (`["Authorization": "Bearer ..."]`).
    /// Ignored by FTP and FlashAir.
    public var httpHeaders: [String: String] = [:]
    /// SFTP: how the server's host key is checked. `verifyTLS == false` (`--insecure`) skips the check.
    public var hostKeys: HostKeyPolicy = .openSSH
    /// SFTP: a private key file to log in with instead of `~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa`.
    public var identityFile: String?
    /// SFTP: which SSH implementation carries downloads. `automatic` (the
    /// default) and `openSSH`: OpenSSH's `ssh` where it is installed and can log
    /// in without asking (a key without a passphrase, the agent), libssh2
    /// otherwise; `libssh2`: libssh2 only. (Measured side by side: docs/DESIGN.md,
    /// "SFTP over OpenSSH's ssh".)
    public var sshTransport: SSHTransport = .automatic

    /// Creates connection options; the defaults verify TLS with the system's
    /// certificate authorities and read no credentials beyond the URL's.
    public init(
        verifyTLS: Bool = true, maxConnections: Int? = nil, credentials: Credentials? = nil,
        resolveCredentials: Bool = false, caCertificateFile: String? = nil, httpHeaders: [String: String] = [:]
    ) {
        self.verifyTLS = verifyTLS
        self.maxConnections = maxConnections
        self.credentials = credentials
        self.resolveCredentials = resolveCredentials
        self.caCertificateFile = caCertificateFile
        self.httpHeaders = httpHeaders
    }

    /// The credentials a URL opened with these options uses: `credentials`, else
    /// the resolution when asked for, else the URL's own. Nil means anonymous.
    public func credentials(for url: RemoteURL) -> Credentials? {
        let found = credentials ?? (resolveCredentials ? Credentials.resolve(for: url) : Credentials.inURL(url))
        return found?.isAnonymous == true ? nil : found
    }

    /// The CA file the `ferry` command trusts, as curl's tool chooses it: the
    /// given file (`--cacert`), else `CURL_CA_BUNDLE`, else `SSL_CERT_FILE`; nil for
    /// the system's. Reads the environment only when called (nil: this process's).
    public static func caCertificateFile(given: String?, environment: [String: String]? = nil) -> String? {
        if let given, !given.isEmpty { return given }
        let variable = EnvironmentLookup(environment)
        for name in ["CURL_CA_BUNDLE", "SSL_CERT_FILE"] {
            if let file = variable[name], !file.isEmpty { return file }
        }
        return nil
    }
}

/// Environment variables read by name: from a given dictionary (tests), else
/// from the process with `getenv`. `ProcessInfo.processInfo.environment` builds
/// a dictionary of every variable on each access; `ferry get URL1 ... URL1000`
/// resolved credentials and the CA file that way for each URL, most of the
/// command's instructions (bench/RESULTS.md, "Issue 19, third step (2026-12-01, branch many): CPU per file").
struct EnvironmentLookup {
    let given: [String: String]?

    init(_ given: [String: String]?) { self.given = given }

    subscript(name: String) -> String? {
        if let given { return given[name] }
        return getenv(name).map { String(cString: $0) }
    }
}
