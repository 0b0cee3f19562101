// Paths the browser UI sends (`?path=`, JSON `path`/`name`), as WebPath cleans them.
import FerryKit
import FuzzSupport

@testable import FerryWeb

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = text(data, size)
    if WebPath.isValidName(input) {
        require(!input.isEmpty && !input.contains("/") && !input.contains("\\"), "bad name accepted: \(input)")
        require(input != "." && input != "..", "dot name accepted")
        require(!input.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control character")
        var decoded = input
        for _ in 0..<3 {
            guard let next = decoded.removingPercentEncoding, next != decoded else { break }
            require(next != "." && next != "..", "encoded dots accepted: \(input)")
            decoded = next
        }
    }
    guard let clean = WebPath.clean(input) else { return 0 }
    require(clean.utf8.first == UInt8(ascii: "/"), "relative: \(clean)")
    require(clean == "/" || !clean.hasSuffix("/"), "trailing slash: \(clean)")
    require(!clean.contains("//"), "empty component: \(clean)")
    for part in clean.split(separator: "/") {
        require(WebPath.isValidName(String(part)), "component \(part) of \(clean)")
    }
    require(WebPath.clean(clean) == clean, "not idempotent: \(clean)")
    let parent = WebPath.parent(clean)
    require(parent == "/" || clean.hasPrefix(parent + "/"), "parent \(parent) of \(clean)")
    require(RemotePath.join(parent, WebPath.name(clean)) == clean || clean == "/", "join/parent/name")
    return 0
}
