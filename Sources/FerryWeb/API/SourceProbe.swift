import FerryKit
import Foundation
import Synchronization

/// What the connect page does with a bare host or IP (`192.168.0.1`,
/// `flashair`, `nas:2121`): it asks, in turn, whether a FlashAir card answers
/// there (`command.cgi?op=108`, the firmware version), then, when a web server
/// answered that, an ez Share card (`client?command=version`), then an FTP server
/// (anonymous), then a web server with a folder page at `/`, and opens the
/// first. A server that answers but cannot be opened that way (an FTP server
/// that wants a login, a web server without a folder page) is named with what
/// to type instead; a host where nothing answers is said to be so.
enum SourceProbe {
    /// How long a card or a web server gets to answer.
    static let timeout: Duration = .seconds(4)
    /// How long an FTP server gets to let an anonymous user in and list: servers greet at
    /// once (a web server on the port never does), but some wait seconds before they
    /// refuse a login (pyftpdlib: 3 s).
    static let ftpTimeout: Duration = .seconds(5)

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

    /// Whether an `op=108` answer is a FlashAir firmware version (`F19BAW3AW2.00.00`,
    /// `FERRYCARD4.00.03`): one short word ending in a version number. A web server
    /// that answers every path with a page is no card.
    static func isFirmwareVersion(_ text: String) -> Bool {
        let word = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (4...48).contains(word.count), word.contains(where: \.isLetter),
            word.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "<" })
        else { return false }
        let parts = word.reversed().split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return false }
        // The last two parts are all digits, the first ends in one: "...W2" "00" "00".
        return parts[0].allSatisfy(\.isNumber) && parts[1].allSatisfy(\.isNumber) && !parts[0].isEmpty
            && !parts[1].isEmpty && parts[2].first?.isNumber == true
    }

    /// Opens the first source that answers at `text`.
    ///
    /// - Throws: `FerryError` `notAnswering` naming what was tried when nothing answers;
    ///   `authenticationFailed` when an FTP server wants a login; `notFound` when only a
    ///   web server without a folder page at `/` answers.
    static func open(_ text: String, options: ConnectionOptions) async throws -> WebSource {
        let host = text.hasSuffix("/") ? String(text.dropLast()) : text
        var tried: [(what: String, why: String)] = []
        // 1. A FlashAir card: its command.cgi tells its firmware version.
        var webServerAnswered = false
        do {
            let answer = try await withTimeout(timeout) { try await firmwareVersion(host, options: options) }
            if isFirmwareVersion(answer) {
                return WebSource(
                    fs: try Ferry.fileSystem(for: RemoteURL(parsing: "flashair://\(host)/"), options: options))
            }
            webServerAnswered = true
            tried.append(("no FlashAir card", "command.cgi?op=108 answered no firmware version"))
        } catch {
            webServerAnswered = FerryError.wrap(error).serverCode != nil
            tried.append(("no FlashAir card", reason(error)))
        }
        // 1b. An ez Share card, asked only where a web server answered: /client names its firmware.
        if webServerAnswered {
            do {
                let answer = try await withTimeout(timeout) { try await ezShareVersion(host, options: options) }
                if isEzShareVersion(answer) {
                    return WebSource(
                        fs: try Ferry.fileSystem(for: RemoteURL(parsing: "ezshare://\(host)/"), options: options))
                }
                tried.append(("no ez Share card", "client?command=version answered no version"))
            } catch {
                tried.append(("no ez Share card", reason(error)))
            }
        }
        // 2. and 3. An FTP server (anonymous) and a web server's folder page, asked at once (a card
        // would want one question at a time, but this is no card): FTP wins when both answer.
        async let ftpAnswer = attempt("ftp://\(host)/", within: ftpTimeout, options: options)
        async let webAnswer = attempt("http://\(host)/", within: timeout, options: options)
        var ftpRefusal: FerryError?
        switch await ftpAnswer {
        case .success(let source): return source
        case .failure(let e):
            if e.code == .authenticationFailed { ftpRefusal = e }
            tried.append(("no FTP server", reason(e)))
        }
        var web: FerryError?
        switch await webAnswer {
        case .success(let source): return source
        case .failure(let e):
            if e.serverCode != nil || e.code == .badListing { web = e }
            tried.append(("no web server with a folder page", reason(e)))
        }
        if let ftpRefusal {
            throw FerryError(
                .authenticationFailed, operation: "connect", target: text, serverCode: ftpRefusal.serverCode,
                serverText: ftpRefusal.serverText,
                detail: "an FTP server answers at \(host) but does not let anonymous users in: "
                    + "type ftp://USER@\(host)/ (the password comes from FERRY_PASSWORD or ~/.netrc)")
        }
        if let web {
            throw FerryError(
                .notFound, operation: "connect", target: text, serverCode: web.serverCode, serverText: web.serverText,
                detail: "a web server answers at \(host) but shows no folder page at / "
                    + "(\(reason(web))): type the address of a folder it lists, such as http://\(host)/photos/")
        }
        // One reason said once when all three are the same (a closed port: "is the server running?").
        let reasons =
            Set(tried.map(\.why)).count == 1
            ? "\(tried[0].why)" : tried.map { "\($0.what) (\($0.why))" }.joined(separator: "; ")
        let sentence = reasons.hasSuffix("?") || reasons.hasSuffix(".") ? reasons : reasons + "."
        throw FerryError(
            .notAnswering, operation: "connect", target: text,
            detail: "nothing answered at \(host) as a FlashAir card, an FTP server or a web server; " + sentence
                + " Check the address and that this computer is on the same network (for a card: its Wi-Fi),"
                + " or type a full URL such as flashair://, ftp://, sftp://, smb://, dav:// or http://")
    }

    /// An ez Share card's answer to `client?command=version`, over plain HTTP.
    static func ezShareVersion(_ host: String, options: ConnectionOptions) async throws -> String {
        let url = try RemoteURL(parsing: "http://\(host)/client?command=version")
        let fs = try Ferry.fileSystem(for: url, options: ConnectionOptions(verifyTLS: options.verifyTLS))
        return String(decoding: try await fs.data(at: "/client", limit: 4096), as: UTF8.self)
    }

    /// Whether a `client?command=version` answer is an ez Share card's: its XML
    /// `<response><device><version>...`.
    static func isEzShareVersion(_ text: String) -> Bool {
        text.contains("<response>") && text.contains("<version>") && text.contains("</version>")
    }

    /// A card's answer to `command.cgi?op=108`, over plain HTTP.
    static func firmwareVersion(_ host: String, options: ConnectionOptions) async throws -> String {
        let url = try RemoteURL(parsing: "http://\(host)/command.cgi?op=108")
        let fs = try Ferry.fileSystem(for: url, options: ConnectionOptions(verifyTLS: options.verifyTLS))
        return String(decoding: try await fs.data(at: "/command.cgi", limit: 512), as: UTF8.self)
    }

    /// Why one kind of server did not answer, briefly (the server's own code and text where it sent one).
    private static func reason(_ error: any Error) -> String {
        let e = FerryError.wrap(error)
        if let code = e.serverCode {
            return "\(code)\(e.serverText.map { " \($0)" } ?? "")"
        }
        return e.detail ?? e.description
    }

    /// Opens `url` and lists its root, within `limit`.
    private static func attempt(
        _ url: String, within limit: Duration, options: ConnectionOptions
    ) async -> Result<WebSource, FerryError> {
        do {
            let fs = try Ferry.fileSystem(for: RemoteURL(parsing: url), options: options)
            _ = try await withTimeout(limit) { try await fs.list("/") }
            return .success(WebSource(fs: fs))
        } catch {
            return .failure(FerryError.wrap(error))
        }
    }

    /// `body`'s answer, or `timedOut` after `limit`, whichever comes first. A body that does
    /// not stop at once when cancelled (a connection attempt) is left to end on its own.
    private static func withTimeout<T: Sendable>(
        _ limit: Duration, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let race = Race<T>()
        return try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
            race.start(c)
            race.work(
                Task {
                    do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
                })
            Task {
                try? await Task.sleep(for: limit)
                race.finish(.failure(FerryError(.timedOut, operation: "connect", detail: "no answer in \(limit)")))
            }
        }
    }
}

/// The first of a body's answer and a deadline (see `SourceProbe.withTimeout`).
private final class Race<T: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<T, any Error>?, task: Task<Void, Never>?)>((nil, nil))

    func start(_ c: CheckedContinuation<T, any Error>) { state.withLock { $0.continuation = c } }

    func work(_ task: Task<Void, Never>) { state.withLock { $0.task = task } }

    /// Resumes the caller once; a late deadline cancels the body.
    func finish(_ result: Result<T, any Error>) {
        let (c, task) = state.withLock { s in
            defer { s.continuation = nil }
            return (s.continuation, s.task)
        }
        guard let c else { return }
        if case .failure = result { task?.cancel() }
        c.resume(with: result)
    }
}
