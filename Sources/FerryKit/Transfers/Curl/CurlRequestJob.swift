import CCurl
import Foundation

/// A small request whose whole reply fits in memory: HEAD, a FlashAir CGI call,
/// an FTP listing. The body is capped; beyond `maxBody` the job fails.
final class CurlRequestJob: CurlJob, @unchecked Sendable {
    /// Response headers of the final response (HTTP only).
    var headers = HTTPHeaders()
    private var reply: CappedBody
    /// The reply body.
    var body: [UInt8] { reply.bytes }
    var maxBody: Int { reply.limit }
    /// Set when the body grew past `maxBody`.
    var tooLarge: Bool { reply.overflowed }
    /// Protocol lines the server sent (FTP replies), when `captureReplies`.
    var replies: [String] = []
    let captureReplies: Bool

    init(hostKey: String, maxBody: Int = 16 << 20, captureReplies: Bool = false) {
        reply = CappedBody(limit: maxBody)
        self.captureReplies = captureReplies
        super.init(hostKey: hostKey)
        if captureReplies { enableDebug() }
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool { reply.append(bytes) }

    override func didReceiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        headers.consume(line: line)
        return true
    }

    override func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer) {
        guard type == CURLINFO_HEADER_IN else { return }
        for line in String(decoding: text, as: UTF8.self).split(whereSeparator: \.isNewline) {
            replies.append(String(line))
        }
    }

    /// The body as text (UTF-8, invalid bytes replaced).
    var text: String { String(decoding: body, as: UTF8.self) }
}
