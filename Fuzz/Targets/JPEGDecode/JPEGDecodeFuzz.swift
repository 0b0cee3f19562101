// Photos `ferry serve` makes thumbnails of (from a card, a server, an upload):
// libjpeg-turbo behind the CJPEG shim, with the shim's memory bounds.
import FuzzSupport

@testable import FerryWeb

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(bytes(data, size))
    guard !input.isEmpty else { return 0 }
    // 256 is what thumbnails ask for; a full-size decode (0) is not used by the server.
    for minSide in [256] {
        guard let decoded = try? JPEGCodec.decode(data: input, minSide: minSide) else { continue }
        let image = decoded.image
        require(image.width > 0 && image.height > 0, "empty image")
        require(image.pixels.count == image.width * image.height * 3, "pixel buffer size")
        require(image.width <= decoded.sourceWidth && image.height <= decoded.sourceHeight, "bigger than the source")
        require(image.width * image.height <= 50_000_000, "over the output bound")
        let small = JPEGCodec.downscale(image, maxSide: 64)
        require(small.width <= 64 && small.height <= 64, "downscale")
        _ = try? JPEGCodec.encode(small, quality: 80)
    }
    return 0
}
