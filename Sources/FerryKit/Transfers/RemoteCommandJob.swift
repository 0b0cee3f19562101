import CCurl
import Foundation

/// A request to a file server whose answer fits in memory (a listing, a `stat`,
/// a login probe, quote commands), as FTP's and SFTP's command jobs make them:
/// the body capped at `maxBody` (beyond it the transfer stops and `tooLarge`
/// is set), and the file's size and time as libcurl reported them.
///
/// Engine-thread confined while running (see `CurlJob`); the awaiting task reads
/// the results after `perform` returned.
class RemoteCommandJob: CurlJob, @unchecked Sendable {
    /// The body (a listing; for FTP control-only requests, libcurl's synthesized
    /// header text too).
    var body: [UInt8] { reply.bytes }
    var maxBody: Int { reply.limit }
    var tooLarge: Bool { reply.overflowed }
    private var reply: CappedBody
    /// The file's time as Unix seconds (`CURLINFO_FILETIME`: FTP's `MDTM`, SFTP's
    /// `stat`), -1 when unknown.
    private(set) var fileTime: Int = -1
    /// The file's size (`CURLINFO_CONTENT_LENGTH_DOWNLOAD_T`), -1 when unknown.
    private(set) var contentLength: Int64 = -1

    init(hostKey: String, tlsSessionCache: TLSSessionCache, maxBody: Int) {
        reply = CappedBody(limit: maxBody)
        super.init(hostKey: hostKey, tlsSessionCache: tlsSessionCache)
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool { reply.append(bytes) }

    /// Reads the file's size and time; subclasses that override call this.
    override func didComplete(_ completion: CurlCompletion) {
        fileTime = easy.info(CURLINFO_FILETIME)
        contentLength = easy.info(large: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
    }

    /// The body as text (UTF-8; invalid bytes replaced).
    var text: String { String(decoding: body, as: UTF8.self) }

    /// Runs this job as a read of `range` of its file (`CURLOPT_RANGE`): the
    /// bytes, nil when the read failed or was interrupted.
    func read(_ range: ClosedRange<Int64>, on engine: CurlEngine) async -> [UInt8]? {
        easy.set(CURLOPT_RANGE, "\(range.lowerBound)-\(range.upperBound)")
        let completion = await engine.perform(self)
        guard completion.code == .ok, !completion.interrupted else { return nil }
        return body
    }
}
