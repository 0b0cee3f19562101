import CCurl
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How an SFTP connection checks the server's host key, as OpenSSH does.
///
/// libssh2 (through libcurl's `CURLOPT_SSH_KNOWNHOSTS`) matches the key against
/// a `known_hosts` file, plain and hashed (`|1|salt|hash`) entries alike, with
/// the host written `[host]:port` for a port other than 22. Ferry then decides
/// (`CURLOPT_SSH_KEYFUNCTION`): a matching key connects; an unknown host is
/// refused with the key's SHA256 fingerprint, or recorded when `acceptNew`
/// (`StrictHostKeyChecking=accept-new`); a changed key is always refused and
/// never recorded.
public struct HostKeyPolicy: Sendable, Hashable {
    enum Source: Sendable, Hashable {
        /// `$HOME/.ssh/known_hosts`, looked up when a connection is made.
        case userKnownHosts
        case file(String)
        /// No check at all (`--insecure`).
        case none
    }
    let source: Source
    /// Records the key of a host that is not in the file yet, and connects.
    public var acceptNew: Bool
    /// Whether a recorded key's host is written hashed (`|1|salt|hash`, as
    /// OpenSSH's `HashKnownHosts yes`) or plain; nil: as OpenSSH's client
    /// configuration says for the host (`SSHClientConfig`: `~/.ssh/config` with
    /// the default `~/.ssh/known_hosts` policy, then `/etc/ssh/ssh_config`,
    /// which on Debian says yes).
    public var hashRecordedHosts: Bool?
    /// The host's `UserKnownHostsFile` from `ssh_config`, used instead of
    /// `~/.ssh/known_hosts` by the default policy: keys are recorded in the
    /// first and found in any (`applying(_:)`).
    var configuredFiles: [String] = []

    /// `~/.ssh/known_hosts`, unknown hosts refused. The file is read only when a
    /// connection is made with this policy.
    public static let openSSH = HostKeyPolicy(source: .userKnownHosts, acceptNew: false)
    /// No host key check (a server you know on a network you trust; `--insecure`).
    public static let insecure = HostKeyPolicy(source: .none, acceptNew: false)

    /// Checks against `path` (created when a key is recorded).
    public static func knownHosts(_ path: String, acceptNew: Bool = false) -> HostKeyPolicy {
        HostKeyPolicy(source: .file(path), acceptNew: acceptNew)
    }

    /// `~/.ssh/known_hosts`, with unknown hosts recorded (`--accept-new-host-key`).
    public static let openSSHAcceptNew = HostKeyPolicy(source: .userKnownHosts, acceptNew: true)

    /// The default policy as the host's `ssh_config` shapes it, as `ssh` reads
    /// it: its `UserKnownHostsFile` instead of `~/.ssh/known_hosts`, and
    /// `StrictHostKeyChecking accept-new` recording an unknown host. Nothing
    /// else loosens the check: `StrictHostKeyChecking no` or `ask` still refuse
    /// an unknown host (without `--accept-new-host-key`), and a changed key is
    /// always refused. Another policy (a file given by the program, or none)
    /// stays as it is.
    func applying(_ settings: SSHClientConfig.HostSettings) -> HostKeyPolicy {
        guard source == .userKnownHosts else { return self }
        var p = self
        p.configuredFiles = settings.userKnownHostsFiles
        if settings.strictHostKeyChecking == "accept-new" { p.acceptNew = true }
        return p
    }

    /// The files after the first, where keys are found but never recorded.
    func otherFiles() -> [String] {
        source == .userKnownHosts ? Array(configuredFiles.dropFirst()) : []
    }

    /// What tells connections made under this policy apart from those made
    /// under another (`SFTPEndpoint.connectionCache`): the file as resolved now,
    /// and whether unknown hosts are recorded.
    ///
    /// `environment`: the variables to read (tests); nil: this process's, each
    /// read by name (`EnvironmentLookup`). Every SFTP URL opened and every
    /// handle configured asks, so the whole environment is never copied here.
    func identity(environment: [String: String]? = nil) -> String {
        guard let file = file(environment: environment) else { return "insecure" }
        return (acceptNew ? "accept-new|" : "strict|") + ([file] + otherFiles()).joined(separator: "|")
    }

    /// The OpenSSH client configuration files that decide `hashRecordedHosts`
    /// when it is nil: the user's only with the default policy (the library
    /// reads `~/.ssh` only then).
    func configFiles(environment: [String: String]? = nil) -> [String] {
        switch source {
        case .userKnownHosts:
            [Self.home(environment) + "/.ssh/config", SSHClientConfig.systemFile]
        case .file: [SSHClientConfig.systemFile]
        case .none: []
        }
    }

    /// The known_hosts file, nil for no check.
    func file(environment: [String: String]? = nil) -> String? {
        switch source {
        case .userKnownHosts: configuredFiles.first ?? (Self.home(environment) + "/.ssh/known_hosts")
        case .file(let path): path
        case .none: nil
        }
    }

    /// `HOME` (from `environment`, else read by name), else the account's home.
    private static func home(_ environment: [String: String]?) -> String {
        EnvironmentLookup(environment)["HOME"] ?? NSHomeDirectory()
    }
}

/// One connection's host key check: what libcurl's key callback saw and decided.
/// Engine-thread confined while the job runs; read by the job's owner afterwards.
final class HostKeyCheck: @unchecked Sendable {
    enum Verdict: Sendable {
        case unknown(fingerprint: String, type: String)
        case changed(fingerprint: String, type: String)
        case recordFailed(String)
    }
    let file: String
    let acceptNew: Bool
    /// `host` or `[host]:port`, as known_hosts names the server.
    let hostPattern: String
    /// The host as `ssh_config` `Host` patterns see it.
    let host: String
    /// Whether to hash a recorded entry; nil: as `configFiles` say.
    let hash: Bool?
    let configFiles: [String]
    /// More known_hosts files (`UserKnownHostsFile`'s after the first), read by
    /// Ferry: a key found in any of them is known.
    let otherFiles: [String]
    private(set) var refused: Verdict?
    /// The key recorded by this check (accept-new).
    private(set) var recorded: String?

    init(
        file: String, acceptNew: Bool, host: String, port: Int, hash: Bool? = nil, configFiles: [String] = [],
        otherFiles: [String] = []
    ) {
        self.file = file
        self.otherFiles = otherFiles
        self.acceptNew = acceptNew
        self.host = host
        self.hash = hash
        self.configFiles = configFiles
        hostPattern = port == 22 ? host : "[\(host)]:\(port)"
    }

    /// Installs the check on a handle (the check must outlive the transfer: the job keeps it).
    func install(on easy: EasyHandle) {
        easy.set(CURLOPT_SSH_KNOWNHOSTS, file)
        easy.set(CURLOPT_SSH_KEYDATA, pointer: Unmanaged.passUnretained(self).toOpaque())
        _ = ferry_curl_setopt_sshkey_cb(easy.raw) { _, _, found, match, ctx in
            let check = Unmanaged<HostKeyCheck>.fromOpaque(ctx!).takeUnretainedValue()
            guard let found else { return Int32(CURLKHSTAT_REJECT.rawValue) }
            let blob: [UInt8]
            if found.pointee.len > 0 {
                blob = Array(UnsafeRawBufferPointer(start: found.pointee.key, count: found.pointee.len))
            } else {
                blob = [UInt8](Data(base64Encoded: String(cString: found.pointee.key)) ?? Data())
            }
            return Int32(check.decide(blob: blob, match: match).rawValue)
        }
    }

    private func decide(blob: [UInt8], match given: curl_khmatch) -> curl_khstat {
        let type = Self.keyType(blob)
        let fingerprint = Self.fingerprint(blob)
        // As `ssh` with several files: known in any is known; else a different
        // key of the type in any is a changed key.
        var match = given
        if match != CURLKHMATCH_OK && !otherFiles.isEmpty {
            let found = otherFiles.map { KnownHostsFile.lookup(hostPattern, type: type, key: blob, in: $0) }
            if found.contains(.known) {
                match = CURLKHMATCH_OK
            } else if found.contains(.changed) {
                match = CURLKHMATCH_MISMATCH
            }
        }
        switch match {
        case CURLKHMATCH_OK:
            return CURLKHSTAT_FINE
        case CURLKHMATCH_MISMATCH:
            refused = .changed(fingerprint: fingerprint, type: type)
            return CURLKHSTAT_REJECT
        default:
            guard acceptNew else {
                refused = .unknown(fingerprint: fingerprint, type: type)
                return CURLKHSTAT_REJECT
            }
            let hashed = hash ?? SSHClientConfig.hashKnownHosts(host: host, files: configFiles)
            if let failure = KnownHostsFile.record(hostPattern, type: type, key: blob, hashed: hashed, to: file) {
                refused = .recordFailed(failure)
                return CURLKHSTAT_REJECT
            }
            recorded = fingerprint
            return CURLKHSTAT_FINE
        }
    }

    /// The error for a refused key, nil when the key was not refused.
    func error(operation: String, target: String) -> FerryError? {
        guard let refused else { return nil }
        switch refused {
        case .unknown(let fingerprint, let type):
            return FerryError(
                .hostKeyRejected, operation: operation, target: target,
                serverText: "the authenticity of host \(hostPattern) can't be established; "
                    + "\(Self.shortType(type)) key fingerprint is \(fingerprint)",
                detail: "known hosts: \(file)", recovery: .acceptNewHostKey)
        case .changed(let fingerprint, let type):
            return FerryError(
                .hostKeyRejected, operation: operation, target: target,
                serverText: "WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! The \(Self.shortType(type)) host key "
                    + "of \(hostPattern) is now \(fingerprint), not the one in \(file)",
                detail: "someone could be eavesdropping on you (a man-in-the-middle attack), or the server's key "
                    + "was replaced; not connected, and the new key was not recorded. If the change is expected, "
                    + "remove the old key with: ssh-keygen -R '\(hostPattern)' -f \(file)")
        case .recordFailed(let why):
            return FerryError(
                .hostKeyRejected, operation: operation, target: target, serverText: why,
                detail: "the new host key could not be recorded, so it was not accepted")
        }
    }

    /// The key type named inside the key blob (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`).
    static func keyType(_ blob: [UInt8]) -> String {
        guard blob.count >= 4 else { return "unknown" }
        let n = Int(blob[0]) << 24 | Int(blob[1]) << 16 | Int(blob[2]) << 8 | Int(blob[3])
        guard n > 0, n <= 64, blob.count >= 4 + n else { return "unknown" }
        return String(decoding: blob[4..<(4 + n)], as: UTF8.self)
    }

    /// `ED25519`, `ECDSA`, `RSA`, as OpenSSH names key types in its messages.
    static func shortType(_ type: String) -> String {
        if type.hasPrefix("ecdsa") { return "ECDSA" }
        if type == "ssh-ed25519" { return "ED25519" }
        if type == "ssh-rsa" { return "RSA" }
        return type
    }

    /// OpenSSH's fingerprint: `SHA256:` and the unpadded base64 of the blob's digest.
    static func fingerprint(_ blob: [UInt8]) -> String {
        var b64 = Data(Digest.hash(blob)).base64EncodedString()
        while b64.hasSuffix("=") { b64.removeLast() }
        return "SHA256:" + b64
    }
}

/// Records keys in known_hosts files, one writer at a time in this process.
enum KnownHostsFile {
    private static let lock = Mutex(())

    /// Appends an entry for `host` (`host` or `[host]:port`) with the key `type`
    /// and `key`, hashed as OpenSSH's `HashKnownHosts yes` writes it or plain,
    /// unless the file names that host with that key already (another
    /// connection of this process recorded it first). An error text on failure.
    static func record(_ host: String, type: String, key: [UInt8], hashed: Bool, to file: String) -> String? {
        let blob = Data(key).base64EncodedString()
        return lock.withLock { _ in
            let existing = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            let known = existing.split(whereSeparator: \.isNewline).contains { line in
                let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                return f.count >= 3 && f[1] == type && f[2] == blob && names(f[0], host)
            }
            if known { return nil }
            let line = (hashed ? hashedName(host) : host) + " " + type + " " + blob
            let folder = LocalPath.parent(file)
            if !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
                do {
                    try FileManager.default.createDirectory(
                        atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                } catch {
                    return "cannot create \(folder): \(error.localizedDescription)"
                }
            }
            let fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return "cannot write \(file): \(String(cString: strerror(errno)))" }
            defer { close(fd) }
            let text = (existing.isEmpty || existing.hasSuffix("\n") ? "" : "\n") + line + "\n"
            let ok = text.utf8CString.withUnsafeBytes { raw in
                write(fd, raw.baseAddress!, raw.count - 1) == raw.count - 1
            }
            return ok ? nil : "cannot write \(file): \(String(cString: strerror(errno)))"
        }
    }

    enum Lookup { case known, changed, absent }

    /// What `file` says about `host`'s key: known, another key of that type
    /// (changed), or nothing. `@revoked` and `@cert-authority` lines are skipped.
    static func lookup(_ host: String, type: String, key: [UInt8], in file: String) -> Lookup {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return .absent }
        let blob = Data(key).base64EncodedString()
        var result = Lookup.absent
        for line in text.split(whereSeparator: \.isNewline) {
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard f.count >= 3, !f[0].hasPrefix("#"), !f[0].hasPrefix("@"), f[1] == type, names(f[0], host) else {
                continue
            }
            if f[2] == blob { return .known }
            result = .changed
        }
        return result
    }

    /// OpenSSH's hashed host name: `|1|` base64(salt) `|` base64(HMAC-SHA1(salt, host)),
    /// with a new random 20-byte salt.
    static func hashedName(_ host: String, salt: [UInt8]? = nil) -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = salt ?? (0..<20).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let mac = Digest.hmacSHA1(key: salt, Array(host.utf8))
        return "|1|" + Data(salt).base64EncodedString() + "|" + Data(mac).base64EncodedString()
    }

    /// Whether a known_hosts name field (plain `a,b` or hashed `|1|...`) names `host`.
    static func names(_ field: Substring, _ host: String) -> Bool {
        if field.hasPrefix("|1|") {
            let parts = field.dropFirst(3).split(separator: "|", omittingEmptySubsequences: false)
            guard parts.count == 2, let salt = Data(base64Encoded: String(parts[0])),
                let mac = Data(base64Encoded: String(parts[1]))
            else { return false }
            return Digest.hmacSHA1(key: [UInt8](salt), Array(host.utf8)) == [UInt8](mac)
        }
        return field.split(separator: ",").contains { $0 == host }
    }
}
