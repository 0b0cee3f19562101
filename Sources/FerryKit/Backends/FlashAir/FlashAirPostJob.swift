import CCurl
import Foundation

/// The `POST /upload.cgi` of one file: `multipart/form-data` with one part named
/// `file` whose quoted `filename="..."` is the name to store, streamed from disk
/// by libcurl's mime API (no copy of the file in memory).
///
/// Like every `CurlJob`, it is built by the submitting task and then used only on
/// the engine thread. It owns the `curl_mime` handle and frees it in `deinit`.
final class FlashAirPostJob: CurlJob, @unchecked Sendable {
    /// Set right after `super.init`, when the easy handle it belongs to exists.
    private var mime: OpaquePointer?
    private let transfer: Transfer
    private let size: Int64
    /// Response headers of the final response.
    private(set) var headers = HTTPHeaders()
    /// The reply body (cards answer `SUCCESS` or `ERROR`, some in a small HTML page).
    private(set) var body: [UInt8] = []

    /// Prepares the request.
    ///
    /// - Parameters:
    ///   - card: The card's URL (host and port are used).
    ///   - file: The local file to send.
    ///   - name: The name to store it under (goes into `filename="..."`).
    ///   - size: The file's size, for progress.
    ///   - stallTimeout: Give up when the card accepts nothing for this long.
    ///   - connectTimeout: Give up on connecting after this long.
    ///   - transfer: Receives upload progress.
    init(
        card: RemoteURL, file: String, name: String, size: Int64, stallTimeout: Duration,
        connectTimeout: Duration, transfer: Transfer
    ) {
        self.transfer = transfer
        self.size = size
        var target = card.with(path: "/upload.cgi")
        target.query = nil
        super.init(hostKey: card.hostKey)
        let mime = curl_mime_init(easy.raw)
        self.mime = mime
        let part = curl_mime_addpart(mime)
        curl_mime_name(part, "file")
        curl_mime_filedata(part, file)
        curl_mime_filename(part, name)
        curl_mime_type(part, "application/octet-stream")
        HTTPFileSystem.configure(easy, url: target, scheme: "http", verifyTLS: true)
        easy.set(CURLOPT_MIMEPOST, pointer: UnsafeMutableRawPointer(mime))
        // Cards do not know `Expect: 100-continue`; waiting for it costs a second.
        easy.set(CURLOPT_HTTPHEADER, list: ["Expect:"])
        easy.setTimeouts(connect: connectTimeout, stall: stallTimeout)
        enableProgress()
    }

    deinit {
        // Detach the form from the handle before freeing it: the handle keeps a
        // pointer to it until told otherwise.
        guard let mime else { return }
        easy.set(CURLOPT_MIMEPOST, pointer: nil)
        curl_mime_free(mime)
    }

    override func didReceiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        headers.consume(line: String(decoding: line, as: UTF8.self))
        return true
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard body.count + bytes.count <= 64 << 10 else { return false }
        body.append(contentsOf: bytes)
        return true
    }

    override func progress(downloadTotal: Int64, downloaded: Int64, uploadTotal: Int64, uploaded: Int64) -> Bool {
        // The multipart framing adds a few hundred bytes: count the file's bytes only.
        transfer.report(bytesDone: min(uploaded, size), totalBytes: size)
        return true
    }

    /// The body as text, trimmed.
    var text: String {
        String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
