import FerryCard
import FerryKit
import Foundation

/// `ferry card DIR [--host 127.0.0.1] [--port N] ...`: serve a folder as a FlashAir card.
enum CardCommand: Command {
    enum Keys {
        static let host = ValueOption("host", help: "address to listen on (default 127.0.0.1)", valueName: "ADDR")
        static let port = ValueOption("port", help: "port (default 8080; 0 picks a free one)", valueName: "N")
        static let maxConnections = ValueOption(
            "max-connections",
            help: "connections at once; more wait 2 s, then are closed (default 8; 1 is the harshest card)",
            valueName: "N")
        static let latency = ValueOption("latency", help: "delay before every answer", valueName: "MS")
        static let rate = ValueOption(
            "rate", help: "send at most this many bytes per second", valueName: "BYTES_PER_SECOND")
        static let firmware = ValueOption(
            "firmware", help: "firmware version to report; its number decides which ops exist", valueName: "VERSION")
        static let cid = ValueOption("cid", help: "card CID to report (32 hex digits)", valueName: "HEX")
        static let noUpload = Flag("no-upload", help: "act as a card with upload.cgi disabled")
        static let noRange = Flag("no-range", help: "ignore Range: always send whole files")
    }

    static let spec = CommandSpec(
        name: "card",
        summary: "serve a folder as a FlashAir card",
        usage:
            "ferry card DIR [--host 127.0.0.1] [--port N] [--max-connections N] [--latency MS] "
            + "[--rate BYTES_PER_SECOND] [--firmware VERSION] [--cid HEX] [--no-upload] [--no-range]",
        options: [
            Keys.host, Keys.port, Keys.maxConnections, Keys.latency, Keys.rate, Keys.firmware, Keys.cid, Keys.noUpload,
            Keys.noRange,
        ],
        minPositionals: 1, maxPositionals: 1,
        details: """
            Speaks the card's HTTP API: command.cgi (every op; 400 for unknown ones),
            upload.cgi (WRITEPROTECT, UPDIR, FTIME, multipart POST, DEL), thumbnail.cgi
            (the Exif thumbnail with X-exif-* headers) and plain downloads with Range.
            File dates are reported in local time, dot-files as hidden. Nothing outside
            DIR can be read, listed, written or deleted. The first line on stdout names
            the URL served; Ctrl-C stops the card.
            """)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        let folder = LocalPath.standardized(args.positionals[0])
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
            throw FerryError(.localIO, operation: "card", target: folder, detail: "no such folder")
        }
        var configuration = FlashAirCardConfiguration()
        configuration.maxConnections = try args.int(Keys.maxConnections, default: 8, in: 1...1024)
        configuration.latency = .milliseconds(try args.int(Keys.latency, default: 0, in: 0...600_000))
        if args.value(Keys.rate) != nil {
            configuration.bytesPerSecond = try args.int(Keys.rate, default: 0, in: 1...Int.max)
        }
        if let firmware = args.value(Keys.firmware) {
            guard !firmware.isEmpty, firmware.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw UsageError(message: "--firmware wants printable text without spaces, e.g. F19BAW3AW2.00.00")
            }
            configuration.firmware = firmware
        }
        if let cid = args.value(Keys.cid) {
            guard (31...32).contains(cid.count), cid.allSatisfy(\.isHexDigit) else {
                throw UsageError(message: "--cid wants 32 hex digits, not \"\(cid)\"")
            }
            configuration.cid = cid
        }
        configuration.uploadEnabled = !args.has(Keys.noUpload)
        configuration.supportsRanges = !args.has(Keys.noRange)
        let host = args.value(Keys.host) ?? "127.0.0.1"
        let port = try args.int(Keys.port, default: 8080, in: 0...65535)

        let card = try FlashAirCard(folder: folder, host: host, port: port, configuration: configuration)
        // Catch SIGINT and SIGTERM before saying where the card is: a script may
        // stop it the moment it reads the line.
        let (stop, stopNow) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let interrupt = InterruptHandler {
            stopNow.yield()
            stopNow.finish()
        }
        defer { interrupt.remove() }
        do {
            try card.start()
        } catch {
            throw FerryError(.connectionFailed, operation: "card", target: "\(host):\(port)", detail: "\(error)")
        }
        console.out("ferry card: serving \(card.folder) as a FlashAir card at \(card.httpURL) (\(card.cardURL))\n")
        if !["127.0.0.1", "::1", "localhost"].contains(host) && !args.has(CommonOptions.quiet) {
            console.error(
                "ferry card: listening on \(host): anyone who can reach it can read and change \(card.folder)")
        }
        for await _ in stop { break }
        card.stop()
        return 0
    }
}
