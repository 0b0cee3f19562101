import CCurl
import Foundation

/// One SFTP request whose answer fits in memory: a listing, a `stat`, a login
/// probe, or quote commands (`rm`, `mkdir`, `rmdir`, `rename`).
///
/// Engine-thread confined while running (see `CurlJob`); the awaiting task reads
/// the results after `perform` returned.
final class SFTPCommandJob: CurlJob, @unchecked Sendable {
    private(set) var body: [UInt8] = []
    let maxBody: Int
    private(set) var tooLarge = false
    /// The host key check of this handle (kept alive with it).
    private(set) var hostKeys: HostKeyCheck?
    /// The file's time as Unix seconds (`CURLOPT_FILETIME`), -1 when unknown.
    private(set) var fileTime: Int = -1
    /// The file's size, -1 when unknown.
    private(set) var contentLength: Int64 = -1

    init(endpoint: SFTPEndpoint, path: String, method: SSHLogin.Method, maxBody: Int = 64 << 10) {
        self.maxBody = maxBody
        super.init(hostKey: endpoint.hostKey)
        hostKeys = endpoint.configure(easy, path: path, method: method)
    }

    /// A request that only connects, or runs `commands` (each prefixed `*` when
    /// `tolerant`, so a refusal does not stop the rest).
    func quote(_ commands: [String], tolerant: Bool = false) {
        easy.set(CURLOPT_NOBODY, 1)
        if !commands.isEmpty { easy.set(CURLOPT_QUOTE, list: commands.map { tolerant ? "*" + $0 : $0 }) }
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard body.count + bytes.count <= maxBody else {
            tooLarge = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    override func didComplete(_ completion: CurlCompletion) {
        fileTime = easy.info(CURLINFO_FILETIME)
        contentLength = easy.info(large: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
    }

    /// The body as text (UTF-8; invalid bytes replaced).
    var text: String { String(decoding: body, as: UTF8.self) }
}
