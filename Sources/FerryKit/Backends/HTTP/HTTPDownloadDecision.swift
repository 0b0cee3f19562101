import Foundation

/// The decisions of one HTTP(S) download attempt, as a pure value: whether the
/// response continues the `.part` (a `206` from the asked offset, validators
/// unchanged), replaces it (a `200`), or ends the attempt (an error status, a
/// `416`, a `206` that cannot be trusted), and how the attempt ended.
///
/// Events in, actions out; `HTTPDownloadAttempt` feeds it from libcurl's
/// callbacks and carries the actions out. The states are `AttemptPhase`'s. An
/// event in a state it cannot arrive in (bytes before the head, anything after
/// the end) is a bug in the adapter and traps.
struct HTTPDownloadDecision: AttemptDecision {
    /// The final response's status line and headers, and where redirects led.
    struct Head: Sendable, Hashable {
        var status: Int
        var headers: HTTPHeaders
        /// The effective URL, redacted, when a redirect was followed.
        var finalSource: String?
    }

    /// How libcurl ended the transfer.
    enum Ending: Sendable, Hashable {
        /// libcurl finished without an error.
        case ok
        /// Paused or cancelled by Ferry.
        case interrupted
        /// libcurl failed, as `HTTPFileSystem.failure` words it.
        case failed(FerryError)
    }

    typealias Event = AttemptEvent<Head, Ending>
    typealias Action = AttemptAction

    /// The offset the request asked for (`Range: bytes=offset-`), 0 for the whole file.
    let offset: Int64
    /// What the part's journal said when the attempt started.
    let journal: DownloadJournal
    /// The URL as shown to people.
    let display: String
    private(set) var state = AttemptPhase.awaitingHead
    /// The file's full size, once the head told it.
    private(set) var totalSize: Int64?

    init(offset: Int64, journal: DownloadJournal, display: String) {
        self.offset = offset
        self.journal = journal
        self.display = display
    }

    mutating func handle(_ event: Event) -> Action {
        if let action = state.shared(event) { return action }
        switch (state, event) {
        case (.awaitingHead, .head(let head)):
            return decide(head)
        case (.streaming, .end(.ok)):
            state = .done(.complete(expectedSize: totalSize))
            return .finish
        case (.awaitingHead, .end(.ok)):
            preconditionFailure("an attempt that succeeded must be shown its head before its end")
        case (.awaitingHead, .end(.interrupted)), (.streaming, .end(.interrupted)):
            state = .done(.interrupted)
            return .finish
        case (.awaitingHead, .end(.failed(let error))), (.streaming, .end(.failed(let error))):
            state = .done(.failed(error))
            return .finish
        default:
            preconditionFailure("HTTP download: \(event) cannot arrive while \(state)")
        }
    }

    /// Looks at the final response's status and headers before the first body byte.
    private mutating func decide(_ head: Head) -> Action {
        let status = head.status
        let headers = head.headers
        if status == 416 && offset > 0 {
            // Asked past the end: either the file was already complete, or it shrank.
            let total = headers["Content-Range"].flatMap { ContentRange.total416($0) }
            if let total, total == offset, journal.totalSize == nil || journal.totalSize == total {
                return stop(.complete(expectedSize: total))
            }
            return stop(.restart(reason: "416 for a range the file no longer has"))
        }
        if status >= 400 {
            return stop(.failed(.http(status: status, reason: headers.reason, operation: "download", target: display)))
        }
        // An empty `ETag:` is no validator; as `If-Range:` it would be dropped, and
        // the Range sent unguarded.
        let etag = headers["ETag"].flatMap { $0.isEmpty ? nil : $0 }
        let lastModified = headers["Last-Modified"].flatMap { $0.isEmpty ? nil : $0 }
        if status == 206 {
            if let reason = refusal206(head, etag: etag, lastModified: lastModified) {
                return stop(.restart(reason: reason))
            }
            let range = headers["Content-Range"].flatMap(ContentRange.init)
            totalSize = range?.total ?? journal.totalSize
            state = .streaming
            return .begin(
                PartStart(
                    at: offset, etag: etag ?? journal.etag, lastModified: lastModified ?? journal.lastModified,
                    totalSize: totalSize, finalSource: head.finalSource))
        }
        if (200..<300).contains(status) {
            // The whole file follows: Range was ignored, or If-Range said it changed.
            totalSize = headers["Content-Length"].flatMap { Int64($0) }
            state = .streaming
            return .begin(
                PartStart(
                    at: 0, etag: etag, lastModified: lastModified, totalSize: totalSize, finalSource: head.finalSource))
        }
        return stop(
            .failed(
                FerryError(
                    .protocolError, operation: "download", target: display, serverCode: status,
                    serverText: headers.reason)))
    }

    /// Why a `206` cannot continue the part, or nil when it can.
    private func refusal206(_ head: Head, etag: String?, lastModified: String?) -> String? {
        let headers = head.headers
        // Several ranges wrapped in MIME (never asked for): the body is not the
        // file's bytes, whatever Content-Range says.
        if headers["Content-Type"]?.lowercased().hasPrefix("multipart/") == true {
            return "206 with a multipart body"
        }
        guard let range = headers["Content-Range"].flatMap(ContentRange.init) else {
            return "206 without a valid Content-Range"
        }
        if range.start != offset { return "asked for bytes from \(offset), got them from \(range.start)" }
        if let old = journal.etag, let etag, old != etag { return "ETag changed" }
        if let old = journal.lastModified, let lastModified, old != lastModified, journal.etag == nil {
            return "Last-Modified changed"
        }
        if journal.ifRangeValidator == nil, journal.finalSource != head.finalSource {
            // Nothing vouches that bytes from another place continue these.
            return "redirected to \(head.finalSource ?? display), not where the bytes came from"
        }
        if let old = journal.totalSize, let new = range.total, old != new {
            return "size changed from \(old) to \(new)"
        }
        return nil
    }

    private mutating func stop(_ outcome: AttemptOutcome) -> Action {
        state = .stopped(outcome)
        return .stop
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
