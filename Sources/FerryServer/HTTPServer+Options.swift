import Foundation

extension HTTPServer {
    /// Limits and behaviour of a server. The defaults suit a local web UI;
    /// the card emulator sets connection limit, latency and rate to feel like
    /// a real FlashAir card.
    public struct Options: Sendable {
        /// Most connections served at once. A connection takes one of these
        /// slots when its first request arrives and keeps it until it
        /// closes (an idle keep-alive connection keeps its slot until another
        /// connection needs it, see ``shedsIdleConnections``). A connection
        /// that finds them all taken waits for one up to ``slotWait``, and is
        /// then closed without an answer. 1 emulates a FlashAir card.
        public var maxConnections: Int
        /// How long a connection beyond ``maxConnections`` waits for a slot
        /// before it is closed without an answer; `.zero` closes it at once.
        /// Long enough for a client that closes one connection and opens
        /// the next to get in, since the closed one is only counted out once
        /// the server has cleaned it up.
        public var slotWait: Duration
        /// How many connections may be open beyond ``maxConnections``:
        /// those waiting for a slot and those that have not sent a request
        /// yet. Past `maxConnections + maxWaitingConnections` open
        /// connections, the one that has waited longest for its request head
        /// is closed to make room for a new one (see
        /// ``shedsIdleConnections``), or, when none only waits, the new one is
        /// closed at once. Each open connection has its own thread.
        public var maxWaitingConnections: Int
        /// Most simultaneous connections from one IP address, waiting ones
        /// included; more are accepted and closed at once; 0 = no limit.
        public var maxConnectionsPerIP: Int
        /// A connection idle for this long is closed; rounded up to whole
        /// seconds; `nil` = never. Time spent in the handler does not count.
        public var connectionTimeout: Duration?
        /// The most time a connection gets to deliver a whole request head
        /// (request line and headers), counted from when it opened or its last
        /// response went out; then it is closed. The idle timeout alone lets a
        /// client that sends one byte every few seconds (slowloris) keep its
        /// connection and thread for ever. `nil` = no deadline.
        public var headerDeadline: Duration?
        /// Whether the server makes room when it is crowded by closing connections
        /// that only wait (idle keep-alive, request heads that trickle in), so
        /// that a new client is answered while others hold connections open:
        /// - a connection that finds every slot taken first closes the one
        ///   idle the longest (untrusted ones first, see ``isTrusted``);
        /// - with most connections or slots taken ("crowded"), an idle
        ///   keep-alive connection goes after ``crowdedIdleTimeout`` and one
        ///   that has not delivered a whole request head after
        ///   ``crowdedHeaderDeadline``;
        /// - near `maxConnections + maxWaitingConnections` open connections,
        ///   the longest-waiting of those go, so that libmicrohttpd's own limit
        ///   never turns a newcomer away.
        /// Connections reading a body or being answered are never closed for room.
        /// `false` keeps waiting connections until their timeouts.
        public var shedsIdleConnections = true
        /// How long an idle keep-alive connection may keep a slot while the
        /// server is crowded (trusted ones: four times as long).
        public var crowdedIdleTimeout: Duration = .seconds(1)
        /// The most time for a whole request head while the server is crowded.
        public var crowdedHeaderDeadline: Duration = .seconds(3)
        /// Once the first byte of a request has arrived, the most time until its
        /// request line is complete; then the connection gets 400 and is closed.
        /// (libmicrohttpd skips a line that starts with NUL as if it were empty
        /// and would wait for the idle timeout.) `nil` = no such deadline.
        public var requestLineDeadline: Duration? = .seconds(1)
        /// Slots that only trusted connections (see ``isTrusted``) may take.
        public var reservedSlots = 0
        /// Decides from a request's head (its body has not arrived) whether the
        /// client has proved who it is, such as with an access token. A
        /// connection that sent one trusted request stays trusted; trusted
        /// connections may use the ``reservedSlots`` and are the last to be
        /// closed for room. `nil`: every connection counts as trusted.
        public var isTrusted: (@Sendable (HTTPRequest) -> Bool)?
        /// Largest request line plus headers, in bytes; larger requests get 431.
        public var maxHeaderSize: Int
        /// Largest request body, in bytes; larger ones get 413.
        public var maxBodySize: Int64
        /// Bodies up to this size with a `Content-Length` are kept in memory;
        /// larger or chunked ones go to a temporary file.
        public var memoryBodyLimit: Int
        /// Limits for `multipart/form-data` bodies, which are split on arrival.
        public var multipartLimits: MultipartParser.Limits
        /// Where uploads are spooled. Put it on the file system where uploads
        /// end up, so a handler can `rename` them into place.
        public var temporaryDirectory: String
        /// An artificial delay before every response, to emulate a slow card:
        /// the response goes out this long after the request was complete,
        /// or when the handler returns if that takes longer.
        public var latency: Duration
        /// Response bodies are paced to this many bytes per second per
        /// response; `nil` = full speed (files then go through `sendfile`).
        public var bytesPerSecond: Int?
        /// Receives diagnostics, one line each: libmicrohttpd's ("Server
        /// reached connection limit ...") and the connections closed after
        /// ``slotWait``. `nil` discards them.
        public var logger: (@Sendable (String) -> Void)?

        /// Creates options.
        ///
        /// - Parameters:
        ///   - maxConnections: Most connections served at once.
        ///   - slotWait: How long a connection beyond `maxConnections` waits.
        ///   - maxWaitingConnections: Open connections allowed beyond `maxConnections`.
        ///   - maxConnectionsPerIP: Most connections from one address; 0 = no limit.
        ///   - connectionTimeout: Idle timeout; `nil` = never.
        ///   - headerDeadline: Most time for a whole request head; `nil` = none.
        ///   - maxHeaderSize: Largest request line plus headers.
        ///   - maxBodySize: Largest request body.
        ///   - memoryBodyLimit: Largest body kept in memory.
        ///   - multipartLimits: Limits for form uploads.
        ///   - temporaryDirectory: Where uploads are spooled.
        ///   - latency: Delay before every response.
        ///   - bytesPerSecond: Pace of response bodies; `nil` = full speed.
        ///   - logger: Receives diagnostics.
        public init(
            maxConnections: Int = 64,
            slotWait: Duration = .seconds(2),
            maxWaitingConnections: Int = 16,
            maxConnectionsPerIP: Int = 0,
            connectionTimeout: Duration? = .seconds(30),
            headerDeadline: Duration? = .seconds(60),
            maxHeaderSize: Int = 16 * 1024,
            maxBodySize: Int64 = 4 << 30,
            memoryBodyLimit: Int = 1 << 20,
            multipartLimits: MultipartParser.Limits = MultipartParser.Limits(),
            temporaryDirectory: String = NSTemporaryDirectory(),
            latency: Duration = .zero,
            bytesPerSecond: Int? = nil,
            logger: (@Sendable (String) -> Void)? = nil
        ) {
            self.maxConnections = maxConnections
            self.slotWait = slotWait
            self.maxWaitingConnections = maxWaitingConnections
            self.maxConnectionsPerIP = maxConnectionsPerIP
            self.connectionTimeout = connectionTimeout
            self.headerDeadline = headerDeadline
            self.maxHeaderSize = maxHeaderSize
            self.maxBodySize = maxBodySize
            self.memoryBodyLimit = memoryBodyLimit
            self.multipartLimits = multipartLimits
            self.temporaryDirectory = temporaryDirectory
            self.latency = latency
            self.bytesPerSecond = bytesPerSecond
            self.logger = logger
        }

        func validate() throws(HTTPServerError) {
            guard maxConnections >= 1 else { throw .invalidOptions("maxConnections must be at least 1") }
            guard slotWait >= .zero else { throw .invalidOptions("slotWait must not be negative") }
            guard maxWaitingConnections >= 0 else { throw .invalidOptions("maxWaitingConnections must be 0 or more") }
            guard maxConnectionsPerIP >= 0 else { throw .invalidOptions("maxConnectionsPerIP must be 0 or more") }
            guard maxHeaderSize >= 256 else { throw .invalidOptions("maxHeaderSize must be at least 256") }
            guard maxBodySize >= 0, memoryBodyLimit >= 0 else { throw .invalidOptions("body limits must be 0 or more") }
            guard latency >= .zero else { throw .invalidOptions("latency must not be negative") }
            if let bytesPerSecond, bytesPerSecond < 1 { throw .invalidOptions("bytesPerSecond must be at least 1") }
            if let connectionTimeout, connectionTimeout <= .zero {
                throw .invalidOptions("connectionTimeout must be positive (nil = never)")
            }
            guard reservedSlots >= 0, reservedSlots < maxConnections else {
                throw .invalidOptions("reservedSlots must be 0 or more and fewer than maxConnections")
            }
            guard crowdedIdleTimeout > .zero, crowdedHeaderDeadline > .zero else {
                throw .invalidOptions("crowdedIdleTimeout and crowdedHeaderDeadline must be positive")
            }
            if let requestLineDeadline, requestLineDeadline <= .zero {
                throw .invalidOptions("requestLineDeadline must be positive (nil = none)")
            }
            if let headerDeadline, headerDeadline <= .zero {
                throw .invalidOptions("headerDeadline must be positive (nil = none)")
            }
        }

        /// The per-connection memory pool for libmicrohttpd: it holds the
        /// request line, the headers and the read buffer, and its exhaustion
        /// is how libmicrohttpd itself refuses oversized headers. Twice the
        /// header limit leaves room for the read buffer; the exact header
        /// limit is checked again in Swift.
        var connectionMemoryLimit: Int {
            max(32 * 1024, maxHeaderSize * 2 + 8 * 1024)
        }

        /// The cap on open connections: served, waiting for a slot or not yet sending.
        var connectionLimit: UInt32 {
            let (sum, overflow) = maxConnections.addingReportingOverflow(maxWaitingConnections)
            return overflow ? UInt32.max : UInt32(clamping: sum)
        }

        /// `MHD_OPTION_CONNECTION_LIMIT`. When the server sheds waiting
        /// connections, libmicrohttpd accepts an eighth more than
        /// ``connectionLimit``, so that a newcomer past the cap is seen: the
        /// longest-waiting connection then goes in its place (or, when none
        /// only waits, the newcomer).
        var acceptLimit: UInt32 {
            guard shedsIdleConnections else { return connectionLimit }
            let (sum, overflow) = connectionLimit.addingReportingOverflow(max(2, connectionLimit / 8))
            return overflow ? UInt32.max : sum
        }

        /// Seconds for `MHD_OPTION_CONNECTION_TIMEOUT`; 0 = never.
        var connectionTimeoutSeconds: UInt32 {
            guard let connectionTimeout else { return 0 }
            let (seconds, attoseconds) = connectionTimeout.components
            return UInt32(clamping: seconds + (attoseconds > 0 ? 1 : 0))
        }
    }
}
