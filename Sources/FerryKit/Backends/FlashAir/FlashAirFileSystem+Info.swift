import Foundation

extension FlashAirFileSystem {
    /// Asks the card about itself: firmware, SSID, CID, free and total space,
    /// upload enabled, time zone, last write, and which operations it supports.
    ///
    /// The operations in ``FlashAirInfo/probedOperations`` are asked one after
    /// another (a card wants one request at a time); a 400 marks one unsupported.
    /// When op=220 reports WebDAV on, `OPTIONS /` confirms it: a `DAV` header in
    /// the answer sets ``FlashAirInfo/webDAVURL``.
    ///
    /// - Throws: `notFound` when there is no `command.cgi` (not a FlashAir card),
    ///   `notAnswering` when the card does not answer.
    public func info() async throws(FerryError) -> FlashAirInfo {
        var info = FlashAirInfo()
        for op in FlashAirInfo.probedOperations {
            let reply = try await cgi.get("command.cgi", query: "op=\(op)", operation: "info", target: "/")
            if reply.status == 400 {
                info.unsupportedOperations.append(op)
                continue
            }
            if reply.status == 404 && info.supportedOperations.isEmpty {
                throw FerryError(
                    .notFound, operation: "info", target: shown("/"), serverCode: 404, serverText: reply.reason,
                    detail: "no command.cgi: is this a FlashAir card?")
            }
            guard reply.status == 200 else {
                info.unsupportedOperations.append(op)
                continue
            }
            info.supportedOperations.append(op)
            let text = reply.trimmedText
            switch op {
            case 104: info.ssid = text
            case 108: info.firmware = text
            case 109: info.controlImage = text.isEmpty ? nil : text
            case 110: info.wirelessMode = Int(text)
            case 111: info.wirelessTimeoutMilliseconds = Int(text)
            case 117: info.applicationInfo = text
            case 118: info.uploadEnabled = text == "1"
            case 120: info.cid = text
            case 121: info.lastWrite = FlashAirReply.lastWriteMilliseconds(text).map { .milliseconds($0) }
            case 140: info.capacity = FlashAirReply.capacity(text)
            case 220: info.webDAVLevel = Int(text)
            case 221: info.timeZoneQuarterHours = FlashAirReply.timeZoneQuarterHours(text)
            default: break
            }
        }
        if let level = info.webDAVLevel, level > 0, try await answersWebDAV() {
            var dav = url.with(path: "/")
            dav.scheme = .dav
            dav.query = nil
            info.webDAVURL = dav
        }
        return info
    }

    /// Whether the card's port answers `OPTIONS /` with a `DAV` header (RFC 4918, 10.1).
    func answersWebDAV() async throws(FerryError) -> Bool {
        let reply = try await cgi.get("", query: nil, operation: "info", target: "/", method: "OPTIONS")
        guard (200..<300).contains(reply.status), let dav = reply.headers["DAV"] else { return false }
        return dav.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "1" }
    }
}
