import Foundation

/// A camera's own small images, read without the photo: the Exif block libgphoto2
/// hands out (`GP_FILE_TYPE_EXIF`) and the camera's preview (`GP_FILE_TYPE_PREVIEW`).
enum CameraThumbnail {
    /// The Exif block as a drivers gives it, made the start of a JPEG that
    /// ``EXIFThumbnail/extract(fromJPEG:)`` reads: libgphoto2's Directory Browse driver
    /// (libexif) gives `Exif\0\0` and the TIFF data, others the TIFF data alone or
    /// the JPEG's first bytes. Nil for bytes that are none of these.
    static func jpegPrefix(wrappingExif exif: Data) -> [UInt8]? {
        let b = [UInt8](exif)
        if b.count >= 2, b[0] == 0xFF, b[1] == 0xD8 { return b }
        var payload: [UInt8]
        if b.starts(with: Array("Exif".utf8) + [0, 0]) {
            payload = b
        } else if b.starts(with: [0x49, 0x49, 0x2A, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            payload = Array("Exif".utf8) + [0, 0] + b
        } else {
            return nil
        }
        // One APP1 segment holds at most 65,533 bytes.
        if payload.count > 0xFFFF - 2 { payload = Array(payload.prefix(0xFFFF - 2)) }
        let length = payload.count + 2
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// The thumbnail in a camera's Exif block, with the main image's orientation
    /// and size; nil when the block holds none.
    static func fromExif(_ exif: Data) -> EXIFThumbnail.Thumbnail? {
        jpegPrefix(wrappingExif: exif).flatMap { EXIFThumbnail.extract(fromJPEG: $0) }
    }

    /// The orientation an Exif block records (IFD0), for a preview that carries none.
    static func orientation(fromExif exif: Data) -> Int? {
        jpegPrefix(wrappingExif: exif).flatMap { ExifOrientation.read(from: $0) }
    }

    /// A camera's preview as a thumbnail: a JPEG (`FF D8`), shown by the photo's orientation.
    static func fromPreview(_ preview: Data, orientation: Int?) -> EXIFThumbnail.Thumbnail? {
        guard preview.count >= 4, preview.starts(with: [0xFF, 0xD8]) else { return nil }
        return EXIFThumbnail.Thumbnail(jpeg: preview, orientation: orientation)
    }
}
