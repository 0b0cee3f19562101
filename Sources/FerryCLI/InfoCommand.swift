import FerryKit
import Foundation

/// `ferry info URL [--json]`: what a FlashAir card says about itself.
enum InfoCommand: Command {
    static let json = Flag("json", help: "print one JSON object")
    static let spec = CommandSpec(
        name: "info", summary: "show a Wi-Fi SD card's firmware, SSID, space, CID ...",
        usage: "ferry info URL [--json]",
        options: [json] + connectionOptions,
        minPositionals: 1, maxPositionals: 1,
        details: """
            Asks a FlashAir card's command.cgi one operation at a time. An operation
            the firmware lacks (or its CONFIG disables) answers 400 and is listed as
            unsupported. op=102 is never asked: that would clear the change flag
            for another program polling it. When op=220 says WebDAV is on (drive
            mode, WEBDAV=1 or 2), OPTIONS / confirms it and the dav:// URL is shown.
            An ez Share card (ezshare://) tells its
            firmware (/client?command=version) and nothing more.
            """)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        var url = try remoteURL(args.positionals[0], for: "info")
        // A card is an HTTP server: `info http://HOST/` asks it as a card.
        if url.scheme == .http {
            url.scheme = .flashair
            url.query = nil
        }
        guard url.scheme == .flashair || url.scheme == .ezshare else {
            throw UsageError(
                message: "info works on Wi-Fi SD cards: flashair://HOST[:PORT]/ or ezshare://HOST[:PORT]/")
        }
        // Card info is a capability of the protocol; no cast to the card's backend.
        let card = try openFileSystem(url, args)
        let info: FlashAirInfo
        do {
            info = try await card.info()
        } catch {
            // A host without command.cgi answers 404: it is no card.
            throw error.code == .notFound && error.serverCode == 404 && url.scheme == .flashair
                ? notACardError(url) : error
        }
        if args.has(json) {
            console.out(try json(info, url: url) + "\n")
            return 0
        }
        var rows: [(String, String)] = [("card", url.with(path: "/").redacted)]
        if url.scheme == .ezshare { rows.append(("kind", "ez Share (read-only over Wi-Fi)")) }
        if let firmware = info.firmware {
            rows.append(("firmware", firmware + (info.generation.map { " (\($0))" } ?? "")))
        }
        if let ssid = info.ssid { rows.append(("SSID", ssid)) }
        if let cid = info.cid { rows.append(("CID", cid)) }
        if let c = info.capacity {
            rows.append(("space", "\(Format.bytes(c.freeBytes)) free of \(Format.bytes(c.totalBytes))"))
        }
        if let upload = info.uploadEnabled {
            rows.append(("upload", upload ? "enabled" : "disabled (UPLOAD=1 in CONFIG enables it)"))
        }
        if let q = info.timeZoneQuarterHours {
            let minutes = abs(q) * 15
            rows.append(
                ("time zone", String(format: "UTC%@%02d:%02d (%d)", q < 0 ? "-" : "+", minutes / 60, minutes % 60, q)))
        }
        if let last = info.lastWrite {
            let ms = last / .milliseconds(1)
            rows.append(("last write", ms == 0 ? "none since boot" : String(format: "%.3f s after boot", ms / 1000)))
        }
        if let image = info.controlImage { rows.append(("control", image)) }
        if let mode = info.wirelessMode { rows.append(("Wi-Fi", wirelessMode(mode))) }
        if let level = info.webDAVLevel { rows.append(("WebDAV", webDAV(level, url: info.webDAVURL))) }
        if !info.unsupportedOperations.isEmpty {
            rows.append(
                (
                    "lacks",
                    "\(info.unsupportedOperations.count) of \(FlashAirInfo.probedOperations.count) operations (--json lists them)"
                ))
        }
        console.show(
            rows.map { ($0.0 + ":").padding(toLength: 13, withPad: " ", startingAt: 0) + $0.1 + "\n" }.joined())
        return 0
    }

    /// "HOST is not a FlashAir card (no command.cgi)".
    static func notACardError(_ url: RemoteURL) -> FerryError {
        FerryError(
            .notFound, operation: "info", target: url.with(path: "/").redacted,
            serverText: "\(url.host) is not a FlashAir card (no command.cgi)")
    }

    /// op=110 in words: 0/2/3 chosen by an app, 4/5/6 at power-on.
    static func wirelessMode(_ mode: Int) -> String {
        guard (0...6).contains(mode) else { return "mode \(mode)" }
        let name: String
        switch mode % 4 == 0 ? 0 : mode > 3 ? mode - 3 : mode {
        case 0: name = "access point"
        case 2: name = "station (joins a network)"
        case 3: name = "Internet pass-through"
        default: return "mode \(mode)"
        }
        return mode >= 4 ? name + ", from power-on" : name
    }

    /// op=220 in words, with the URL when the card's port answered as WebDAV.
    static func webDAV(_ level: Int, url: RemoteURL?) -> String {
        let words =
            switch level {
            case 0: "off"
            case 1: "read-only"
            case 2: "read and write"
            default: "level \(level)"
            }
        guard level > 0 else { return words }
        guard let url else { return words + " in CONFIG, but the card does not answer WebDAV (OPTIONS /)" }
        return words + " at " + url.redacted
    }

    /// One JSON object; fields a card did not report are `null`.
    static func json(_ info: FlashAirInfo, url: RemoteURL) throws -> String {
        func value<T>(_ v: T?) -> Any { v.map { $0 as Any } ?? NSNull() }
        let object: [String: Any] = [
            "url": url.with(path: "/").redacted,
            "firmware": value(info.firmware),
            "generation": value(info.generation),
            "ssid": value(info.ssid),
            "cid": value(info.cid),
            "freeBytes": value(info.capacity?.freeBytes),
            "totalBytes": value(info.capacity?.totalBytes),
            "sectorSize": value(info.capacity?.sectorSize),
            "uploadEnabled": value(info.uploadEnabled),
            "timeZoneQuarterHours": value(info.timeZoneQuarterHours),
            "lastWriteMilliseconds": value(info.lastWrite.map { Int64($0 / .milliseconds(1)) }),
            "controlImage": value(info.controlImage),
            "wirelessMode": value(info.wirelessMode),
            "webDAVLevel": value(info.webDAVLevel),
            "webDAVURL": value(info.webDAVURL?.redacted),
            "webDAVReadOnly": value(info.webDAVReadOnly),
            "supportedOperations": info.supportedOperations,
            "unsupportedOperations": info.unsupportedOperations,
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
