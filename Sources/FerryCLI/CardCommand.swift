import FerryCard
import FerryKit
import Foundation

/// `ferry card DIR [--kind flashair|ezshare] [--host 127.0.0.1] [--port N] ...`:
/// serve a folder as a FlashAir or an ez Share card.
enum CardCommand: Command {
    enum Keys {
        static let kind = ValueOption(
            "kind", help: "the card to act as", valueName: "KIND", choices: ["flashair", "ezshare"],
            default: "flashair", note: "ezshare is read-only")
        static let host = ValueOption("host", help: "address to listen on", valueName: "ADDR", default: "127.0.0.1")
        static let port = ValueOption("port", help: "port", default: 8080, note: "0 picks a free one", in: 0...65535)
        /// The default depends on --kind: said in the help, applied by ``cardLimits``.
        static let maxConnections = ValueOption<Int?>(
            "max-connections",
            help:
                "connections at once; more wait 2 s, then are closed (default 8 for flashair, 1 for ezshare)",
            in: 1...1024)
        static let latency = ValueOption<Int?>(
            "latency", help: "delay before every answer", valueName: "MS", in: 0...600_000)
        static let rate = ValueOption<Int?>(
            "rate", help: "send at most this many bytes per second", valueName: "BYTES_PER_SECOND", in: 1...Int.max)
        static let firmware = ValueOption(
            "firmware", help: "firmware version to report; its number decides which ops exist", valueName: "VERSION")
        static let cid = ValueOption("cid", help: "card CID to report (32 hex digits)", valueName: "HEX")
        static let noUpload = Flag("no-upload", help: "act as a card with upload.cgi disabled")
        static let noRange = Flag("no-range", help: "ignore Range: always send whole files")
        static let webDAV = ValueOption<Int?>(
            "webdav",
            help:
                "offer WebDAV on the card's port as drive mode does: 1 read-only, 2 read and write (firmware 3.00 on)",
            valueName: "LEVEL", in: 0...2)
        static let keepIdle = Flag(
            "keep-idle-connections",
            help: "an idle connection keeps its slot, as on a real card (default: closed for a newcomer)")
    }

    static let spec = CommandSpec(
        name: "card",
        summary: "serve a folder as a FlashAir or ez Share card",
        usage:
            "ferry card DIR [--kind flashair|ezshare] [--host 127.0.0.1] [--port N] [--max-connections N] [--latency MS] "
            + "[--rate BYTES_PER_SECOND] [--firmware VERSION] [--cid HEX] [--no-upload] [--no-range] "
            + "[--webdav LEVEL] [--keep-idle-connections]",
        options: [
            Keys.kind, Keys.host, Keys.port, Keys.maxConnections, Keys.latency, Keys.rate, Keys.firmware, Keys.cid,
            Keys.noUpload,
            Keys.noRange, Keys.webDAV, Keys.keepIdle,
        ],
        minPositionals: 1, maxPositionals: 1,
        details: """
            Speaks the card's HTTP API: command.cgi (every op; 400 for unknown ones),
            upload.cgi (WRITEPROTECT, UPDIR, FTIME, multipart POST, DEL), thumbnail.cgi
            (the Exif thumbnail with X-exif-* headers) and plain downloads with Range.
            File dates are reported in local time, dot-files as hidden. Nothing outside
            DIR can be read, listed, written or deleted. The first line on stdout names
            the URL served; Ctrl-C stops the card.

            --webdav 1 or 2 acts as a W-03/W-04 in drive mode: op=220 reports the
            level and the card's port answers WebDAV too (OPTIONS, PROPFIND with
            Depth 0 or 1, GET; with 2 also PUT, MKCOL, DELETE and MOVE), so the
            folder is reachable as dav://HOST:PORT/ as well as flashair://.

            --kind ezshare serves DIR as an ez Share card: /dir?dir=A:%5CDCIM pages in
            GB2312 with 8.3 aliases in the links, unpadded dates, sizes in KB, . and ..,
            the totals; /download?file=... with Range, ETag and Last-Modified;
            /client?command=version. Absolute file links name the address the card
            was reached at (the Host header). Read-only, one connection by default;
            --cid, --no-upload and --no-range are FlashAir's.
            """)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        let folder = LocalPath.standardized(args.positionals[0])
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
            throw FerryError(.localIO, operation: "card", target: folder, detail: "no such folder")
        }
        let kind = try args.value(Keys.kind)
        guard kind == "flashair" || kind == "ezshare" else {
            throw UsageError(message: "--kind is flashair or ezshare, not \"\(kind)\"")
        }
        let ezShare = kind == "ezshare"
        let limits = try cardLimits(args, defaultConnections: ezShare ? 1 : 8)
        let firmware = try args.value(Keys.firmware).map(checkedFirmware)
        let host = try args.value(Keys.host)
        let port = try args.value(Keys.port)

        let server: any ServedCard
        if ezShare {
            let flashAirOnly = [
                (Keys.cid.option.long, args.value(Keys.cid) != nil),
                (Keys.noUpload.option.long, args.has(Keys.noUpload)),
                (Keys.noRange.option.long, args.has(Keys.noRange)),
                (Keys.webDAV.option.long, try args.value(Keys.webDAV) != nil),
            ]
            if let (name, _) = flashAirOnly.first(where: { $0.1 }) {
                throw UsageError(message: "--\(name) is for --kind flashair; an ez Share card is read-only")
            }
            var configuration = EzShareCard.Configuration()
            configuration.limits = limits
            if let firmware { configuration.firmware = firmware }
            server = try EzShareCard(folder: folder, host: host, port: port, configuration: configuration)
        } else {
            var configuration = FlashAirCardConfiguration()
            configuration.limits = limits
            if let firmware { configuration.firmware = firmware }
            if let cid = args.value(Keys.cid) {
                guard (31...32).contains(cid.count), cid.allSatisfy(\.isHexDigit) else {
                    throw UsageError(message: "--cid wants 32 hex digits, not \"\(cid)\"")
                }
                configuration.cid = cid
            }
            configuration.uploadEnabled = !args.has(Keys.noUpload)
            configuration.supportsRanges = !args.has(Keys.noRange)
            if let level = try args.value(Keys.webDAV) {
                configuration.webDAVLevel = level
                guard level == 0 || configuration.hasOperation(220) else {
                    throw UsageError(
                        message:
                            "--webdav needs firmware 3.00.00 or later (drive mode came with W-03), not \(configuration.firmware)"
                    )
                }
            }
            server = try FlashAirCard(folder: folder, host: host, port: port, configuration: configuration)
        }
        // Catch SIGINT and SIGTERM before saying where the card is: a script may
        // stop it the moment it reads the line.
        let (stop, stopNow) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let interrupt = InterruptHandler {
            stopNow.yield()
            stopNow.finish()
        }
        defer { interrupt.remove() }
        do {
            try server.start()
        } catch {
            throw FerryError(.connectionFailed, operation: "card", target: "\(host):\(port)", detail: "\(error)")
        }
        let name = ezShare ? "an ez Share card" : "a FlashAir card"
        console.out("ferry card: serving \(server.folder) as \(name) at \(server.httpURL) (\(server.cardURL))\n")
        if !["127.0.0.1", "::1", "localhost"].contains(host) && !args.has(CommonOptions.quiet) {
            let what = ezShare ? "read" : "read and change"
            console.error("ferry card: listening on \(host): anyone who can reach it can \(what) \(server.folder)")
        }
        for await _ in stop { break }
        server.stop()
        return 0
    }

    /// --max-connections, --latency and --rate, the same for every kind of card.
    static func cardLimits(_ args: ParsedArguments, defaultConnections: Int) throws -> CardLimits {
        var limits = CardLimits(maxConnections: try args.value(Keys.maxConnections) ?? defaultConnections)
        limits.latency = .milliseconds(try args.value(Keys.latency) ?? 0)
        if let rate = try args.value(Keys.rate) { limits.bytesPerSecond = rate }
        limits.keepsIdleConnections = args.has(Keys.keepIdle)
        return limits
    }

    static func checkedFirmware(_ firmware: String) throws -> String {
        guard !firmware.isEmpty, firmware.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw UsageError(message: "--firmware wants printable ASCII, e.g. F19BAW3AW2.00.00")
        }
        return firmware
    }
}

/// What `ferry card` starts and stops, whatever the kind.
protocol ServedCard: Sendable {
    var folder: String { get }
    var httpURL: String { get }
    var cardURL: String { get }
    func start() throws
    func stop()
}

extension FlashAirCard: ServedCard {}
extension EzShareCard: ServedCard {}
