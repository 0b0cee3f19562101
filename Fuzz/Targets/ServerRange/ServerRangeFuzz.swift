import FuzzSupport

// Range and If-Range request headers against files of a few sizes.
@testable import FerryServer

let sizes: [Int64] = [0, 1, 2, 100, 1 << 40, Int64.max]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let value = text(data, size)
    for fileSize in sizes {
        switch ByteRange.decide(range: value, size: fileSize) {
        case .full, .unsatisfiable: break
        case .partial(let lower, let upper):
            require(0 <= lower && lower <= upper && upper < fileSize, "\(lower)-\(upper) of \(fileSize)")
            let (length, overflow) = (upper - lower).addingReportingOverflow(1)
            require(!overflow && length <= fileSize, "length")
        }
    }
    _ = ByteRange.ifRangeMatches(value, etag: "\"1-2-3\"", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT")
    _ = value.trimmingSpaces()
    return 0
}
