// Photos' first bytes (JPEG or TIFF-based raw) as CaptureDate and ExifOrientation read them.
import FerryKit
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = bytes(data, size)
    if let o = ExifOrientation.read(from: input) { require((1...8).contains(o), "orientation \(o)") }
    guard let date = CaptureDate.read(from: input) else { return 0 }
    require(date.local.zone == .floating, "local time not floating")
    require((0..<1_000_000_000).contains(date.nanoseconds), "nanoseconds \(date.nanoseconds)")
    if let offset = date.utcOffsetSeconds { require(abs(offset) <= 18 * 3600, "offset \(offset)") }
    require(date.timestamp.zone == (date.utcOffsetSeconds == nil ? .floating : .utc), "timestamp zone")
    // The text form parses back to the same local time.
    require(RemoteTimestamp(iso8601: date.local.iso8601) == date.local, "round trip \(date)")
    _ = date.description
    return 0
}
