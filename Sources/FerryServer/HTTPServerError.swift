/// Why an ``HTTPServer`` could not start.
public struct HTTPServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. Compare with the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: String, Hashable, Sendable {
            case invalidAddress = "invalid address"
            case startFailed = "cannot start the server"
            case alreadyStarted = "server already started"
            case invalidOptions = "invalid options"
        }
        fileprivate let base: Base
        fileprivate init(_ base: Base) { self.base = base }

        /// The host is neither an IP address nor a name that resolves.
        public static let invalidAddress = Code(.invalidAddress)
        /// libmicrohttpd could not bind or start (port in use, no permission ...).
        public static let startFailed = Code(.startFailed)
        /// ``HTTPServer/start()`` was called twice, or after ``HTTPServer/stop()``.
        public static let alreadyStarted = Code(.alreadyStarted)
        /// An option is out of range.
        public static let invalidOptions = Code(.invalidOptions)

        public var description: String { base.rawValue }
    }

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
