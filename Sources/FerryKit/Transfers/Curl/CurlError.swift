import CCurl
import Foundation

extension FerryError {
    /// Maps a libcurl failure to a Ferry error a person can act on.
    static func curl(_ completion: CurlCompletion, operation: String, target: String) -> FerryError {
        let code = completion.code
        let text = completion.errorText.isEmpty ? code.description : completion.errorText
        let e: FerryError
        switch code {
        case .couldntResolveHost:
            e = FerryError(.connectionFailed, serverText: text, detail: "check the host name")
        case .couldntConnect:
            var refused = FerryError(
                .connectionFailed, serverText: text, detail: "is the server running?", isTransient: true)
            refused.wasRefused = true
            e = refused
        case .operationTimedOut:
            e = FerryError(.timedOut, serverText: text, isTransient: true)
        case .peerFailedVerification:
            e = FerryError(
                .tls, serverText: text,
                detail: "the server's certificate is not trusted",
                recovery: .trustCertificateOrSkipVerification)
        case .sslConnectError, .useSSLFailed:
            e = FerryError(.tls, serverText: text, isTransient: code == .sslConnectError)
        case .loginDenied:
            e = FerryError(.authenticationFailed, serverText: text, detail: "check the user and password")
        case .remoteFileNotFound:
            e = FerryError(.notFound, serverText: text)
        case .remoteAccessDenied:
            e = FerryError(.permissionDenied, serverText: text)
        case .urlMalformat:
            e = FerryError(.invalidURL, serverText: text)
        case .unsupportedProtocol:
            e = FerryError(.unsupportedScheme, serverText: text)
        default:
            e = FerryError(
                code.isTransient ? .connectionFailed : .protocolError, serverText: text,
                isTransient: code.isTransient)
        }
        return e.context(operation: operation, target: target)
    }

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
