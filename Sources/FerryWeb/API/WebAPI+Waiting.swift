import FerryServer

extension WebAPI {
    private struct Waiting: Encodable {
        var waiting: Bool
    }

    /// How long `GET /api/waiting` holds an unchanged answer back.
    static let waitingPoll: Duration = .seconds(20)

    /// `GET /api/waiting?page=ID&shown=0|1`: whether a request of the page `ID` (the `page=` its
    /// requests carry) waits for the source's only connection. Answers as soon as that differs
    /// from `shown`, else after ``waitingPoll`` (a long poll: the page asks again at once).
    func waiting(_ request: HTTPRequest) async -> HTTPResponse {
        guard let page = request.query("page"), !page.isEmpty else {
            return .failure(400, "expected page=ID: the id the page sends with its requests")
        }
        guard let source, source.share.isSingleConnection else { return .json(Waiting(waiting: false)) }
        let shown = request.query("shown") == "1"
        let now = await source.share.change(page: page, from: shown, timeout: Self.waitingPoll)
        var response = HTTPResponse.json(Waiting(waiting: now))
        response.headers.add(name: "Cache-Control", value: "no-store")
        return response
    }
}
