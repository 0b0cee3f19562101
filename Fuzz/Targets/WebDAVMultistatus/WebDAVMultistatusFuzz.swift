import Foundation
import FuzzSupport

// WebDAV 207 multistatus bodies (PROPFIND, DELETE) and error bodies, read with libxml2.
// Input: BODY.
@testable import FerryKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    if let reply = try? WebDAVMultistatus.parse(body) {
        for r in reply.responses {
            require(r.path.utf8.first == UInt8(ascii: "/"), "relative path \(r.path)")
            require(!r.path.contains("\0"), "NUL in path")
            require(r.size.map { $0 >= 0 } ?? true, "negative size")
            _ = r.modified?.timeIntervalSince1970
        }
    }
    _ = WebDAVMultistatus.errorText(body)
    return 0
}
