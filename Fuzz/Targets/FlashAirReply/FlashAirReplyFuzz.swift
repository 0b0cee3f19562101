// The short command.cgi replies (op=101, 102, 121, 140, 221) and upload.cgi's FTIME.
import FerryKit
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let body = text(data, size)
    if let c = FlashAirReply.capacity(body) {
        require(c.freeSectors >= 0 && c.totalSectors >= 0 && c.sectorSize > 0, "capacity \(c)")
        _ = c.freeBytes
        _ = c.totalBytes
    }
    if let n = FlashAirReply.fileCount(body) { require(n >= 0, "negative count") }
    _ = FlashAirReply.updated(body)
    if let ms = FlashAirReply.lastWriteMilliseconds(body) { require(ms >= 0, "negative ms") }
    if let q = FlashAirReply.timeZoneQuarterHours(body) { require((-56...56).contains(q), "zone \(q)") }
    _ = FlashAirReply.timeZone(body)
    if let t = FATDateTime(ftime: body) {
        _ = t.timestamp?.iso8601
        require(FATDateTime(ftime: t.ftime) == t, "FTIME round trip")
    }
    return 0
}
