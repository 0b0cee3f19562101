import FuzzSupport

// Content-Disposition values: the name `ferry get` may save a download under.
@testable import FerryKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let value = text(data, size)
    guard let name = ContentDisposition.filename(value) else { return 0 }
    require(!name.isEmpty, "empty name")
    require(name != "." && name != "..", "dot name")
    require(!name.contains("/") && !name.contains("\\"), "separator in \(name)")
    require(!name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control character")
    require(ContentDisposition.safeName(name) == name, "safeName not idempotent")
    return 0
}
