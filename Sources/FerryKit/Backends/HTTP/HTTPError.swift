import Foundation

extension FerryError {
    /// Maps an HTTP error status (>= 400) to a Ferry error.
    static func http(status: Int, reason: String, operation: String, target: String) -> FerryError {
        let text = reason.isEmpty ? standardReason(status) : reason
        let code: Code
        var transient = false
        var detail: String?
        switch status {
        case 404, 410: code = .notFound
        case 507:
            code = .serverError
            detail = "the server has no space left; free some there and try again"
        case 401: code = .authenticationFailed
        case 403: code = .permissionDenied
        case 408, 429, 500...599:
            code = .serverError
            transient = true
        default: code = .serverError
        }
        return FerryError(
            code, operation: operation, target: target, serverCode: status, serverText: text, detail: detail,
            isTransient: transient)
    }

    /// Reason phrases for responses that carry none (HTTP/2).
    static func standardReason(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 507: "Insufficient Storage"
        default: "HTTP error"
        }
    }
}
