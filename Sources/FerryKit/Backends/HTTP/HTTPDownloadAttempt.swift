import CCurl
import Foundation

/// What HTTP(S) adds to a download attempt (`DownloadAttempt`): asks for the
/// bytes from `offset` (with `If-Range`), reads the response's status and
/// headers into an `HTTPDownloadDecision`, which decides whether they continue
/// the `.part`, and words a failure as `HTTPFileSystem.failure` does.
struct HTTPDownloadAttempt: DownloadAttemptAdapter {
    var decision: HTTPDownloadDecision
    private var headers = HTTPHeaders()
    private let request: Request
    private let offset: Int64
    private let ifRange: String?
    private let options: DownloadOptions

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
                DownloadAttempt(
                    HTTPDownloadAttempt(request, offset: offset, journal: part.journal, options: options),
                    hostKey: request.hostKey, part: part, transfer: transfer, offset: offset)
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

    init(_ request: Request, offset: Int64, journal: DownloadJournal, options: DownloadOptions) {
        decision = HTTPDownloadDecision(offset: offset, journal: journal, display: request.display)
        self.request = request
        self.offset = offset
        ifRange = journal.ifRangeValidator
        self.options = options
    }

    func configure(_ job: CurlJob) {
        var settings = request.settings
        settings.verifyTLS = settings.verifyTLS && options.verifyTLS
        HTTPFileSystem.configure(
            job.easy, wireURL: request.wireURL, settings: settings, headerLines: request.headerLines)
        job.easy.setTimeouts(connect: options.connectTimeout, stall: options.stallTimeout)
        if offset > 0 {
            job.easy.set(CURLOPT_RANGE, "\(offset)-")
            if let ifRange {
                job.easy.set(CURLOPT_HTTPHEADER, list: request.headerLines + ["If-Range: \(ifRange)"])
            }
        }
    }

    mutating func header(_ line: UnsafeRawBufferPointer) {
        headers.consume(line: line)
    }

    func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer, job: CurlJob) {}

    /// The final response as the decision sees it.
    func head(_ easy: EasyHandle) -> HTTPDownloadDecision.Head {
        let status = headers.status != 0 ? headers.status : easy.info(CURLINFO_RESPONSE_CODE)
        let finalSource =
            easy.info(CURLINFO_REDIRECT_COUNT) > 0
            ? easy.info(string: CURLINFO_EFFECTIVE_URL).map(RemoteURL.redact) : nil
        return HTTPDownloadDecision.Head(status: status, headers: headers, finalSource: finalSource)
    }

    /// An empty body ends `.ok` too: the status still decides.
    func ending(_ completion: CurlCompletion, length: Int64) -> HTTPDownloadDecision.Ending {
        if completion.interrupted { return .interrupted }
        if completion.code == .ok { return .ok }
        return .failed(
            HTTPFileSystem.failure(
                completion, headers: headers, bodyStarted: !decision.needsHead, operation: "download",
                target: decision.display))
    }

    func progressTotal(_ part: PartFile) -> Int64? { decision.totalSize }
}
