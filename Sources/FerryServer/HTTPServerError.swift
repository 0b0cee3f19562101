import FerryErrorCode

/// Why an ``HTTPServer`` could not start.
public struct HTTPServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. Compare with the static members (the extension below).
    public typealias Code = ErrorCode<HTTPServerError>

    /// The kind of failure.
    public var code: Code
    /// The address concerned, as `host:port`.
    public var address: String?
    /// What a person can act on, e.g. "Address already in use".
    public var detail: String?

    /// "cannot start the server on 127.0.0.1:8080: Address already in use".
    public var description: String {
        var text = code.description
        if let address { text += " on \(address)" }
        if let detail, !detail.isEmpty { text += ": \(detail)" }
        return text
    }

    static func invalidAddress(_ address: String, _ detail: String) -> HTTPServerError {
        .init(code: .invalidAddress, address: address, detail: detail)
    }
    static func startFailed(_ address: String, _ detail: String) -> HTTPServerError {
        .init(code: .startFailed, address: address, detail: detail)
    }
    static func alreadyStarted(_ address: String) -> HTTPServerError {
        .init(code: .alreadyStarted, address: address, detail: nil)
    }
    static func invalidOptions(_ detail: String) -> HTTPServerError {
        .init(code: .invalidOptions, address: nil, detail: detail)
    }
}

/// The codes of ``HTTPServerError``.
extension HTTPServerError.Code {
    /// The host is neither an IP address nor a name that resolves.
    public static var invalidAddress: Self { Self("invalid address") }
    /// libmicrohttpd could not bind or start (port in use, no permission ...).
    public static var startFailed: Self { Self("cannot start the server") }
    /// ``HTTPServer/start()`` was called twice, or after ``HTTPServer/stop()``.
    public static var alreadyStarted: Self { Self("server already started") }
    /// An option is out of range.
    public static var invalidOptions: Self { Self("invalid options") }
}
