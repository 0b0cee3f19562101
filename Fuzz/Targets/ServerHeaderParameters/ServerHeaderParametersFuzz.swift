import Foundation
import FuzzSupport

// Content-Type / Content-Disposition parameters and multipart part header blocks.
@testable import FerryServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let value = text(data, size)
    let parsed = HeaderParameters(parsing: value)
    require(parsed.value == parsed.value.lowercased(), "value case")
    for (name, _) in parsed.parameters { require(!name.isEmpty, "empty parameter name") }
    if let boundary = MultipartParser.boundary(fromContentType: value) { require(!boundary.isEmpty, "empty boundary") }
    let headers = MultipartParser.parseHeaders(Array(bytes(data, size)))
    for field in headers { require(!field.name.contains("\n"), "newline in a name") }
    if let disposition = headers["Content-Disposition"] {
        let part = MultipartPart(
            headers: headers, name: nil, filename: HeaderParameters(parsing: disposition)["filename"],
            contentType: nil, content: .data(Data()))
        if let last = part.filenameLastComponent {
            require(!last.isEmpty && !last.contains("/") && !last.contains("\\"), "last component \(last)")
        }
    }
    return 0
}
