import FerryKit
import FerryWeb
import Foundation
import Synchronization

/// `ferry serve [URL] [--host 127.0.0.1] [--port N]`: the browser UI.
enum ServeCommand: Command {
    static let spec = CommandSpec(
        name: "serve",
        summary: "browse a source in a web browser (folder list, image viewer, upload)",
        usage: "ferry serve [URL] [--host 127.0.0.1] [--port N] [--token TEXT] [--cache DIR] [--insecure]",
        options: [
            .init(
                long: "host", short: nil, takesValue: true,
                help: "address to listen on (default 127.0.0.1; any other needs the printed token)", valueName: "ADDR"),
            .init(long: "port", short: "p", takesValue: true, help: "port (default 8000; 0 picks a free one)", valueName: "N"),
            .init(
                long: "cache", short: nil, takesValue: true,
                help: "folder for thumbnails and copies of remote files (default ~/.cache/ferry)", valueName: "DIR"),
            .init(
                long: "token", short: nil, takesValue: true,
                help: "require this access token (default: a random one when ADDR is not loopback)", valueName: "TEXT"),
            .init(long: "insecure", short: "k", takesValue: false, help: "do not verify TLS certificates"),
            .init(
                long: "test-delay", short: nil, takesValue: true,
                help: "(for tests) delay files whose path contains TEXT", valueName: "MS:TEXT"),
        ],
        minPositionals: 0, maxPositionals: 1,
        details: """
            Serves a folder list and image viewer for URL (a local folder, flashair://,
            ftp://, http:// ...), or a page to type one in when URL is left out. The
            first line on stdout is the address to open. On 127.0.0.1 (the default)
            only this machine can connect; on any other address the printed URL
            carries an access token, which the browser then keeps in a cookie.
            Passwords in URL stay in this process and never reach the page.
            Ctrl-C stops the server.
            """)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        var configuration = WebConfiguration()
        if let text = args.positionals.first { configuration.source = try parseURL(text) }
        configuration.host = args.value("host") ?? "127.0.0.1"
        configuration.port = try args.int("port", default: 8000, in: 0...65535)
        configuration.cacheDirectory = args.value("cache").map { ($0 as NSString).standardizingPath }
        configuration.connectionOptions.verifyTLS = !args.has("insecure")
        if let token = args.value("token") {
            guard token.count >= 4, token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.~".contains($0)) })
            else { throw UsageError(message: "--token wants at least 4 letters, digits, '-', '_', '.' or '~'") }
            configuration.accessToken = token
        }
        if let delay = args.value("test-delay") {
            configuration.fileDelay = try parseDelay(delay)
        }
        let server = try WebServer(configuration: configuration)
        do {
            try server.start()
        } catch {
            throw FerryError(
                .connectionFailed, operation: "serve", target: "\(configuration.host):\(configuration.port)",
                detail: "\(error)")
        }
        console.out("ferry serve: open \(server.openURL)\n")
        if configuration.accessToken != nil && !args.has("quiet") {
            console.error("ferry serve: listening on \(configuration.host); the URL above carries the access token")
        }
        await waitForInterrupt()
        server.stop()
        return 0
    }

    /// `MS:TEXT` (or `MS`) as a file delay.
    static func parseDelay(_ text: String) throws -> WebConfiguration.FileDelay {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let ms = Int(parts[0]), (0...600_000).contains(ms) else {
            throw UsageError(message: "--test-delay wants MS:TEXT, e.g. 2000:SLOW, not \"\(text)\"")
        }
        return .init(delay: .milliseconds(ms), pathContains: parts.count > 1 ? String(parts[1]) : "")
    }

    /// Suspends until SIGINT or SIGTERM.
    static func waitForInterrupt() async {
        let once = Atomic<Bool>(false)
        let box = Mutex<InterruptHandler?>(nil)
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let handler = InterruptHandler {
                if !once.exchange(true, ordering: .sequentiallyConsistent) { c.resume() }
            }
            box.withLock { $0 = handler }
        }
        box.withLock { $0?.remove() }
    }
}
