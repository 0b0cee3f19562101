import FuzzSupport

// Content-Range values a server sends with 206 (resume decisions rest on them).
@testable import FerryKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let value = text(data, size)
    guard let range = ContentRange(value) else { return 0 }
    require(range.start >= 0 && range.start <= range.end, "start \(range.start) end \(range.end)")
    if let total = range.total { require(range.end < total, "end \(range.end) total \(total)") }
    return 0
}
