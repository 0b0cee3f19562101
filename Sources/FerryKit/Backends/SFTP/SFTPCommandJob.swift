import CCurl
import Foundation

/// One SFTP request whose answer fits in memory: a listing, a `stat`, a login
/// probe, or quote commands (`rm`, `mkdir`, `rmdir`, `rename`).
///
/// Engine-thread confined while running (see `CurlJob`); the awaiting task reads
/// the results after `perform` returned.
final class SFTPCommandJob: RemoteCommandJob, @unchecked Sendable {
    /// The host key check of this handle (kept alive with it).
    private(set) var hostKeys: SSHConnectionChecks?

    init(endpoint: SFTPEndpoint, path: String, method: SSHLogin.Method, maxBody: Int = 64 << 10) {
        super.init(hostKey: endpoint.hostKey, tlsSessionCache: endpoint.connectionCache, maxBody: maxBody)
        hostKeys = endpoint.configure(easy, path: path, method: method)
    }

    /// A request that only connects, or runs `commands` (each prefixed `*` when
    /// `tolerant`, so a refusal does not stop the rest).
    func quote(_ commands: [String], tolerant: Bool = false) {
        easy.set(CURLOPT_NOBODY, 1)
        if !commands.isEmpty { easy.set(CURLOPT_QUOTE, list: commands.map { tolerant ? "*" + $0 : $0 }) }
    }
}
