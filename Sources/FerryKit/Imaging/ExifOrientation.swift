/// How a photo's stored pixels are turned to stand upright: the Exif
/// `Orientation` tag (0x0112) of IFD0, 1...8.
///
/// Cameras and phones store a portrait shot as landscape pixels and record
/// the turn here. The values (Exif 2.3, TIFF 6.0) say where the stored image's
/// first row and first column belong:
///
/// | value | to show it upright | displayed size |
/// |---|---|---|
/// | 1 | nothing | width x height |
/// | 2 | mirror left to right | width x height |
/// | 3 | turn 180° | width x height |
/// | 4 | mirror top to bottom | width x height |
/// | 5 | mirror along the main diagonal (transpose) | height x width |
/// | 6 | turn 90° clockwise | height x width |
/// | 7 | mirror along the other diagonal (transverse) | height x width |
/// | 8 | turn 90° counter-clockwise | height x width |
///
/// A photo without the tag, or with a value outside 1...8, is shown as stored (1).
public enum ExifOrientation {
    /// The orientation of the photo whose first bytes are `bytes`: a JPEG's
    /// Exif IFD0, the IFD0 of a TIFF-based raw file, or a CR3 file's (its `CMT1` box). The first 64 KiB are
    /// enough for nearly every camera (the Exif segment comes first).
    ///
    /// - Returns: 1...8, or nil when the bytes show no Exif data or no valid tag.
    public static func read(from bytes: some Sequence<UInt8>) -> Int? {
        guard let tiff = ExifTIFF.locate(in: Array(bytes)) else { return nil }
        var visited: Set<Int> = []
        guard let ifd0 = tiff.ifd(at: tiff.firstIFD, visited: &visited),
            let value = tiff.number(ifd0[0x0112]), (1...8).contains(value)
        else { return nil }
        return value
    }

    /// Whether showing a photo upright swaps its width and height (5...8).
    public static func swapsSides(_ orientation: Int?) -> Bool {
        guard let orientation else { return false }
        return (5...8).contains(orientation)
    }

    /// The size a `width` x `height` stored image has once shown upright.
    public static func displayedSize(width: Int, height: Int, orientation: Int?) -> (width: Int, height: Int) {
        swapsSides(orientation) ? (height, width) : (width, height)
    }
}
