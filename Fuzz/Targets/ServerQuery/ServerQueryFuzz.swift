import FuzzSupport

// Request targets as FerryServer splits and decodes them: path and query string.
@testable import FerryServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let target = text(data, size)
    let request = HTTPRequest(method: "GET", target: target)
    require(request.rawPath + (request.rawQuery.map { "?" + $0 } ?? "") == target, "split lost bytes")
    if request.rawQuery == nil { require(request.queryItems.isEmpty, "items without a query") }
    for item in request.queryItems {
        _ = request.query(item.name)
    }
    _ = request.query("op")
    _ = request.query("DIR")
    // Decoding never grows the text: at most one scalar per input byte.
    require(request.path.unicodeScalars.count <= request.rawPath.utf8.count, "decode grew")
    return 0
}
