import FerryKit
import FerryServer
import Foundation

extension HTTPResponse {
    /// A JSON response (`application/json`), never cached.
    static func json(_ value: some Encodable, status: Int = 200) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return HTTPResponse(
            status: status, headers: ["Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store"],
            body: .data(data))
    }

    /// The JSON error answer for a failed operation: the backend's own text and a status that fits it.
    static func failure(_ error: any Error, source: WebSource? = nil) -> HTTPResponse {
        let e = FerryError.wrap(error)
        return .json(
            ["error": WebMessages.clean(e.description, source: source), "code": e.code.description],
            status: status(for: e))
    }

    /// A JSON error with a message of ours.
    static func failure(_ status: Int, _ message: String) -> HTTPResponse {
        .json(["error": message], status: status)
    }

    /// The HTTP status that tells the page what kind of failure a `FerryError` is.
    static func status(for error: FerryError) -> Int {
        switch error.code {
        case .invalidURL, .unsupportedScheme, .invalidTemplate: return 400
        case .unsupportedOperation: return 501
        case .notFound: return 404
        case .permissionDenied: return 403
        case .destinationExists, .directoryNotEmpty: return 409
        case .diskFull: return 507
        case .timedOut, .notAnswering: return 504
        case .authenticationFailed, .connectionFailed, .serverError, .protocolError, .tls, .badListing: return 502
        case .localIO where error.serverText == String(cString: strerror(ENOENT)): return 404
        case .localIO where error.serverText == String(cString: strerror(EACCES)): return 403
        case .localIO where error.serverText == String(cString: strerror(ENOTDIR)): return 404
        case .localIO where error.serverText == String(cString: strerror(EEXIST)): return 409
        case .localIO where error.serverText == String(cString: strerror(ENAMETOOLONG)): return 414
        case .unexpected: return 500  // a failure FerryKit has no code for: the server's own
        default: return 500
        }
    }
}
