import Foundation

/// What OpenSSH's client configuration (`ssh_config(5)`) says about one host,
/// as far as Ferry follows it: `HostName`, `User`, `Port`, `IdentityFile`,
/// `IdentitiesOnly`, `UserKnownHostsFile`, `StrictHostKeyChecking accept-new`,
/// `ProxyJump` and `ProxyCommand` (run as OpenSSH's `ssh`, `SSHProxy`), so that
/// `sftp://nas/` connects as `ssh nas` would, and `HashKnownHosts`, so that a
/// host key Ferry records looks like one `ssh` would have recorded (Debian's
/// `/etc/ssh/ssh_config` has `HashKnownHosts yes` under `Host *`). `Ciphers`
/// is not followed: libcurl offers no way to set libssh2's method preferences.
///
/// Read as `ssh` reads it: files in order (the user's, then the system's),
/// `Keyword value` or `Keyword=value`, keywords in any case, `Host` blocks
/// whose patterns (`*`, `?`, `!negated`) match the host, `Include` (globs,
/// relative to `~/.ssh` or `/etc/ssh`) in place, and the first value found
/// wins. A `Match` block applies when every criterion holds, each optionally
/// negated with `!`: `all`, `host` (the `HostName` found so far, else the
/// alias), `originalhost` (the alias) and `localuser`, with comma-separated
/// pattern lists. A block with any other criterion (`exec`, `user`,
/// `canonical`, `final`, `localnetwork`, `tagged`) is taken not to match.
struct SSHClientConfig {
    /// The system-wide file, always read.
    static let systemFile = "/etc/ssh/ssh_config"

    /// Whether a new known_hosts entry for `host` is written hashed; OpenSSH's
    /// own default, `no`, when no file says.
    static func hashKnownHosts(host: String, files: [String]) -> Bool {
        var reader = Reader(host: host)
        for file in files {
            reader.read(file, base: file == systemFile ? "/etc/ssh" : LocalPath.parent(file))
            if let value = reader.hashKnownHosts { return value }
        }
        return false
    }

    /// What the configuration says about connecting to one host alias: the
    /// first value of each keyword, as `ssh` takes it (`IdentityFile` adds up).
    struct HostSettings: Sendable, Hashable {
        var hostName: String?
        var user: String?
        var port: Int?
        var identityFiles: [String] = []
        var identitiesOnly: Bool?
        /// `UserKnownHostsFile`: the first is where new keys are recorded.
        var userKnownHostsFiles: [String] = []
        /// `StrictHostKeyChecking`, in lower case (`yes`, `accept-new`, `no`, `ask`).
        var strictHostKeyChecking: String?
        /// `ProxyJump` or `ProxyCommand`, whichever came first (as in `ssh`).
        var proxy: Proxy?
    }

    /// How the connection reaches the host: through jump hosts (`ProxyJump a,b`)
    /// or a command whose standard input and output are the connection.
    enum Proxy: Sendable, Hashable {
        case jump([String])
        case command(String)
    }

    /// The settings for `host` from `files` in order (the user's, then the
    /// system's), with `%h` (the alias), `%d` (home), `%u` (the local user), `%%`
    /// and a leading `~` expanded in `HostName` and `IdentityFile`.
    static func settings(host: String, files: [String], home: String, localUser: String) -> HostSettings {
        var reader = Reader(host: host, localUser: localUser)
        for file in files {
            reader.read(file, base: file == systemFile ? "/etc/ssh" : LocalPath.parent(file))
        }
        func expand(_ s: String) -> String {
            var out = ""
            var i = s.startIndex
            while i < s.endIndex {
                let c = s[i]
                let next = s.index(after: i)
                if c == "%", next < s.endIndex {
                    switch s[next] {
                    case "h": out += host
                    case "d": out += home
                    case "u": out += localUser
                    case "%": out += "%"
                    default: out += String(s[i...next])
                    }
                    i = s.index(after: next)
                    continue
                }
                out.append(c)
                i = next
            }
            if out == "~" { return home }
            if out.hasPrefix("~/") { return home + out.dropFirst() }
            return out
        }
        var s = reader.settings
        s.hostName = s.hostName.map(expand)
        s.identityFiles = s.identityFiles.map(expand)
        s.userKnownHostsFiles = s.userKnownHostsFiles.map { $0.lowercased() == "none" ? "/dev/null" : expand($0) }
        if case .jump(let hosts) = s.proxy, hosts.isEmpty || hosts == ["none"] { s.proxy = nil }
        if case .command(let command) = s.proxy, command.lowercased() == "none" { s.proxy = nil }
        return s
    }

    private struct Reader {
        let host: String
        let localUser: String
        var hashKnownHosts: Bool?
        var settings = HostSettings()
        var depth = 0

        init(host: String, localUser: String = "") {
            self.host = host
            self.localUser = localUser
        }

        mutating func read(_ file: String, base: String) {
            guard depth < 16, let text = try? String(contentsOfFile: file, encoding: .utf8) else { return }
            depth += 1
            defer { depth -= 1 }
            var applies = true
            for raw in text.split(whereSeparator: \.isNewline) {
                let (keyword, args) = Self.split(raw)
                switch keyword {
                case "":
                    continue
                case "host":
                    applies = Self.hostMatches(host, patterns: args)
                case "match":
                    applies = matches(args)
                case "include" where applies:
                    for pattern in args {
                        let full = pattern.hasPrefix("/") || pattern.hasPrefix("~") ? pattern : base + "/" + pattern
                        for path in Self.glob(LocalPath.expandingTilde(full)) { read(path, base: base) }
                    }
                case "hashknownhosts" where applies && hashKnownHosts == nil:
                    switch args.first?.lowercased() {
                    case "yes", "true": hashKnownHosts = true
                    case "no", "false": hashKnownHosts = false
                    default: break
                    }
                case "hostname" where applies && settings.hostName == nil:
                    settings.hostName = args.first
                case "user" where applies && settings.user == nil:
                    settings.user = args.first
                case "port" where applies && settings.port == nil:
                    settings.port = args.first.flatMap { Int($0) }.flatMap { (1...65535).contains($0) ? $0 : nil }
                case "identityfile" where applies:
                    if let file = args.first, file.lowercased() != "none" { settings.identityFiles.append(file) }
                case "identitiesonly" where applies && settings.identitiesOnly == nil:
                    settings.identitiesOnly = ["yes", "true"].contains(args.first?.lowercased() ?? "")
                case "userknownhostsfile" where applies && settings.userKnownHostsFiles.isEmpty:
                    settings.userKnownHostsFiles = args
                case "stricthostkeychecking" where applies && settings.strictHostKeyChecking == nil:
                    settings.strictHostKeyChecking = args.first?.lowercased()
                case "proxyjump" where applies && settings.proxy == nil:
                    settings.proxy = .jump(
                        (args.first ?? "").split(separator: ",").map { String($0) }.filter { !$0.isEmpty })
                case "proxycommand" where applies && settings.proxy == nil:
                    settings.proxy = .command(Self.rest(raw))
                default:
                    continue
                }
            }
        }

        /// A `Match` line's criteria, as `ssh` evaluates them on its first pass.
        func matches(_ args: [String]) -> Bool {
            var i = 0
            while i < args.count {
                var criterion = args[i].lowercased()
                let negated = criterion.hasPrefix("!")
                if negated { criterion.removeFirst() }
                if criterion == "all" {
                    if negated { return false }
                    i += 1
                    continue
                }
                guard i + 1 < args.count else { return false }
                let patterns = args[i + 1].split(separator: ",").map(String.init)
                i += 2
                let subject: String
                switch criterion {
                case "host": subject = settings.hostName.map { $0.replacingOccurrences(of: "%h", with: host) } ?? host
                case "originalhost": subject = host
                case "localuser": subject = localUser
                default: return false
                }
                if Self.hostMatches(subject, patterns: patterns) == negated { return false }
            }
            return true
        }

        /// Everything after a line's keyword, as one string (`ProxyCommand`).
        static func rest(_ line: Substring) -> String {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard let end = trimmed.firstIndex(where: { $0 == " " || $0 == "\t" || $0 == "=" }) else { return "" }
            var rest = trimmed[end...].drop { $0 == " " || $0 == "\t" }
            if rest.first == "=" { rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" } }
            return String(rest)
        }

        /// A line's keyword (lower case, "" for blank lines and comments) and arguments.
        static func split(_ line: Substring) -> (String, [String]) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { return ("", []) }
            let end = trimmed.firstIndex { $0 == " " || $0 == "\t" || $0 == "=" } ?? trimmed.endIndex
            let keyword = trimmed[..<end].lowercased()
            var rest = trimmed[end...].drop { $0 == " " || $0 == "\t" }
            if rest.first == "=" { rest = rest.dropFirst() }
            let args = rest.split(whereSeparator: { $0 == " " || $0 == "\t" }).map {
                $0.count >= 2 && $0.hasPrefix("\"") && $0.hasSuffix("\"")
                    ? String($0.dropFirst().dropLast()) : String($0)
            }
            return (keyword, args)
        }

        /// `Host` patterns: any positive match and no negated one.
        static func hostMatches(_ host: String, patterns: [String]) -> Bool {
            var matched = false
            for p in patterns {
                if p.hasPrefix("!") {
                    if wildcard(String(p.dropFirst()), host) { return false }
                } else if wildcard(p, host) {
                    matched = true
                }
            }
            return matched
        }

        /// OpenSSH's `match_pattern`: `*` any run, `?` one character; host names
        /// are compared in lower case, file names as they are.
        static func wildcard(_ pattern: String, _ text: String, ignoringCase: Bool = true) -> Bool {
            let p = Array((ignoringCase ? pattern.lowercased() : pattern).unicodeScalars)
            let t = Array((ignoringCase ? text.lowercased() : text).unicodeScalars)
            var (i, j) = (0, 0)
            var star: Int?
            var mark = 0
            while j < t.count {
                if i < p.count && (p[i] == "?" || p[i] == t[j]) {
                    i += 1
                    j += 1
                } else if i < p.count && p[i] == "*" {
                    star = i
                    mark = j
                    i += 1
                } else if let s = star {
                    i = s + 1
                    mark += 1
                    j = mark
                } else {
                    return false
                }
            }
            while i < p.count && p[i] == "*" { i += 1 }
            return i == p.count
        }

        /// The files a glob names, sorted as `glob(3)` sorts them.
        static func glob(_ pattern: String) -> [String] {
            let folder = LocalPath.parent(pattern)
            let name = LocalPath.lastComponent(pattern)
            guard name.contains("*") || name.contains("?") else {
                return FileManager.default.fileExists(atPath: pattern) ? [pattern] : []
            }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return names.filter { !$0.hasPrefix(".") && wildcard(name, $0, ignoringCase: false) }.sorted()
                .map { folder + "/" + $0 }
        }
    }
}
