import CCurl
import Foundation
import Synchronization

/// Who an SFTP connection logs in as and what it may prove it with, in the
/// order OpenSSH tries them: key files, the ssh-agent, then a password.
struct SSHLogin: Sendable, Hashable {
    var user: String
    /// Private key files that exist: `--identity FILE`, else `~/.ssh/id_ed25519`,
    /// `id_ecdsa`, `id_rsa`.
    var keyFiles: [String]
    /// For encrypted key files (`FERRY_KEY_PASSPHRASE`). Never printed.
    var passphrase: String?
    /// `SSH_AUTH_SOCK` is set: libssh2 asks that agent.
    var agent: Bool
    /// From the options or the URL; with `resolveCredentials`, also `FERRY_PASSWORD`
    /// or `~/.netrc` (`Credentials.resolve`). Never printed.
    var password: String?
    /// An `--identity` file that cannot be read (left out of `keyFiles`).
    var unreadableIdentity: String?

    /// One way of logging in, as one connection attempt: libcurl takes one key
    /// file per connection and tries password before agent, so each method
    /// gets its own attempt to keep OpenSSH's order.
    enum Method: Sendable, Hashable, CustomStringConvertible {
        case key(String)
        case agent
        case password

        var description: String {
            switch self {
            case .key(let file): "key \(file)"
            case .agent: "ssh-agent"
            case .password: "password"
            }
        }
    }

    /// The methods to try, in order.
    var methods: [Method] {
        keyFiles.map { .key($0) } + (agent ? [.agent] : []) + (password != nil ? [.password] : [])
    }

    static func resolve(
        url: RemoteURL, options: ConnectionOptions,
        environment given: [String: String]? = nil, config: SSHClientConfig.HostSettings = .init()
    ) -> SSHLogin {
        // Nil: this process's variables, each read by name (every `sftp://` URL
        // opened passes here; the whole environment as a dictionary cost more).
        let environment = EnvironmentLookup(given)
        // FERRY_USER/FERRY_PASSWORD and ~/.netrc only when the caller asks
        // (`ConnectionOptions.resolveCredentials`, as the CLI does).
        let credentials =
            options.credentials.map { $0.isAnonymous ? nil : $0 }
            ?? (options.resolveCredentials
                ? Credentials.resolve(for: url, environment: given) : Credentials.inURL(url))
        let user =
            credentials?.user ?? url.user ?? (options.resolveCredentials ? environment["FERRY_USER"] : nil)
            ?? config.user ?? environment["USER"] ?? environment["LOGNAME"] ?? NSUserName()
        let home = environment["HOME"] ?? NSHomeDirectory()
        let keys: [String]
        var unreadable: String?
        if let identity = options.identityFile.map(LocalPath.expandingTilde) {
            keys = FileManager.default.isReadableFile(atPath: identity) ? [identity] : []
            if keys.isEmpty { unreadable = identity }
        } else {
            // ssh_config's IdentityFile first, then the default keys unless IdentitiesOnly.
            let defaults =
                config.identitiesOnly == true && !config.identityFiles.isEmpty
                ? [] : ["id_ed25519", "id_ecdsa", "id_rsa"].map { home + "/.ssh/" + $0 }
            var seen = Set<String>()
            keys = (config.identityFiles + defaults).filter {
                seen.insert($0).inserted && FileManager.default.isReadableFile(atPath: $0)
            }
        }
        return SSHLogin(
            user: user, keyFiles: keys, passphrase: environment["FERRY_KEY_PASSPHRASE"],
            agent: !(environment["SSH_AUTH_SOCK"] ?? "").isEmpty, password: credentials?.password,
            unreadableIdentity: unreadable)
    }

    /// Sets one method's options on a handle.
    func configure(_ easy: EasyHandle, method: Method) {
        easy.set(CURLOPT_USERNAME, user)
        switch method {
        case .key(let file):
            easy.set(CURLOPT_SSH_AUTH_TYPES, Int(CURLSSH_AUTH_PUBLICKEY))
            easy.set(CURLOPT_SSH_PRIVATE_KEYFILE, file)
            // libssh2 derives the public key from the private one when given none.
            let pub = file + ".pub"
            easy.set(CURLOPT_SSH_PUBLIC_KEYFILE, FileManager.default.isReadableFile(atPath: pub) ? pub : "")
            if let passphrase { easy.set(CURLOPT_KEYPASSWD, passphrase) }
        case .agent:
            easy.set(CURLOPT_SSH_AUTH_TYPES, Int(CURLSSH_AUTH_AGENT))
        case .password:
            easy.set(CURLOPT_SSH_AUTH_TYPES, Int(CURLSSH_AUTH_PASSWORD | CURLSSH_AUTH_KEYBOARD))
            easy.set(CURLOPT_PASSWORD, password ?? "")
        }
    }

    /// Why every method was refused, for a person: what was tried and what to do.
    func refusal(tried: [Method]) -> String {
        let unreadable = unreadableIdentity.map { "; the key \($0) cannot be read" } ?? ""
        if tried.isEmpty {
            return "no way to log in as \(user): no key (~/.ssh/id_ed25519, id_ecdsa, id_rsa or an identity file), "
                + "no ssh-agent (SSH_AUTH_SOCK) and no password (URL, FERRY_PASSWORD or ~/.netrc)" + unreadable
        }
        var text = "the server refused \(user) with " + tried.map(\.description).joined(separator: ", then ")
        let locked = keyFiles.filter { Self.isEncrypted($0) }
        if passphrase == nil, let first = locked.first {
            text += "; \(first) needs its passphrase in FERRY_KEY_PASSPHRASE"
        }
        return text + unreadable + "; check the user name, key and password"
    }

    /// Whether a private key file is protected by a passphrase (PEM `ENCRYPTED`,
    /// or an OpenSSH key whose cipher is not `none`).
    static func isEncrypted(_ file: String) -> Bool {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return false }
        if text.contains("ENCRYPTED") { return true }
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let data = Data(base64Encoded: body), data.count > 40 else { return false }
        // "openssh-key-v1\0", then the cipher name as an SSH string.
        let bytes = [UInt8](data)
        let start = 15
        guard bytes.count > start + 4 else { return false }
        let n =
            Int(bytes[start]) << 24 | Int(bytes[start + 1]) << 16 | Int(bytes[start + 2]) << 8 | Int(bytes[start + 3])
        guard n > 0, bytes.count >= start + 4 + n else { return false }
        return String(decoding: bytes[(start + 4)..<(start + 4 + n)], as: UTF8.self) != "none"
    }
}

/// The login method that worked, per server and user, found once per process:
/// concurrent first operations wait for one probe instead of each trying every
/// method.
final class SSHMethodCache: Sendable {
    static let shared = SSHMethodCache()

    private enum Slot {
        case ready(SSHLogin.Method)
        case probing(Task<SSHLogin.Method, any Error>)
    }
    private let slots = Mutex<[String: Slot]>([:])

    /// The method found for `key`, if one was.
    func known(_ key: String) -> SSHLogin.Method? {
        slots.withLock { if case .ready(let m) = $0[key] { m } else { nil } }
    }

    func method(
        for key: String, probe: @escaping @Sendable () async throws(FerryError) -> SSHLogin.Method
    ) async throws(FerryError) -> SSHLogin.Method {
        let task: Task<SSHLogin.Method, any Error> = slots.withLock { slots in
            switch slots[key] {
            case .ready(let method): return Task { method }
            case .probing(let t): return t
            case nil:
                let t = Task<SSHLogin.Method, any Error> { try await probe() }
                slots[key] = .probing(t)
                return t
            }
        }
        do {
            let method = try await task.value
            slots.withLock { if case .probing = $0[key] { $0[key] = .ready(method) } }
            return method
        } catch {
            slots.withLock { slots in
                if case .probing(let t) = slots[key], t == task { slots[key] = nil }
            }
            throw FerryError.wrap(error)
        }
    }
}
