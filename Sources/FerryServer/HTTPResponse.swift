import Foundation

/// What a handler answers: a status, headers and a body.
///
/// The server adds `Content-Length` (never set it yourself), `Date`, and for
/// file bodies `ETag`, `Last-Modified` and `Accept-Ranges`. It answers
/// `Range` requests on file bodies itself (206, 416) unless
/// ``supportsRanges`` is `false`.
public struct HTTPResponse: Sendable {
    /// The body of a response.
    public enum Body: Sendable, Equatable {
        /// No body.
        case empty
        /// Bytes.
        case data(Data)
        /// UTF-8 text; `Content-Type` defaults to `text/plain; charset=utf-8`.
        case text(String)
        /// A file sent from disk (through `sendfile` unless a rate limit is
        /// set), with ranges, `ETag` and `Last-Modified`. A missing file gives
        /// 404, an unreadable one 403, a folder 404.
        case file(path: String, contentType: String = "application/octet-stream")
    }

    /// The status code, e.g. 200.
    public var status: Int
    /// Headers to send. `Content-Length` is ignored: the server computes it.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body
    /// Whether `Range` requests on a file body get 206/416. `false` emulates a
    /// server (or card) that ignores `Range`: always 200 with the whole file,
    /// and no `Accept-Ranges` header.
    public var supportsRanges: Bool

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: Headers to send.
    ///   - body: The body.
    ///   - supportsRanges: Whether `Range` requests on a file body are honoured.
    public init(status: Int = 200, headers: HTTPHeaders = [:], body: Body = .empty, supportsRanges: Bool = true) {
        self.status = status
        self.headers = headers
        self.body = body
        self.supportsRanges = supportsRanges
    }

    /// A text response.
    ///
    /// - Parameters:
    ///   - text: The body, sent as UTF-8.
    ///   - status: The status code.
    ///   - contentType: The `Content-Type`.
    public static func text(
        _ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8"
    ) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": contentType], body: .text(text))
    }

    /// A byte response.
    ///
    /// - Parameters:
    ///   - data: The body.
    ///   - status: The status code.
    ///   - contentType: The `Content-Type`.
    public static func data(
        _ data: Data, status: Int = 200, contentType: String = "application/octet-stream"
    ) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": contentType], body: .data(data))
    }

    /// A file response with range support.
    ///
    /// - Parameters:
    ///   - path: The file to send.
    ///   - contentType: The `Content-Type`.
    ///   - supportsRanges: Whether `Range` requests get 206/416.
    public static func file(
        _ path: String, contentType: String = "application/octet-stream", supportsRanges: Bool = true
    ) -> HTTPResponse {
        HTTPResponse(body: .file(path: path, contentType: contentType), supportsRanges: supportsRanges)
    }

    /// A response with only a status and a short text body naming it
    /// (`404 Not Found`).
    ///
    /// - Parameter status: The status code.
    public static func status(_ status: Int) -> HTTPResponse {
        .text("\(status) \(HTTPStatus.reason(status))\n", status: status)
    }
}

/// Reason phrases for the status codes Ferry uses.
enum HTTPStatus {
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 207: "Multi-Status"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 411: "Length Required"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 412: "Precondition Failed"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 507: "Insufficient Storage"
        default: "Status \(status)"
        }
    }
}
