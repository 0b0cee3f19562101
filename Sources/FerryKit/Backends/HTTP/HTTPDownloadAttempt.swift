import CCurl
import Foundation

/// One attempt of an HTTP(S) download: asks for the bytes from `offset` (with
/// `If-Range`), decides from the response whether they continue the `.part`, and
/// streams them to it.
final class HTTPDownloadAttempt: DownloadAttemptJob, @unchecked Sendable {
    private var headers = HTTPHeaders()
    private var decided = false
    private var totalSize: Int64?
    private let display: String

    init(
        url: RemoteURL, scheme: String?, offset: Int64, part: PartFile, transfer: Transfer, options: DownloadOptions,
        settings: HTTPRequestSettings
    ) {
        display = url.redacted
        super.init(hostKey: url.hostKey, part: part, transfer: transfer, offset: offset)
        HTTPFileSystem.configure(easy, url: url, scheme: scheme, settings: settings)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(options.connectTimeout / .milliseconds(1)))
        // A connection that delivers under 1 byte/s for the stall time is dead.
        easy.set(CURLOPT_LOW_SPEED_LIMIT, 1)
        easy.set(CURLOPT_LOW_SPEED_TIME, max(1, Int(options.stallTimeout / .seconds(1))))
        var extra = settings.headerLines
        if offset > 0 {
            easy.set(CURLOPT_RANGE, "\(offset)-")
            if let validator = part.journal.ifRangeValidator { extra.append("If-Range: \(validator)") }
        }
        if !extra.isEmpty { easy.set(CURLOPT_HTTPHEADER, list: extra) }
    }

    override func didReceiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        headers.consume(line: line)
        return true
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !decided {
            guard decide() else { return false }
        }
        guard part.append(bytes) else {
            outcome = .failed(part.writeError!)
            return false
        }
        bytesReceived += Int64(bytes.count)
        transfer.report(bytesDone: part.length, totalBytes: totalSize)
        return true
    }

    /// Looks at the final response's status and headers before the first body byte.
    /// Returns false (with `outcome` set) to stop the attempt.
    private func decide() -> Bool {
        decided = true
        let status = headers.status != 0 ? headers.status : easy.info(CURLINFO_RESPONSE_CODE)
        if status == 416 && offset > 0 {
            // Asked past the end: either the file was already complete, or it shrank.
            let total = headers["Content-Range"].flatMap { ContentRange.total416($0) }
            if let total, total == offset, part.journal.totalSize == nil || part.journal.totalSize == total {
                outcome = .complete(expectedSize: total)
            } else {
                outcome = .restart(reason: "416 for a range the file no longer has")
            }
            return false
        }
        if status >= 400 {
            outcome = .failed(.http(status: status, reason: headers.reason, operation: "download", target: display))
            return false
        }
        // An empty `ETag:` is no validator; as `If-Range:` it would be dropped, and
        // the Range sent unguarded.
        let etag = headers["ETag"].flatMap { $0.isEmpty ? nil : $0 }
        let lastModified = headers["Last-Modified"].flatMap { $0.isEmpty ? nil : $0 }
        let contentLength = headers["Content-Length"].flatMap { Int64($0) }
        let journal = part.journal
        let finalSource =
            easy.info(CURLINFO_REDIRECT_COUNT) > 0
            ? easy.info(string: CURLINFO_EFFECTIVE_URL).map(RemoteURL.redact) : nil
        do {
            if status == 206 {
                // Several ranges wrapped in MIME (never asked for): the body is not
                // the file's bytes, whatever Content-Range says.
                if headers["Content-Type"]?.lowercased().hasPrefix("multipart/") == true {
                    outcome = .restart(reason: "206 with a multipart body")
                    return false
                }
                guard let range = headers["Content-Range"].flatMap(ContentRange.init) else {
                    outcome = .restart(reason: "206 without a valid Content-Range")
                    return false
                }
                if range.start != offset {
                    outcome = .restart(reason: "asked for bytes from \(offset), got them from \(range.start)")
                    return false
                }
                if let old = journal.etag, let etag, old != etag {
                    outcome = .restart(reason: "ETag changed")
                    return false
                }
                if let old = journal.lastModified, let lastModified, old != lastModified, journal.etag == nil {
                    outcome = .restart(reason: "Last-Modified changed")
                    return false
                }
                if journal.ifRangeValidator == nil, journal.finalSource != finalSource {
                    // Nothing vouches that bytes from another place continue these.
                    outcome = .restart(reason: "redirected to \(finalSource ?? display), not where the bytes came from")
                    return false
                }
                if let old = journal.totalSize, let new = range.total, old != new {
                    outcome = .restart(reason: "size changed from \(old) to \(new)")
                    return false
                }
                totalSize = range.total ?? journal.totalSize
                try part.begin(
                    at: offset, etag: etag ?? journal.etag, lastModified: lastModified ?? journal.lastModified,
                    totalSize: totalSize, finalSource: finalSource)
            } else if (200..<300).contains(status) {
                // The whole file follows: Range was ignored, or If-Range said it changed.
                if offset > 0 { restartedInPlace = true }
                totalSize = contentLength
                try part.begin(
                    at: 0, etag: etag, lastModified: lastModified, totalSize: totalSize, finalSource: finalSource)
                transfer.report(bytesDone: 0, totalBytes: totalSize, resumedFrom: 0, force: true)
            } else {
                outcome = .failed(
                    FerryError(
                        .protocolError, operation: "download", target: display, serverCode: status,
                        serverText: headers.reason))
                return false
            }
        } catch {
            outcome = .failed(error)
            return false
        }
        return true
    }

    override func didComplete(_ completion: CurlCompletion) {
        if case .failed(let e) = outcome, e.detail == "no outcome" {
            // Not decided by a callback yet: decide from how libcurl ended.
        } else {
            return
        }
        if completion.interrupted {
            outcome = .interrupted
            return
        }
        if completion.code == .ok {
            if !decided {
                // An empty body: still look at the status.
                guard decide() else { return }
            }
            outcome = .complete(expectedSize: totalSize)
            return
        }
        outcome = .failed(
            HTTPFileSystem.failure(
                completion, headers: headers, bodyStarted: decided, operation: "download", target: display))
    }
}

extension ContentRange {
    /// The size from a 416's `Content-Range: bytes */SIZE`.
    static func total416(_ text: String) -> Int64? {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard t.lowercased().hasPrefix("bytes */") else { return nil }
        return Int64(t.dropFirst(8))
    }
}
