import FerryServer
import Foundation

/// How slow and narrow an emulated card is, for every kind `ferry card` serves
/// (FlashAir, ez Share): connections at once, a delay before every answer, a
/// byte rate. One place turns them into the server's options.
public struct CardLimits: Sendable, Hashable {
    /// Most connections served at once; another waits up to 2 s for one to
    /// close (`HTTPServer.Options.slotWait`) and is then closed without an answer.
    public var maxConnections: Int
    /// Delay before every answer.
    public var latency: Duration = .zero
    /// Pace of response bodies, bytes per second; nil = full speed.
    public var bytesPerSecond: Int?
    /// Whether an idle keep-alive connection keeps its slot however long it
    /// idles, as a real card's does: another client is then refused while one
    /// idles. False (the default) closes the idle one for a newcomer
    /// (`HTTPServer.Options.shedsIdleConnections`).
    public var keepsIdleConnections = false

    /// Limits with `maxConnections` connections, no latency, full speed.
    public init(maxConnections: Int, latency: Duration = .zero, bytesPerSecond: Int? = nil) {
        self.maxConnections = maxConnections
        self.latency = latency
        self.bytesPerSecond = bytesPerSecond
    }

    /// The server options these limits give.
    var serverOptions: HTTPServer.Options {
        var options = HTTPServer.Options()
        options.maxConnections = maxConnections
        options.latency = latency
        options.bytesPerSecond = bytesPerSecond
        options.shedsIdleConnections = !keepsIdleConnections
        return options
    }
}
