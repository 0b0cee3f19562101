// CR3 files' first bytes as the ISO-BMFF box walker, CR3.scan and the date and orientation readers see them.
import FerryKit
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = bytes(data, size)
    var at = 0
    for box in ISOBMFF.boxes(in: input, from: 0, to: input.count) {
        require(box.offset == at && box.offset < box.payload && box.payload <= box.end, "box \(box)")
        require(box.end <= input.count, "box past the end \(box)")
        at = box.end
        if CR3.isPreviewBox(box), let jpeg = CR3.previewJPEG(in: Array(input[box.offset...]), box: box) {
            require(box.payload <= jpeg.lowerBound && jpeg.upperBound <= box.end, "preview \(jpeg) in \(box)")
        }
    }
    switch CR3.scan(input, fileSize: input.count) {
    case .found(let m):
        for range in [m.ifd0, m.exif, m.thumbnail].compactMap({ $0 }) {
            require(range.lowerBound >= 0 && range.upperBound <= input.count, "range \(range)")
        }
    case .needs(let n): require(n > input.count && n <= CR3.maxMetadataLength, "needs \(n) of \(input.count)")
    case .invalid: break
    }
    if let o = ExifOrientation.read(from: input) { require((1...8).contains(o), "orientation \(o)") }
    if let date = CaptureDate.read(from: input) {
        require((0..<1_000_000_000).contains(date.nanoseconds), "nanoseconds \(date.nanoseconds)")
    }
    return 0
}
