import FerryKit
import Foundation

/// SFTP options of every command that talks to a server.
let sshOptions: [CommandSpec.Option] = [
    .init(
        long: "identity", short: "i", takesValue: true,
        help: "SFTP: log in with this private key (passphrase from FERRY_KEY_PASSPHRASE)", valueName: "FILE"),
    .init(
        long: "accept-new-host-key", short: nil, takesValue: false,
        help: "SFTP: record the host key of a server not yet in ~/.ssh/known_hosts (a changed key is still refused)"),
]

/// Adds `--identity` and `--accept-new-host-key` to connection options; with
/// `--insecure` on an `sftp://` URL, warns that the host key goes unchecked.
func applySSHOptions(_ options: inout ConnectionOptions, _ args: ParsedArguments, url: RemoteURL?) {
    options.identityFile = args.value("identity").map { ($0 as NSString).expandingTildeInPath }
    if args.has("accept-new-host-key") { options.hostKeys = .openSSHAcceptNew }
    if url?.scheme == .sftp && args.has("insecure") {
        FileHandle.standardError.write(
            Data(
                "ferry: warning: --insecure: the host key of \(url!.host) is not checked; anyone in between could read and change everything\n"
                    .utf8))
    }
}
