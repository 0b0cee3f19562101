import FerryKit
import FerryWeb
import Foundation

/// `ferry serve [URL] [--host 127.0.0.1] [--port N]`: the browser UI.
enum ServeCommand: Command {
    enum Keys {
        static let host = ValueOption(
            "host", help: "address to listen on", valueName: "ADDR", default: "127.0.0.1",
            note: "any other needs the printed token")
        static let port = ValueOption(
            "port", short: "p", help: "port", default: 8000, note: "0 picks a free one", in: 0...65535)
        static let cache = ValueOption(
            "cache", help: "folder for thumbnails and copies of remote files (default ~/.cache/ferry)", valueName: "DIR"
        )
        static let cacheSize = ValueOption<Int64?>(
            "cache-size",
            help:
                "most bytes each disk cache keeps, e.g. 200M (default 512M of previews, 1G of copies; or FERRY_CACHE_SIZE)",
            valueName: "SIZE", default: nil
        ) { text in
            guard let size = WebConfiguration.byteCount(text) else {
                throw UsageError(message: "--cache-size wants a size such as 500M, 2G or 1048576")
            }
            return size
        }
        static let qr = Flag(
            "qr", help: "print a QR code of the address (always on an address other than loopback)")
        static let token = ValueOption(
            "token", help: "require this access token (default: a random one when ADDR is not loopback)",
            valueName: "TEXT")
        static let importTo = ValueOption(
            "import-to",
            help:
                "folder the page's imports go to (default ~/Pictures/Ferry; same history as ferry sync); given again, more folders the page may choose among (the first is the default)",
            valueName: "DIR")
        static let insecure = Flag("insecure", short: "k", help: "do not verify TLS certificates")
    }

    static let spec = CommandSpec(
        name: "serve",
        summary: "browse a source in a web browser (folder list, image viewer, upload)",
        usage:
            "ferry serve [URL] [--host 127.0.0.1] [--port N] [--token TEXT] [--cache DIR] [--cache-size SIZE] [--import-to DIR] [--insecure]",
        options: [
            Keys.host, Keys.port, Keys.cache, Keys.cacheSize, Keys.token, Keys.qr, Keys.importTo, Keys.insecure,
            ConnectionKeys.cacert,
        ]
            + sshOptions,
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
        if let text = args.positionals.first { configuration.source = try RemoteURL(parsing: text) }
        configuration.host = try args.value(Keys.host)
        configuration.port = try args.value(Keys.port)
        configuration.cacheDirectory = args.value(Keys.cache).map { LocalPath.standardized($0) }
        if let size = try args.value(Keys.cacheSize) {
            configuration.imageCacheLimit = size
            configuration.fileCacheLimit = size
        }
        let importFolders = args.values(Keys.importTo).map { LocalPath.absolute($0) }
        configuration.importDirectory = importFolders.first
        configuration.otherImportDirectories = Array(importFolders.dropFirst())
        configuration.connectionOptions.verifyTLS = !args.has(Keys.insecure)
        configuration.connectionOptions.resolveCredentials = true
        configuration.connectionOptions.caCertificateFile = ConnectionOptions.caCertificateFile(
            given: args.value(ConnectionKeys.cacert))
        try applySSHOptions(&configuration.connectionOptions, args)
        warnIfHostKeyUnchecked(configuration.source, configuration.connectionOptions)
        if let token = args.value(Keys.token) {
            guard token.count >= 4,
                token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.~".contains($0)) })
            else { throw UsageError(message: "--token wants at least 4 letters, digits, '-', '_', '.' or '~'") }
            configuration.accessToken = token
        }
        let server = try WebServer(configuration: configuration)
        // Catch SIGINT and SIGTERM before printing the address: a script may stop
        // the server the moment it reads the line.
        let stop = StopRequest()
        defer { stop.remove() }
        do {
            try server.start()
        } catch {
            throw FerryError(
                .connectionFailed, operation: "serve", target: "\(configuration.host):\(configuration.port)",
                detail: "\(error)")
        }
        // The first line is the address to open (scripts read it); more ways in follow.
        let urls = server.openURLs
        console.out("ferry serve: open \(urls[0])\n")
        for other in urls.dropFirst() { console.out("ferry serve: or \(other)\n") }
        if !args.has(CommonOptions.quiet) {
            if configuration.accessToken != nil {
                console.error(
                    "ferry serve: listening on \(configuration.host); the URL above carries the access token.")
            }
            // A phone on the same Wi-Fi opens the page, token and all, from its camera.
            if configuration.accessToken != nil || args.has(Keys.qr), let modules = TerminalQR.modules(urls[0]) {
                console.error("ferry serve: scan with a phone to open \(urls[0]):\n" + TerminalQR.render(modules))
            }
        }
        await stop.wait()
        server.stop()
        return 0
    }
}
