import CCurl
import Foundation

/// One attempt of an HTTP(S) download: asks for the bytes from `offset` (with
/// `If-Range`) and feeds libcurl's callbacks to an `HTTPDownloadDecision`, which
/// decides whether they continue the `.part`; this carries its actions out.
final class HTTPDownloadAttempt: DownloadAttemptJob, @unchecked Sendable {
    private var headers = HTTPHeaders()
    private var decision: HTTPDownloadDecision

    /// The source the driver asks for attempts: one per file. `wireScheme` is the
    /// scheme on the wire (`http` for a `flashair://` URL); `settings` what every
    /// request carries (credentials, headers, certificates), from the URL alone
    /// when nil; `display` the name people and the journal see, when it is not
    /// the URL (an ez Share file's path instead of its `download?file=` link).
    static func source(
        url: RemoteURL, engine: CurlEngine, wireScheme: String? = nil, settings: HTTPRequestSettings? = nil,
        display: String? = nil,
        gaveUp: @escaping @Sendable (FerryError, Int) -> FerryError = DownloadSource.gaveUpAfter
    ) -> DownloadSource {
        // What every attempt of the file sends, rendered once per file. Without a
        // user name and another scheme on the wire, the URL shown is the wire URL.
        let wireURL = url.wireURL(scheme: wireScheme)
        let sameText =
            url.user == nil && url.scheme != .file && (wireScheme ?? url.scheme.rawValue) == url.scheme.rawValue
        let request = Request(
            wireURL: wireURL, hostKey: url.hostKey, display: display ?? (sameText ? wireURL : url.redacted),
            settings: settings ?? HTTPRequestSettings(url: url, options: .init()))
        return DownloadSource(
            displayName: request.display, engine: engine,
            makeAttempt: { offset, part, transfer, options in
                HTTPDownloadAttempt(request, offset: offset, part: part, transfer: transfer, options: options)
            }, gaveUp: gaveUp)
    }

    /// One file's request as its attempts send it.
    struct Request: Sendable {
        /// The URL as libcurl gets it (`RemoteURL.wireURL`).
        var wireURL: String
        var hostKey: String
        /// The URL as people see it (`RemoteURL.redacted`).
        var display: String
        var settings: HTTPRequestSettings
        /// `settings.headerLines`.
        var headerLines: [String]

        init(wireURL: String, hostKey: String, display: String, settings: HTTPRequestSettings) {
            self.wireURL = wireURL
            self.hostKey = hostKey
            self.display = display
            self.settings = settings
            headerLines = settings.headerLines
        }
    }

    init(_ request: Request, offset: Int64, part: PartFile, transfer: Transfer, options: DownloadOptions) {
        decision = HTTPDownloadDecision(offset: offset, journal: part.journal, display: request.display)
        super.init(hostKey: request.hostKey, part: part, transfer: transfer, offset: offset)
        var settings = request.settings
        settings.verifyTLS = settings.verifyTLS && options.verifyTLS
        HTTPFileSystem.configure(easy, wireURL: request.wireURL, settings: settings, headerLines: request.headerLines)
        easy.setTimeouts(connect: options.connectTimeout, stall: options.stallTimeout)
        if offset > 0 {
            easy.set(CURLOPT_RANGE, "\(offset)-")
            if let validator = part.journal.ifRangeValidator {
                easy.set(CURLOPT_HTTPHEADER, list: request.headerLines + ["If-Range: \(validator)"])
            }
        }
    }

    override var outcome: AttemptOutcome { decision.outcome }

    override func didReceiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        headers.consume(line: line)
        return true
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if decision.needsHead {
            guard carryOut(decision.handle(.head(head())), failed: fail) else { return false }
        }
        guard carryOut(decision.handle(.body(bytes.count)), failed: fail) else { return false }
        if let error = write(bytes, totalForProgress: decision.totalSize) {
            fail(error)
            return false
        }
        return true
    }

    override func didComplete(_ completion: CurlCompletion) {
        let ending: HTTPDownloadDecision.Ending
        if completion.interrupted {
            ending = .interrupted
        } else if completion.code == .ok {
            // An empty body: the status still decides.
            if decision.needsHead && !carryOut(decision.handle(.head(head())), failed: fail) {
                _ = decision.handle(.end(.ok))
                return
            }
            ending = .ok
        } else {
            ending = .failed(
                HTTPFileSystem.failure(
                    completion, headers: headers, bodyStarted: !decision.needsHead, operation: "download",
                    target: decision.display))
        }
        _ = decision.handle(.end(ending))
    }

    /// The final response as the decision sees it.
    private func head() -> HTTPDownloadDecision.Head {
        let status = headers.status != 0 ? headers.status : easy.info(CURLINFO_RESPONSE_CODE)
        let finalSource =
            easy.info(CURLINFO_REDIRECT_COUNT) > 0
            ? easy.info(string: CURLINFO_EFFECTIVE_URL).map(RemoteURL.redact) : nil
        return HTTPDownloadDecision.Head(status: status, headers: headers, finalSource: finalSource)
    }

    /// Tells the decision that writing failed.
    private func fail(_ error: FerryError) {
        _ = decision.handle(.localFailure(error))
    }
}
