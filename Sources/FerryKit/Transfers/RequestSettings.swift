import Foundation

/// One line of the protocol trace: what Ferry sent, what the server answered,
/// or a note of libcurl's (connecting, TLS, which login method). Secrets are
/// already masked: FTP `PASS`, HTTP `Authorization` and `Proxy-Authorization`
/// and `Cookie` values read `****`; body bytes are never traced.
public struct TraceLine: Sendable, Hashable {
    /// Which way the line went.
    public enum Kind: String, Sendable, Hashable {
        /// A note of the transfer engine (libcurl's informational text).
        case info
        /// A command or request header Ferry sent.
        case sent
        /// A reply or response header the server sent.
        case received
    }

    /// Which way the line went.
    public var kind: Kind
    /// The line, without its line ending, secrets masked.
    public var text: String

    /// Creates a trace line.
    public init(kind: Kind, text: String) {
        self.kind = kind
        self.text = text
    }
}

/// Settings the transfer engine applies to every request of the current task
/// and of the tasks it starts (a ``Transfer``'s driver included), whatever the
/// backend: a protocol trace (`ferry -v`) and timeouts (`--connect-timeout`,
/// `--timeout`).
///
/// ```swift
/// var settings = RequestSettings()
/// settings.trace = { line in print(line.kind, line.text) }
/// settings.stallTimeout = .seconds(10)
/// try await RequestSettings.$current.withValue(settings) {
///     try await fs.list("/")
/// }
/// ```
public struct RequestSettings: Sendable {
    /// Called with every line of the protocol trace, secrets masked (``TraceLine``).
    /// Runs on the transfer engine's thread: it must return quickly.
    public var trace: (@Sendable (TraceLine) -> Void)?
    /// How long opening a connection may take (TCP, TLS), instead of each
    /// backend's own default.
    public var connectTimeout: Duration?
    /// A connection that moves no byte for this long is dead (and retried where
    /// the operation retries), instead of each backend's own default.
    public var stallTimeout: Duration?

    /// Settings that change nothing.
    public init(
        trace: (@Sendable (TraceLine) -> Void)? = nil, connectTimeout: Duration? = nil, stallTimeout: Duration? = nil
    ) {
        self.trace = trace
        self.connectTimeout = connectTimeout
        self.stallTimeout = stallTimeout
    }

    /// Whether any setting is made.
    var isEmpty: Bool { trace == nil && connectTimeout == nil && stallTimeout == nil }

    /// The settings of the current task's requests.
    @TaskLocal public static var current = RequestSettings()

    /// The lines of one piece of libcurl's debug output of `type`
    /// (`CURLINFO_TEXT`, `HEADER_IN`, `HEADER_OUT`; body and TLS bytes give none),
    /// secrets masked.
    static func lines(type: UInt32, _ bytes: UnsafeRawBufferPointer) -> [TraceLine] {
        let kind: TraceLine.Kind
        switch type {
        case 0: kind = .info
        case 1: kind = .received
        case 2: kind = .sent
        default: return []
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
            .map { TraceLine(kind: kind, text: masked(String($0))) }
    }

    /// A line with its secret masked: an FTP `PASS` argument, an `Authorization`,
    /// `Proxy-Authorization` or `Cookie` header value.
    static func masked(_ line: String) -> String {
        let lower = line.lowercased()
        if lower.hasPrefix("pass ") || lower == "pass" { return "PASS ****" }
        for header in ["authorization:", "proxy-authorization:", "cookie:"] where lower.hasPrefix(header) {
            return line.prefix(header.count) + " ****"
        }
        return line
    }
}
