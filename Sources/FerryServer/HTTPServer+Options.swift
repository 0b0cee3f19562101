import Foundation

extension HTTPServer {
    /// Limits and behaviour of a server. The defaults suit a local web UI;
    /// the card emulator sets connection limit, latency and rate to feel like
    /// a real FlashAir card.
    public struct Options: Sendable {
        /// Most connections served at once. A connection takes one of these
        /// slots when its first request arrives and keeps it until it
        /// closes (an idle keep-alive connection keeps its slot). A
        /// connection that finds them all taken waits for one up to
        /// ``slotWait``, and is then closed without an answer. 1 emulates a
        /// FlashAir card.
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
        /// connections, a new one is accepted and closed at once
        /// (libmicrohttpd's `MHD_OPTION_CONNECTION_LIMIT`). Each open
        /// connection has its own thread.
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

        /// `MHD_OPTION_CONNECTION_LIMIT`: the hard cap on open connections,
        /// served, waiting for a slot or not yet sending.
        var connectionLimit: UInt32 {
            let (sum, overflow) = maxConnections.addingReportingOverflow(maxWaitingConnections)
            return overflow ? UInt32.max : UInt32(clamping: sum)
        }

        /// Seconds for `MHD_OPTION_CONNECTION_TIMEOUT`; 0 = never.
        var connectionTimeoutSeconds: UInt32 {
            guard let connectionTimeout else { return 0 }
            let (seconds, attoseconds) = connectionTimeout.components
            return UInt32(clamping: seconds + (attoseconds > 0 ? 1 : 0))
        }
    }
}
