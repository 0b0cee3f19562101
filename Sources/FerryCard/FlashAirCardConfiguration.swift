import FerryKit
import Foundation

/// How `ferry card` presents itself and how much it behaves like a slow card.
public struct FlashAirCardConfiguration: Sendable, Hashable {
    /// The firmware version op=108 reports. Its trailing version number decides
    /// which operations exist, as on real cards: 109–118, 130/131 and 200–203
    /// from 2.00.00, 120 from 1.00.03, 121 from 2.00.02, 220/221 and the
    /// thumbnail's `X-exif-*` headers from 3.00.00.
    public var firmware: String = "FERRYCARD4.00.03"
    /// The CID op=120 reports; nil derives a stable one from the served folder,
    /// so each folder is its own card.
    public var cid: String?
    /// Whether upload.cgi works (op=118 says `1`); when false it answers 404.
    public var uploadEnabled = true
    /// Whether plain downloads honour `Range`; false behaves like a card that
    /// always sends the whole file.
    public var supportsRanges = true
    /// Connections, latency and rate (``CardLimits``): eight connections by
    /// default, so a browser works too.
    public var limits = CardLimits(maxConnections: 8)
    /// Most connections served at once (``CardLimits/maxConnections``); another
    /// closes the one idle the longest, or waits up to 2 s for one to close
    /// (`HTTPServer.Options.slotWait`) and is then closed without an answer. 1 is
    /// the harshest card; tfatool needs 2 (its command.cgi session plus one download).
    public var maxConnections: Int {
        get { limits.maxConnections }
        set { limits.maxConnections = newValue }
    }
    /// Delay before every answer.
    public var latency: Duration {
        get { limits.latency }
        set { limits.latency = newValue }
    }
    /// Pace of response bodies, bytes per second; nil = full speed.
    public var bytesPerSecond: Int? {
        get { limits.bytesPerSecond }
        set { limits.bytesPerSecond = newValue }
    }
    /// The card's WebDAV ("drive mode", `WEBDAV=` in CONFIG), as op=220 reports
    /// it: 0 off, 1 read-only, 2 read and write. Served on the card's own port
    /// beside command.cgi, from firmware 3.00.00 on (an older firmware has no
    /// WebDAV and answers op=220 with 400).
    public var webDAVLevel = 0
    /// The control image path op=109 reports.
    public var controlImage = "/DCIM/100__TSB/FA000001.JPG"

    /// The defaults: a W-04 card with uploads and Range, eight connections, full speed.
    public init() {}

    /// The `major.minor.patch` at the end of ``firmware``; nil when there is none.
    var version: (Int, Int, Int)? {
        let tail = String(firmware.reversed().prefix { $0.isNumber || $0 == "." }.reversed())
        let parts = tail.split(separator: ".").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        return (parts[0], parts[1], parts[2])
    }

    /// Whether this firmware has command.cgi operation `op`.
    public func hasOperation(_ op: Int) -> Bool {
        let known: Set<Int> = [
            100, 101, 102, 104, 105, 106, 107, 108, 109, 110, 111, 117, 118, 120, 121, 130, 131, 140,
            200, 201, 202, 203, 220, 221,
        ]
        guard known.contains(op) else { return false }
        guard let v = version else { return true }
        func atLeast(_ a: Int, _ b: Int, _ c: Int) -> Bool { v >= (a, b, c) }
        switch op {
        case 109...118, 130, 131, 200...203: return atLeast(2, 0, 0)
        case 120: return atLeast(1, 0, 3)
        case 121: return atLeast(2, 0, 2)
        case 220, 221: return atLeast(3, 0, 0)
        default: return true
        }
    }

    /// Whether WebDAV requests are answered: a level above 0 on a firmware with op=220.
    var servesWebDAV: Bool { webDAVLevel > 0 && hasOperation(220) }

    /// Whether thumbnails carry `X-exif-WIDTH`, `-HEIGHT` and `-ORIENTATION`.
    var sendsExifHeaders: Bool {
        guard let v = version else { return true }
        return v >= (3, 0, 0)
    }

    /// ``cid``, or 32 hex digits derived from `folder` (FNV-1a, stable across runs).
    func cid(for folder: String) -> String {
        if let cid { return cid }
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in folder.utf8 {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 &+ 0x9E37
        }
        func hex(_ v: UInt64) -> String {
            let s = String(v, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }
        // 03 'SD' like a real manufacturer/OEM prefix, then the hash.
        return ("0353" + "44" + hex(a) + hex(b)).prefix(32).lowercased()
    }
}
