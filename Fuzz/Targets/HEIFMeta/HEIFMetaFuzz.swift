// HEIF files' first bytes as HEIF.scan sees them when a remote HEIC's tile is read by range.
import FerryKit
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = bytes(data, size)
    // The same bytes as the whole file, and as the first bytes of a larger one.
    for fileSize in [input.count, input.count + 1_000_000] {
        switch HEIF.scan(input, fileSize: fileSize) {
        case .found(let layout):
            require(layout.metaEnd <= input.count && layout.metaEnd <= HEIF.maxMetaLength, "meta end \(layout.metaEnd)")
            require(layout.thumbnails.count <= HEIF.maxThumbnails, "\(layout.thumbnails.count) thumbnails")
            for t in layout.thumbnails {
                require(t.width > 0 && t.height > 0 && t.item != layout.primary, "thumbnail \(t)")
                require(t.extents.count <= HEIF.maxExtents, "\(t.extents.count) extents")
                require(t.extents.reduce(0) { $0 + $1.count } <= HEIF.maxThumbnailLength, "extents \(t.extents)")
                var end = 0
                for e in t.extents {
                    require(
                        e.lowerBound >= end && e.lowerBound < e.upperBound && e.upperBound <= fileSize, "extent \(e)")
                    end = e.upperBound
                }
            }
        case .needs(let n):
            require(n > input.count && n <= min(fileSize, HEIF.maxMetaLength), "needs \(n) of \(input.count)")
        case .elsewhere, .invalid: break
        }
    }
    return 0
}
