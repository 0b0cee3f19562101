import Foundation

/// A user name and password for one server. The password is never printed:
/// `description` shows `***`.
public struct Credentials: Sendable, Hashable, CustomStringConvertible {
    public var user: String
    public var password: String?

    public init(user: String, password: String?) {
        self.user = user
        self.password = password
    }

    public var description: String { password == nil ? user : "\(user):***" }

    /// Finds the credentials for a URL: the URL's own user and password first, then
    /// `FERRY_PASSWORD` (for the URL's user), then `~/.netrc` (`machine HOST login
    /// USER password PASS`, or `default`). Nil means anonymous.
    public static func resolve(
        for url: RemoteURL, environment: [String: String] = ProcessInfo.processInfo.environment,
        netrcPath: String? = nil
    ) -> Credentials? {
        if let user = url.user, let password = url.password {
            return Credentials(user: user, password: password)
        }
        if let user = url.user, let password = environment["FERRY_PASSWORD"] {
            return Credentials(user: user, password: password)
        }
        let path = netrcPath ?? (environment["NETRC"] ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.netrc")
        if let text = try? String(contentsOfFile: path, encoding: .utf8),
            let found = Netrc.lookup(text, host: url.host, user: url.user)
        {
            return found
        }
        if let user = url.user {
            return Credentials(user: user, password: environment["FERRY_PASSWORD"])
        }
        if let password = environment["FERRY_PASSWORD"], let user = environment["FERRY_USER"] {
            return Credentials(user: user, password: password)
        }
        return nil
    }
}

/// A reader for `~/.netrc`.
enum Netrc {
    /// The entry for `host` (and `user`, when given), falling back to `default`.
    static func lookup(_ text: String, host: String, user: String?) -> Credentials? {
        var tokens: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#") { continue }
            tokens += trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        }
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
    /// Credentials to use instead of resolving them from the URL, environment and netrc.
    public var credentials: Credentials?

    public init(verifyTLS: Bool = true, maxConnections: Int? = nil, credentials: Credentials? = nil) {
        self.verifyTLS = verifyTLS
        self.maxConnections = maxConnections
        self.credentials = credentials
    }
}
