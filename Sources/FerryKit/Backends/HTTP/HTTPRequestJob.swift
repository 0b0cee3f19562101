import CCurl
import Foundation

/// A small HTTP request whose whole reply fits in memory: HEAD, a folder page,
/// a WebDAV multistatus, a FlashAir CGI call. The body is capped; beyond
/// `maxBody` the job fails.
final class HTTPRequestJob: CurlJob, @unchecked Sendable {
    /// Response headers of the final response.
    var headers = HTTPHeaders()
    private var reply: CappedBody
    /// The reply body.
    var body: [UInt8] { reply.bytes }
    var maxBody: Int { reply.limit }
    /// Set when the body grew past `maxBody`.
    var tooLarge: Bool { reply.overflowed }

    init(hostKey: String, maxBody: Int = 16 << 20) {
        reply = CappedBody(limit: maxBody)
        super.init(hostKey: hostKey)
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool { reply.append(bytes) }

    override func didReceiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        headers.consume(line: line)
        return true
    }

    /// The body as text (UTF-8, invalid bytes replaced).
    var text: String { String(decoding: body, as: UTF8.self) }
}
