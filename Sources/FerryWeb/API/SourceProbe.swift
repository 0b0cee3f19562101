import FerryKit
import Foundation

/// What the connect page does with a bare host or IP (`192.168.0.1`,
/// `flashair`): it asks, in turn, whether a FlashAir card answers there
/// (its `command.cgi`), then an FTP server (anonymous), then an HTTP server,
/// and opens the first that lists its root.
enum SourceProbe {
    /// How long each kind of server gets to answer.
    static let timeout: Duration = .seconds(4)

    /// Whether `text` is a host name or address rather than a URL or a local path.
    static func isBareHost(_ text: String) -> Bool {
        guard !text.isEmpty, !text.contains("://"), !text.hasPrefix("/"), !text.hasPrefix("~"),
            !text.hasPrefix(".")
        else { return false }
        var host = Substring(text)
        if host.hasSuffix("/") { host = host.dropLast() }
        return !host.isEmpty
            && host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-.:[]".contains($0)) }
    }

    /// The URLs tried for a bare host, in order.
    static func candidates(_ text: String) -> [String] {
        var host = text
        if host.hasSuffix("/") { host.removeLast() }
        return ["flashair://\(host)/", "ftp://\(host)/", "http://\(host)/"]
    }

    /// Opens the first source that answers.
    ///
    /// - Throws: `FerryError.notAnswering` naming what was tried when none answers.
    static func open(_ text: String, options: ConnectionOptions) async throws -> WebSource {
        var reasons: [String] = []
        for candidate in candidates(text) {
            let url = try RemoteURL(parsing: candidate)
            do {
                let fs = try Ferry.fileSystem(for: url, options: options)
                _ = try await withTimeout(timeout) { try await fs.list("/") }
                return WebSource(fs: fs)
            } catch {
                let kind = url.scheme == .flashair ? "FlashAir card" : url.scheme == .ftp ? "FTP server" : "HTTP server"
                reasons.append("no \(kind) (\(FerryError.wrap(error).description))")
            }
        }
        throw FerryError(
            .notAnswering, operation: "connect", target: text,
            detail: "nothing answered as a card or server: " + reasons.joined(separator: "; ")
                + ". Check the address, or type a full URL (flashair://, ftp://, http://)")
    }

    private static func withTimeout<T: Sendable>(
        _ limit: Duration, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw FerryError(.timedOut, operation: "connect", detail: "no answer in \(limit)")
            }
            return value
        }
    }
}
