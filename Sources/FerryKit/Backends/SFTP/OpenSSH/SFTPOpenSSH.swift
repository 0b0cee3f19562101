import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Which SSH implementation carries an SFTP server's transfers.
public enum SSHTransport: String, Sendable, Hashable, CaseIterable {
    /// OpenSSH's `ssh` where it can log in as libssh2 did (a key without a
    /// passphrase, or the agent) and is installed; libssh2 otherwise.
    case automatic
    /// OpenSSH's `ssh -s sftp` where it can log in; libssh2 otherwise.
    case openSSH = "openssh"
    /// libssh2 through libcurl only.
    case libssh2
}

/// How Ferry runs OpenSSH's client for an SFTP server (`SFTPChannel`): the
/// command, when it may, and what its words mean.
///
/// The login method is found first by libssh2 (`SFTPFileSystem.loginMethod`),
/// which also checks the host key by Ferry's policy (`HostKeyPolicy`: an unknown
/// key refused, or recorded with `acceptNew`). `ssh` then connects with the same
/// key (`IdentitiesOnly`) or the agent, `BatchMode` (it never asks), and
/// `StrictHostKeyChecking yes` against the same known_hosts files: never looser
/// than the check before it.
struct SFTPOpenSSH: Sendable, Hashable {
    /// The `ssh` command and its arguments.
    let arguments: [String]

    /// The command for `method`, nil when `ssh` cannot log in that way (a
    /// password, a key that needs its passphrase) or is not installed.
    ///
    /// - Parameters:
    ///   - alias: the host as the URL names it: `ssh` applies its `Host` section
    ///     (HostName, Port, ProxyJump, Ciphers, ControlMaster ...) itself.
    ///   - configFile: given as `-F` when it is not the account's own `~/.ssh/config`.
    ///   - knownHosts: the files to check the key against (the first is where
    ///     Ferry records), empty for no check (`--insecure`).
    static func make(
        transport: SSHTransport, method: SSHLogin.Method, user: String, alias: String, port: Int?,
        configFile: String?, knownHosts: [String], connectTimeout: Duration, sshPath: String? = SFTPOpenSSH.ssh
    ) -> SFTPOpenSSH? {
        guard transport != .libssh2, let sshPath else { return nil }
        var args = [sshPath]
        if let configFile { args += ["-F", configFile] }
        args += [
            "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-o", "ClearAllForwardings=yes",
            "-o", "ConnectTimeout=\(max(1, Int(connectTimeout / .seconds(1))))", "-x", "-a", "-T",
        ]
        switch method {
        case .password: return nil
        case .key(let file):
            if SSHLogin.isEncrypted(file) { return nil }
            args += ["-o", "IdentitiesOnly=yes", "-i", file]
        case .agent:
            break
        }
        if knownHosts.isEmpty {
            args += [
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                "-o", "GlobalKnownHostsFile=/dev/null",
            ]
        } else {
            args += [
                "-o", "StrictHostKeyChecking=yes",
                "-o", "UserKnownHostsFile=" + knownHosts.map(quotedOption).joined(separator: " "),
            ]
        }
        if let port { args += ["-p", String(port)] }
        args += ["-l", user, "-s", "--", alias, "sftp"]
        return SFTPOpenSSH(arguments: args)
    }

    /// A file name as an `-o` value: in double quotes when it holds a space.
    static func quotedOption(_ s: String) -> String {
        s.contains(where: { $0 == " " || $0 == "\t" || $0 == "\"" }) ? "\"" + s + "\"" : s
    }

    /// `ssh` on `PATH`, looked up once.
    static let ssh: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = String(dir) + "/ssh"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }()

    /// The error for a session that ended, from what `ssh` wrote (nil: nothing).
    static func error(sshSaid words: String?, operation: String, target: String) -> FerryError {
        guard let words, !words.isEmpty else {
            return FerryError(
                .connectionFailed, operation: operation, target: target,
                detail: "the SSH connection ended", isTransient: true)
        }
        let lower = words.lowercased()
        if lower.contains("host key verification failed") || lower.contains("host identification has changed") {
            return FerryError(
                .hostKeyRejected, operation: operation, target: target, serverText: words,
                detail: "OpenSSH's ssh refused the server's host key")
        }
        if lower.contains("permission denied") || lower.contains("too many authentication failures") {
            return FerryError(.authenticationFailed, operation: operation, target: target, serverText: words)
        }
        if lower.contains("subsystem request failed") {
            return FerryError(
                .unsupportedOperation, operation: operation, target: target, serverText: words,
                detail: "the server offers no SFTP")
        }
        return FerryError(.connectionFailed, operation: operation, target: target, serverText: words, isTransient: true)
    }

    /// The error for an SFTP status other than OK, in the server's words.
    static func error(status: UInt32, message: String, operation: String, target: String) -> FerryError {
        let row = SFTPStatus.table.first { $0.1.number == Int(status) }
        let known = row?.1
        return FerryError(
            known?.code ?? .serverError, operation: operation, target: target, serverCode: Int(status),
            serverText: message.isEmpty ? (row?.0 ?? "") : message,
            detail: known?.advice, isTransient: known?.transient ?? false)
    }

    /// A decoded path as the server's: `/~/x` (curl's login-folder form) is `x`.
    static func wirePath(_ path: String) -> [UInt8] {
        if path == "/~" || path == "/~/" { return Array(".".utf8) }
        if path.hasPrefix("/~/") { return Array(path.utf8.dropFirst(3)) }
        return Array(path.utf8)
    }
}

/// The OpenSSH channels of one server and login (`SFTPOpenSSH.arguments`): at
/// most the per-server limit at once (`ConnectionSlots`), each on a lane of its
/// own (a thread, and a channel opened on first use and again after one broke),
/// kept for the process's life and reused file after file.
final class SFTPChannelPool: Sendable {
    let command: SFTPOpenSSH
    private let slots: ConnectionSlots
    private let idle = Mutex<[SFTPLane]>([])
    private let made = Atomic(0)

    private init(command: SFTPOpenSSH, size: Int?) {
        self.command = command
        slots = ConnectionSlots(size: size)
    }

    private static let pools = Registry<SFTPOpenSSH, SFTPChannelPool>()

    static func shared(_ command: SFTPOpenSSH, size: Int?) -> SFTPChannelPool {
        pools.value(for: command) { SFTPChannelPool(command: command, size: size) }
    }

    /// Lanes made so far (tests).
    var lanes: Int { made.load(ordering: .relaxed) }

    /// Runs `body` with a lane kept for it.
    func holding<T>(_ body: (SFTPLane) async -> T) async -> T {
        await slots.holding { () async -> T in
            let lane =
                idle.withLock { $0.popLast() }
                ?? SFTPLane(command: command, number: made.add(1, ordering: .relaxed).newValue)
            defer { idle.withLock { $0.append(lane) } }
            return await body(lane)
        }
    }
}

/// A thread and the channel used on it.
final class SFTPLane: @unchecked Sendable {
    private let thread: SerialThread
    private let command: SFTPOpenSSH
    /// Touched only on `thread`.
    private var channel: SFTPChannel?

    init(command: SFTPOpenSSH, number: Int) {
        self.command = command
        thread = SerialThread(name: "ferry.sftp.\(number)")
    }

    /// Runs `body` on the lane's thread with its channel, opened (again) when
    /// there is none or it broke.
    func run<T: Sendable>(
        target: String, connectTimeout: Duration, replyTimeout: Duration,
        _ body: @escaping @Sendable (SFTPChannel) throws(FerryError) -> T
    ) async throws(FerryError) -> T {
        try await thread.run { () throws(FerryError) -> T in
            if self.channel == nil || self.channel?.broken != nil {
                self.channel = nil
                self.channel = try SFTPChannel(
                    arguments: self.command.arguments, connectTimeout: connectTimeout, replyTimeout: replyTimeout,
                    target: target)
            }
            let channel = self.channel!
            channel.replyTimeout = replyTimeout
            return try body(channel)
        }
    }
}
