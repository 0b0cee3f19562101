import Foundation

/// One HTTP request as the handler sees it: fully received, body included.
///
/// Bodies never sit in memory beyond ``HTTPServer/Options/memoryBodyLimit``:
/// larger ones are spooled to a temporary file, and `multipart/form-data`
/// bodies are split on the fly into ``MultipartPart``s whose files are on
/// disk. Temporary files are deleted when the request completes; a handler
/// that wants to keep one moves it (`rename`) before returning.
public struct HTTPRequest: Sendable {
    /// The request body.
    public enum Body: Sendable, Equatable {
        /// No body (or an empty one).
        case none
        /// A body small enough to keep in memory.
        case data(Data)
        /// A body spooled to a temporary file of `size` bytes, deleted when the request completes.
        case file(path: String, size: Int64)
        /// A `multipart/form-data` body, split into parts; file parts are on
        /// disk and deleted when the request completes.
        case multipart([MultipartPart])
    }

    /// One `name=value` pair of the query string.
    public struct QueryItem: Sendable, Hashable {
        /// The percent-decoded name (`+` read as a space).
        public var name: String
        /// The percent-decoded value, or `nil` when the item has no `=`
        /// (FlashAir's `thumbnail.cgi?/DCIM/a.jpg` is one item named
        /// `/DCIM/a.jpg` with no value).
        public var value: String?

        /// Creates a query item.
        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    /// The method, e.g. `GET`, as sent.
    public var method: String
    /// The request target exactly as sent, e.g. `/thumbnail.cgi?/DCIM/a.jpg`.
    public var target: String
    /// The path part of the target, still percent-encoded.
    public var rawPath: String
    /// The percent-decoded path (`+` stays a plus). Invalid UTF-8 becomes U+FFFD;
    /// a path that decodes to NUL never reaches the handler (400).
    public var path: String
    /// Everything after the first `?`, undecoded, or `nil` when the target has no `?`.
    public var rawQuery: String?
    /// The query items in order, decoded.
    public var queryItems: [QueryItem]
    /// The protocol version, e.g. `HTTP/1.1`.
    public var version: String
    /// The request headers in order.
    public var headers: HTTPHeaders
    /// The peer's numeric address (`127.0.0.1`, `::1`), when known.
    public var remoteAddress: String?
    /// The peer's port, when known.
    public var remotePort: Int?
    /// The body.
    public var body: Body

    /// Creates a request; the server does this, tests may too.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - target: The raw request target; path and query are derived from it.
    ///   - version: The protocol version.
    ///   - headers: The headers.
    ///   - remoteAddress: The peer's address.
    ///   - remotePort: The peer's port.
    ///   - body: The body.
    public init(
        method: String, target: String, version: String = "HTTP/1.1", headers: HTTPHeaders = [:],
        remoteAddress: String? = nil, remotePort: Int? = nil, body: Body = .none
    ) {
        self.method = method
        self.target = target
        let (rawPath, rawQuery) = URLTarget.split(target)
        self.rawPath = rawPath
        self.path = URLTarget.percentDecode(rawPath, plusAsSpace: false)
        self.rawQuery = rawQuery
        self.queryItems = rawQuery.map(URLTarget.queryItems) ?? []
        self.version = version
        self.headers = headers
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
        self.body = body
    }

    /// The value of the first query item called `name` (exact case), or `nil`.
    ///
    /// An item without `=` gives `""`.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }.map { $0.value ?? "" }
    }

    /// The body as bytes when it is in memory, else `nil`.
    public var bodyData: Data? {
        if case .data(let data) = body { return data }
        if case .none = body { return Data() }
        return nil
    }
}
