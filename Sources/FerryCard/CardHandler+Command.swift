import FerryKit
import FerryServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CardHandler {
    /// `GET /command.cgi?op=N&...`: every operation of docs/FLASHAIR.md; 400 for an
    /// unknown one or one this firmware version lacks.
    func command(_ request: HTTPRequest) -> HTTPResponse {
        guard let opText = request.query("op"), let op = Int(opText), configuration.hasOperation(op) else {
            return CardHandler.reply("", status: 400)
        }
        switch op {
        case 100: return list(request.query("DIR") ?? "/")
        case 101: return count(request.query("DIR") ?? "/")
        case 102:
            let changed = state.withLock { $0.changes.takeFlag(root: rootPath) }
            return CardHandler.reply(changed ? "1" : "0")
        case 104: return CardHandler.reply(ssid)
        case 105: return CardHandler.reply("")  // the network key: none to give away
        case 106: return CardHandler.reply(CardHandler.macAddress(of: request.remoteAddress ?? ""))
        case 107: return CardHandler.reply(request.headers["Accept-Language"] ?? "")
        case 108: return CardHandler.reply(configuration.firmware)
        case 109: return CardHandler.reply(configuration.controlImage)
        case 110: return CardHandler.reply("4")  // access point, chosen at power-on
        case 111: return CardHandler.reply("300000")
        case 117: return CardHandler.reply(applicationInfo)
        case 118: return CardHandler.reply(configuration.uploadEnabled ? "1" : "0")
        case 120: return CardHandler.reply(cid)
        case 121:
            let ms = state.withLock { $0.changes.lastWriteMilliseconds(root: rootPath) }
            return CardHandler.reply(String(ms))
        case 130: return readSharedMemory(request)
        case 131: return writeSharedMemory(request)
        case 140: return CardHandler.reply(capacity)
        case 200, 201:
            state.withLock { $0.photoShare = op == 200 }
            return CardHandler.reply("OK")
        case 202: return CardHandler.reply(state.withLock { $0.photoShare } ? "1" : "0")
        case 203: return CardHandler.reply(ssid)
        case 220: return CardHandler.reply(String(configuration.webDAVLevel))
        case 221: return CardHandler.reply(String(state.withLock { $0.timeZoneQuarterHours }))
        default: return CardHandler.reply("", status: 400)
        }
    }

    /// op=100. A trailing slash lists nothing, as on a real card; so does a
    /// folder that does not exist. Paths leaving the card are refused.
    func list(_ dir: String) -> HTTPResponse {
        let empty = CardHandler.reply(FlashAirListing.header + "\r\n")
        return withFolder(dir, missing: empty) { folder in
            if dir.count > 1 && dir.hasSuffix("/") { return empty }
            let cardFolder = FlashAirCardPaths.normalize(dir)
            let entries = root.entries(ofLocal: folder, cardFolder: cardFolder)
            return CardHandler.reply(FlashAirListing.render(folder: cardFolder, entries: entries))
        }
    }

    /// op=101: entries that are not hidden.
    func count(_ dir: String) -> HTTPResponse {
        withFolder(dir, missing: CardHandler.reply("0")) { folder in
            let visible = root.entries(ofLocal: folder, cardFolder: "/").filter { !$0.attributes.contains(.hidden) }
            return CardHandler.reply(String(visible.count))
        }
    }

    /// Answers with `body` for the local folder of a command's `DIR` (the root
    /// when empty): a path leaving the card is refused, a missing one answered `missing`.
    private func withFolder(
        _ dir: String, missing: @autoclosure () -> HTTPResponse, _ body: (_ folder: String) -> HTTPResponse
    ) -> HTTPResponse {
        let folder: String
        do {
            folder = try root.existing(dir.isEmpty ? "/" : dir)
        } catch .forbidden {
            return CardHandler.refused(.forbidden)
        } catch {
            return missing()
        }
        return body(folder)
    }

    /// `flashair_` and the last twelve hex digits of the CID.
    var ssid: String { "flashair_" + String(cid.suffix(12)) }

    /// Sixteen characters naming the emulator.
    var applicationInfo: String {
        let text = "ferry card \(Ferry.version)"
        return String((text + String(repeating: " ", count: 16)).prefix(16))
    }

    /// op=140 from the file system holding the folder: free/total 512-byte sectors.
    var capacity: String {
        var fs = statvfs()
        guard statvfs(rootPath, &fs) == 0 else { return "0/0,512" }
        let unit = UInt64(fs.f_frsize)
        return "\(UInt64(fs.f_bavail) * unit / 512)/\(UInt64(fs.f_blocks) * unit / 512),512"
    }

    /// A stable made-up MAC for a client address (the card reports the asker's).
    static func macAddress(of address: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in address.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        let s = String(h & 0xFFFF_FFFF_FFFF, radix: 16, uppercase: true)
        return String(repeating: "0", count: 12 - s.count) + s
    }

    /// op=130: `ADDR` and `LEN` in decimal; the bytes as text.
    func readSharedMemory(_ request: HTTPRequest) -> HTTPResponse {
        guard let (addr, len) = sharedRange(request) else { return CardHandler.reply("", status: 400) }
        let bytes = state.withLock { Array($0.sharedMemory[addr..<(addr + len)]) }
        return HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: .data(Data(bytes)))
    }

    /// op=131: writes `DATA` (at most `LEN` bytes) at `ADDR`.
    func writeSharedMemory(_ request: HTTPRequest) -> HTTPResponse {
        guard let (addr, len) = sharedRange(request), let data = request.query("DATA") else {
            return CardHandler.reply("", status: 400)
        }
        let bytes = Array(data.utf8.prefix(len))
        state.withLock { $0.sharedMemory.replaceSubrange(addr..<(addr + bytes.count), with: bytes) }
        return CardHandler.success
    }

    private func sharedRange(_ request: HTTPRequest) -> (Int, Int)? {
        guard let addr = request.query("ADDR").flatMap({ Int($0) }),
            let len = request.query("LEN").flatMap({ Int($0) }),
            // `len <= 512 - addr`, not `addr + len <= 512`: a huge ADDR plus LEN
            // overflowed and trapped, taking the whole card down.
            (0...512).contains(addr), (0...(512 - addr)).contains(len)
        else { return nil }
        return (addr, len)
    }
}

/// Card path spelling.
enum FlashAirCardPaths {
    /// `/DCIM//100__TSB` → `/DCIM/100__TSB`; `` → `/`.
    static func normalize(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        return "/" + parts.joined(separator: "/")
    }
}
