// JPEG files (their first 128 KiB) as thumbnail.cgi reads them.
import FerryKit
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = bytes(data, size)
    guard let thumbnail = EXIFThumbnail.extract(fromJPEG: input) else { return 0 }
    require(thumbnail.jpeg.count >= 4 && thumbnail.jpeg[0] == 0xFF && thumbnail.jpeg[1] == 0xD8, "not a JPEG")
    require(thumbnail.jpeg.count <= size, "thumbnail larger than the file")
    if let o = thumbnail.orientation { require((1...8).contains(o), "orientation \(o)") }
    if let w = thumbnail.width { require(w > 0, "width \(w)") }
    if let h = thumbnail.height { require(h > 0, "height \(h)") }
    // A slice (not contiguous from index 0) gives the same answer.
    let copy = Array(input)
    require(EXIFThumbnail.extract(fromJPEG: copy[...]) == thumbnail, "slice differs")
    return 0
}
