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
        let headers = head.headers
        // An empty `ETag:` is no validator; as `If-Range:` it would be dropped, and
        // the Range sent unguarded.
        let etag = headers["ETag"].flatMap { $0.isEmpty ? nil : $0 }
        let lastModified = headers["Last-Modified"].flatMap { $0.isEmpty ? nil : SourceTime.httpDate($0) }
        switch HTTPRangeReply(status: head.status, headers: headers, offset: offset) {
        case .pastEnd(let total) where offset > 0:
            // Asked past the end: either the file was already complete, or it shrank.
            if let total, total == offset, journal.totalSize == nil || journal.totalSize == total {
                return stop(.complete(expectedSize: total))
            }
            return stop(.restart(reason: "416 for a range the file no longer has"))
        case .pastEnd, .error:
            return stop(
                .failed(.http(status: head.status, reason: headers.reason, operation: "download", target: display)))
        case .notTheRange(let reason):
            return stop(.restart(reason: reason))
        case .fromOffset(let total):
            if let reason = refusal206(head, total: total, etag: etag, lastModified: lastModified) {
                return stop(.restart(reason: reason))
            }
            totalSize = total ?? journal.totalSize
            state = .streaming
            return .begin(
                PartStart(
                    at: offset, etag: etag ?? journal.etag, modified: lastModified ?? journal.modified,
                    totalSize: totalSize, finalSource: head.finalSource))
        case .wholeFile(let total):
            // The whole file follows: Range was ignored, or If-Range said it changed.
            totalSize = total
            state = .streaming
            return .begin(
                PartStart(
                    at: 0, etag: etag, modified: lastModified, totalSize: total, finalSource: head.finalSource))
        case .unexpected:
            return stop(
                .failed(
                    HTTPRangeReply.unexpected(
                        head.status, reason: headers.reason, operation: "download", target: display)))
        }
    }

    /// Why a `206` of the asked bytes still cannot continue the part (the file
    /// changed, or the bytes came from elsewhere), or nil when it can.
    private func refusal206(_ head: Head, total: Int64?, etag: String?, lastModified: SourceTime?) -> String? {
        if let old = journal.etag, let etag, old != etag { return "ETag changed" }
        if let old = journal.modified, let lastModified, old != lastModified, journal.etag == nil {
            return "Last-Modified changed"
        }
        if journal.ifRangeValidator == nil, journal.finalSource != head.finalSource {
            // Nothing vouches that bytes from another place continue these.
            return "redirected to \(head.finalSource ?? display), not where the bytes came from"
        }
        if let old = journal.totalSize, let new = total, old != new {
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

/// What the answer to a request for a file's bytes from `offset` on says its
/// body is, judged from the status and headers before the first body byte: the
/// one reading of `206`, `200` and `416` that a download into a `.part`
/// (`HTTPDownloadDecision`) and a read into memory (`CurlMemoryJob`,
/// `HTTPMemoryRead`) share, so that a server that ignores or garbles `Range` is
/// met the same way by both.
enum HTTPRangeReply: Sendable, Hashable {
    /// A `206` whose `Content-Range` starts at `offset`: the body is the file's
    /// bytes from there; `total` is the file's size when the range names it.
    case fromOffset(total: Int64?)
    /// Another `2xx` (a `200`: `Range` ignored, or `If-Range` said the file
    /// changed): the body is the whole file from its first byte; `total` is the
    /// `Content-Length`.
    case wholeFile(total: Int64?)
    /// A `416`: nothing from `offset` on; `total` is the size its
    /// `Content-Range: bytes */SIZE` gives.
    case pastEnd(total: Int64?)
    /// A `206` whose body cannot be the asked bytes (a multipart body, no or a
    /// malformed `Content-Range`, another start), and why.
    case notTheRange(String)
    /// An error status (`400` and over, but `416`).
    case error
    /// A status that is none of these (a `1xx`, a `3xx` not followed).
    case unexpected

    init(status: Int, headers: HTTPHeaders, offset: Int64) {
        switch status {
        case 416:
            self = .pastEnd(total: headers["Content-Range"].flatMap { ContentRange.total416($0) })
        case 400...:
            self = .error
        case 206:
            // Several ranges wrapped in MIME (never asked for): the body is not the
            // file's bytes, whatever Content-Range says.
            if headers["Content-Type"]?.lowercased().hasPrefix("multipart/") == true {
                self = .notTheRange("206 with a multipart body")
            } else if let range = headers["Content-Range"].flatMap(ContentRange.init) {
                self =
                    range.start == offset
                    ? .fromOffset(total: range.total)
                    : .notTheRange("asked for bytes from \(offset), got them from \(range.start)")
            } else {
                self = .notTheRange("206 without a valid Content-Range")
            }
        case 200..<300:
            self = .wholeFile(total: headers["Content-Length"].flatMap { Int64($0) })
        default:
            self = .unexpected
        }
    }

    /// The error for an `unexpected` status, as the server worded it.
    static func unexpected(_ status: Int, reason: String, operation: String, target: String) -> FerryError {
        FerryError(.protocolError, operation: operation, target: target, serverCode: status, serverText: reason)
    }
}
