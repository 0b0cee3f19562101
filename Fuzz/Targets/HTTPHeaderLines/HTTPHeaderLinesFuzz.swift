import FuzzSupport

// Response header lines as libcurl hands them to the download engine, one by one.
@testable import FerryKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let all = bytes(data, size)
    var headers = HTTPHeaders()
    // Lines as libcurl delivers them: raw bytes ending in LF (not necessarily UTF-8).
    var start = 0
    while start < all.count {
        var end = start
        while end < all.count, all[end] != 0x0A { end += 1 }
        let line = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: all[start..<min(end + 1, all.count)]))
        headers.consume(line: line)
        start = end + 1
    }
    for field in headers.fields {
        require(
            field.name == field.name.lowercased() || field.name.unicodeScalars.contains { $0.value > 0x7F }, "name case"
        )
        require(!field.name.isEmpty, "empty name")
    }
    if let range = headers["content-range"], let parsed = ContentRange(range) {
        require(parsed.start <= parsed.end, "range order")
    }
    if let disposition = headers["Content-Disposition"] { _ = ContentDisposition.filename(disposition) }
    _ = headers.status
    _ = headers.reason
    return 0
}
