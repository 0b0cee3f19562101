import Foundation

/// `ferry card DIR --port 0 ...` run as a process by a test, with the port read
/// from the line it prints on stdout.
public final class FerryCardProcess: Sendable {
    /// The port the card listens on.
    public let port: Int
    /// The served folder.
    public let folder: String
    private let process: ServerProcess
    private let dir: TempDir

    /// Starts the card and waits (up to 20 s) for its "serving" line.
    ///
    /// - Parameters:
    ///   - folder: The folder to serve.
    ///   - arguments: Extra options (`--max-connections 1`, `--no-range` ...).
    ///   - environment: Extra environment variables (`TMPDIR` for upload spooling ...).
    public init(folder: String, arguments: [String] = [], environment: [String: String]? = nil) throws {
        dir = try TempDir(prefix: "card")
        self.folder = folder
        let log = dir.file("card.log")
        process = try ServerProcess(
            TestProcess.ferryExecutable(), ["card", folder, "--port", "0"] + arguments, logPath: log,
            environment: environment)
        let deadline = Date().addingTimeInterval(20)
        var found: Int?
        while Date() < deadline, found == nil {
            let text = process.log
            if let r = text.range(of: "at http://127.0.0.1:") {
                found = Int(text[r.upperBound...].prefix { $0.isNumber })
                break
            }
            if !process.process.isRunning { break }
            usleep(20_000)
        }
        guard let found else {
            process.stop()
            throw TestServerError.didNotStart("ferry card: " + process.log)
        }
        port = found
    }

    deinit { process.stop() }

    /// `flashair://127.0.0.1:PORT` + path.
    public func url(_ path: String = "/") -> String { "flashair://127.0.0.1:\(port)\(path)" }

    /// `ezshare://127.0.0.1:PORT` + path (a card started with `--kind ezshare`).
    public func ezShareURL(_ path: String = "/") -> String { "ezshare://127.0.0.1:\(port)\(path)" }

    /// `http://127.0.0.1:PORT` + path.
    public func httpURL(_ path: String = "/") -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The card's process id.
    public var pid: Int32 { process.process.processIdentifier }

    /// Whether the card is still running.
    public var isRunning: Bool { process.process.isRunning }

    /// What the card printed.
    public var log: String { process.log }

    /// The card process's peak resident memory so far (VmHWM), in bytes.
    public var peakResidentBytes: Int {
        let status =
            (try? String(contentsOfFile: "/proc/\(process.process.processIdentifier)/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kb = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kb * 1024
        }
        return 0
    }

    /// Stops the card.
    public func stop() { process.stop() }

    /// Sends SIGTERM and waits for the process; returns its exit status.
    public func terminate() -> Int32 {
        process.signal(SIGTERM)
        process.process.waitWithoutRunLoop()
        return process.process.terminationStatus
    }
}
