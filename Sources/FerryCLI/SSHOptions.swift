import FerryKit
import Foundation

/// SFTP options of every command that talks to a server.
enum SSHKeys {
    static let identity = ValueOption(
        "identity", short: "i", help: "SFTP: log in with this private key (passphrase from FERRY_KEY_PASSPHRASE)",
        valueName: "FILE")
    static let acceptNewHostKey = Flag(
        "accept-new-host-key",
        help: "SFTP: record the host key of a server not yet in ~/.ssh/known_hosts (a changed key is still refused)")
}

let sshOptions: [any OptionKey] = [SSHKeys.identity, SSHKeys.acceptNewHostKey]

/// Adds `--identity`, `--accept-new-host-key` and `FERRY_SSH_TRANSPORT` to
/// connection options; a transport the variable misspells is a usage error.
func applySSHOptions(_ options: inout ConnectionOptions, _ args: ParsedArguments) throws {
    options.identityFile = args.value(SSHKeys.identity).map { LocalPath.expandingTilde($0) }
    if args.has(SSHKeys.acceptNewHostKey) { options.hostKeys = .openSSHAcceptNew }
    // FERRY_SSH_TRANSPORT=libssh2: SFTP downloads through libssh2 only; by default
    // (automatic, openssh) through OpenSSH's ssh where it can log in without asking.
    if let name = ProcessInfo.processInfo.environment["FERRY_SSH_TRANSPORT"], !name.isEmpty {
        guard let t = SSHTransport(rawValue: name) else {
            let known = SSHTransport.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError(message: "FERRY_SSH_TRANSPORT=\(name): not a transport; use one of \(known)")
        }
        options.sshTransport = t
    }
}

/// With `--insecure` (`verifyTLS` off) on an `sftp://` URL, says that the host key goes unchecked.
func warnIfHostKeyUnchecked(_ url: RemoteURL?, _ options: ConnectionOptions) {
    guard let url, url.scheme == .sftp, !options.verifyTLS else { return }
    FileHandle.standardError.write(
        Data(
            ("ferry: warning: --insecure: the host key of \(url.host) is not checked; "
                + "anyone in between could read and change everything\n").utf8))
}
