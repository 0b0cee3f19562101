import FerryKit
import Foundation

/// `ferry info URL [--json]`: what a FlashAir card says about itself.
enum InfoCommand: Command {
    static let spec = CommandSpec(
        name: "info", summary: "show a FlashAir card's firmware, SSID, space, CID ...",
        usage: "ferry info URL [--json]",
        options: [.init(long: "json", short: nil, takesValue: false, help: "print one JSON object")]
            + connectionOptions,
        minPositionals: 1, maxPositionals: 1,
        details: """
            Asks the card's command.cgi one operation at a time. An operation the
            firmware lacks (or its CONFIG disables) answers 400 and is listed as
            unsupported. op=102 is never asked: that would clear the change flag
            for another program polling it.
            """)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        let url = try remoteURL(args.positionals[0], for: "info")
        guard url.scheme == .flashair else {
            throw UsageError(message: "info works on FlashAir cards: flashair://HOST[:PORT]/")
        }
        guard let card = try openFileSystem(url, args) as? FlashAirFileSystem else {
            throw FerryError(.unsupportedScheme, target: url.redacted)
        }
        let info = try await card.info()
        if args.has("json") {
            console.out(try json(info, url: url) + "\n")
            return 0
        }
        var rows: [(String, String)] = [("card", url.with(path: "/").redacted)]
        if let firmware = info.firmware {
            rows.append(("firmware", firmware + (info.generation.map { " (\($0))" } ?? "")))
        }
        if let ssid = info.ssid { rows.append(("SSID", ssid)) }
        if let cid = info.cid { rows.append(("CID", cid)) }
        if let c = info.capacity {
            rows.append(("space", "\(Format.bytes(c.freeBytes)) free of \(Format.bytes(c.totalBytes))"))
        }
        if let upload = info.uploadEnabled {
            rows.append(("uploads", upload ? "enabled" : "disabled (UPLOAD=1 in CONFIG)"))
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
        if let mode = info.wirelessMode { rows.append(("Wi-Fi mode", String(mode))) }
        if let level = info.webDAVLevel { rows.append(("WebDAV", String(level))) }
        rows.append(("answers", info.supportedOperations.map { "op=\($0)" }.joined(separator: " ")))
        if !info.unsupportedOperations.isEmpty {
            rows.append(("lacks", info.unsupportedOperations.map { "op=\($0)" }.joined(separator: " ")))
        }
        console.show(rows.map { $0.0.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.1 + "\n" }.joined())
        return 0
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
            "supportedOperations": info.supportedOperations,
            "unsupportedOperations": info.unsupportedOperations,
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
