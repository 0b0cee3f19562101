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
}
