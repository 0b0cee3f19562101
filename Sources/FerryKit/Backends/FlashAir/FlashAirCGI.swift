import CCurl
import Foundation

/// One reply from a card's CGI: status, headers and the whole (small) body.
struct FlashAirReplyBody: Sendable {
    /// HTTP status of the final response.
    var status: Int
    /// The status line's reason phrase.
    var reason: String
    /// Response headers.
    var headers: HTTPHeaders
    /// The body bytes.
    var body: [UInt8]

    /// The body as text: UTF-8, invalid bytes replaced (W-01 cards send Shift-JIS names).
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body without surrounding whitespace and line ends.
    var trimmedText: String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// Whether the body says `SUCCESS` (compared without case, as cards vary).
    var saysSuccess: Bool { trimmedText.uppercased().hasSuffix("SUCCESS") }
}

/// Sends requests to `command.cgi`, `upload.cgi` and `thumbnail.cgi` of one card,
/// with the timeouts and retries a sleeping or vanishing card needs.
///
/// Every request goes through the shared engine under the card's `hostKey`, so the
/// per-host limit (1 for a card) serialises CGI calls and downloads alike.
struct FlashAirCGI: Sendable {
    /// The card's URL (`flashair://HOST:PORT/...`); only host and port are used.
    let url: RemoteURL
    let engine: CurlEngine
    let policy: FlashAirFileSystem.RequestPolicy

    /// Sends `GET /NAME?QUERY` and returns the reply, retrying silence, dropped
    /// connections and 502/503/504 with exponential back-off.
    ///
    /// - Parameters:
    ///   - cgi: `command.cgi`, `upload.cgi` or `thumbnail.cgi`.
    ///   - query: The query string, already percent-encoded.
    ///   - operation: What Ferry is doing, for error messages ("list", "delete" ...).
    ///   - target: The remote path concerned, for error messages.
    ///   - maxBody: The largest body accepted.
    ///   - method: Another method than GET (`OPTIONS` for the WebDAV probe).
    /// A card that takes the connection and closes it without a word (an empty
    /// reply) is busy with another client: it is tried again, every
    /// `policy.retryDelay`, for up to `policy.busyWait`, without counting as a
    /// failed try.
    ///
    /// - Throws: `FerryError.notAnswering` after `policy.tries` failed tries, or
    ///   saying the card is busy with another client after `policy.busyWait`;
    ///   other transport failures (a bad host name, cancellation) at once.
    func get(
        _ cgi: String, query: String?, operation: String, target: String, maxBody: Int = 4 << 20,
        method: String? = nil
    ) async throws(FerryError) -> FlashAirReplyBody {
        var request = url.with(path: "/" + cgi)
        request.query = query
        let shown = url.with(path: target).redacted
        let retries = RetryPolicy(
            firstDelay: policy.retryDelay, cap: FlashAirCGI.longestBackOff, maxInRow: max(1, policy.tries) - 1)
        func once() async throws(FerryError) -> FlashAirReplyBody {
            let job = HTTPRequestJob(hostKey: url.hostKey, maxBody: maxBody)
            HTTPFileSystem.configure(job.easy, url: request, scheme: "http", verifyTLS: true)
            configureTimeouts(job.easy)
            if let method { job.easy.set(CURLOPT_CUSTOMREQUEST, method) }
            let c = await engine.perform(job)
            if c.interrupted { throw FerryError(.cancelled, operation: operation, target: shown) }
            if job.tooLarge {
                throw FerryError(
                    .protocolError, operation: operation, target: shown,
                    detail: "reply larger than \(maxBody) bytes")
            }
            // One connection, held by another client: the card closes ours unanswered.
            if c.code == .gotNothing { throw FlashAirCGI.busy(operation: operation, target: shown) }
            // Refused, reset, timed out (a card that sleeps or restarts), or
            // 502/503/504: transient, so tried again; any other failure is thrown.
            guard c.code == .ok else { throw FerryError.curl(c, operation: operation, target: shown) }
            let status = job.headers.status != 0 ? job.headers.status : c.responseCode
            let reply = FlashAirReplyBody(
                status: status, reason: job.headers.reason, headers: job.headers, body: job.body)
            guard FlashAirCGI.isRetryable(status: status) else { return reply }
            var failure = FerryError.http(status: status, reason: reply.reason, operation: operation, target: shown)
            failure.isTransient = true
            throw failure
        }
        let busyUntil = ContinuousClock.now + policy.busyWait
        func whenFree() async throws(FerryError) -> FlashAirReplyBody {
            while true {
                do {
                    return try await once()
                } catch {
                    guard FlashAirCGI.isBusy(error), ContinuousClock.now < busyUntil else { throw error }
                    if Task.isCancelled { throw FerryError(.cancelled, operation: operation, target: shown) }
                    try? await Task.sleep(for: policy.retryDelay)
                }
            }
        }
        return try await retries.retrying(
            retryable: { $0.isTransient && !FlashAirCGI.isBusy($0) },
            cancelled: FerryError(.cancelled, operation: operation, target: shown),
            gaveUp: { last, _ in
                FlashAirCGI.notAnswering(after: policy.tries, last: last, operation: operation, target: shown)
            }, whenFree)
    }

    /// What a card says with an empty reply (`CURLE_GOT_NOTHING`): it took the
    /// connection and closed it unanswered, as a card does while another client
    /// (the camera maker's app, a second Ferry) holds its only connection.
    static let busyText = "the card is busy with another client: it allows one connection"

    /// The error for a card that turned the connection away for another client's.
    static func busy(operation: String, target: String) -> FerryError {
        FerryError(
            .notAnswering, operation: operation, target: target, serverText: busyText,
            detail: "close the other app or Ferry that uses the card, or try again later", isTransient: true)
    }

    /// Whether `error` is ``busy(operation:target:)``'s, or libcurl's empty reply
    /// it stands for (a download's attempt reports that as it is).
    static func isBusy(_ error: FerryError) -> Bool {
        error.serverText == busyText || error.serverText == "Empty reply from server"
            || error.serverText == CurlCode.gotNothing.description
    }

    /// The longest back-off between CGI tries: a card's calls are small, and a
    /// card that sleeps wakes within seconds (`RetryPolicy.longestDelay` is for
    /// transfers).
    static let longestBackOff: Duration = .seconds(10)

    /// Options every CGI request gets: connect and stall timeouts.
    func configureTimeouts(_ easy: EasyHandle) {
        // Silence (a sleeping camera) is a stall: under 1 byte/s for the stall time.
        easy.setTimeouts(connect: policy.connectTimeout, stall: policy.stallTimeout)
        // The whole call, headers included, may not take longer than the stall time
        // twice over: a small CGI reply that trickles for minutes is a dead card.
        easy.set(CURLOPT_TIMEOUT_MS, Int(policy.stallTimeout * 2 / .milliseconds(1)))
    }

    /// 502, 503 (camera switched off) and 504 mean "try again"; 500 is a real answer
    /// on cards (thumbnail.cgi, DEL).
    static func isRetryable(status: Int) -> Bool {
        status == 502 || status == 503 || status == 504
    }

    /// The error for a card that gave no usable answer `tries` times in a row.
    static func notAnswering(after tries: Int, last: FerryError?, operation: String, target: String)
        -> FerryError
    {
        var lastText: String?
        if let last {
            if let code = last.serverCode {
                lastText = "last: \(code) \(last.serverText ?? "")".trimmingCharacters(in: .whitespaces)
            } else {
                lastText = "last: " + (last.serverText ?? last.code.description)
            }
        }
        return FerryError(
            .notAnswering, operation: operation, target: target,
            serverText: "card not answering after \(tries) \(tries == 1 ? "try" : "tries")",
            detail: lastText, isTransient: true)
    }

    /// Encodes a path for a query value: everything but unreserved characters and `/`
    /// is escaped (spaces, `&`, `#`, `%`, `+`, commas, non-ASCII letters).
    static func encode(_ path: String) -> String {
        RemoteURL.percentEncodePath(path)
    }

    /// `/DCIM/` → `/DCIM`: cards answer nothing for a folder with a trailing slash.
    static func folderArgument(_ path: String) -> String {
        RemotePath.normalize(path, keepingServerRoot: false)
    }
}
