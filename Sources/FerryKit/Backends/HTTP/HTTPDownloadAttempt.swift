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
    /// when nil.
    static func source(
        url: RemoteURL, engine: CurlEngine, wireScheme: String? = nil, settings: HTTPRequestSettings? = nil,
        gaveUp: @escaping @Sendable (FerryError, Int) -> FerryError = DownloadSource.gaveUpAfter
    ) -> DownloadSource {
        let base = settings ?? HTTPRequestSettings(url: url, options: .init())
        return DownloadSource(
            displayName: url.redacted, engine: engine,
            makeAttempt: { offset, part, transfer, options in
                var settings = base
                settings.verifyTLS = settings.verifyTLS && options.verifyTLS
                return HTTPDownloadAttempt(
                    url: url, scheme: wireScheme, offset: offset, part: part, transfer: transfer, options: options,
                    settings: settings)
            }, gaveUp: gaveUp)
    }

    init(
        url: RemoteURL, scheme: String?, offset: Int64, part: PartFile, transfer: Transfer, options: DownloadOptions,
        settings: HTTPRequestSettings
    ) {
        decision = HTTPDownloadDecision(offset: offset, journal: part.journal, display: url.redacted)
        super.init(hostKey: url.hostKey, part: part, transfer: transfer, offset: offset)
        HTTPFileSystem.configure(easy, url: url, scheme: scheme, settings: settings)
        easy.setTimeouts(connect: options.connectTimeout, stall: options.stallTimeout)
        var extra = settings.headerLines
        if offset > 0 {
            easy.set(CURLOPT_RANGE, "\(offset)-")
            if let validator = part.journal.ifRangeValidator { extra.append("If-Range: \(validator)") }
        }
        if !extra.isEmpty { easy.set(CURLOPT_HTTPHEADER, list: extra) }
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
