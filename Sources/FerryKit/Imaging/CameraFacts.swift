import Foundation

/// The camera a photo's Exif names (IFD0's `Make` and `Model`), read from the
/// same first bytes as its ``CaptureDate``, for name templates (`{make}`, `{model}`).
public struct CameraFacts: Sendable, Hashable {
    /// The maker as the camera writes it (`Canon`, `NIKON CORPORATION`, `Apple`); nil when not recorded.
    public var make: String?
    /// The model (`Canon EOS R6`, `iPhone 15`); nil when not recorded.
    public var model: String?

    /// Facts from known values.
    public init(make: String? = nil, model: String? = nil) {
        self.make = make
        self.model = model
    }

    /// The make and model in a photo's first bytes (a JPEG or a TIFF-based raw
    /// file); nil when neither is recorded. Bounds-checked like ``CaptureDate``.
    public static func read(from bytes: some Sequence<UInt8>) -> CameraFacts? {
        guard let tiff = ExifTIFF.locate(in: Array(bytes)) else { return nil }
        var visited: Set<Int> = []
        guard let ifd0 = tiff.ifd(at: tiff.firstIFD, visited: &visited) else { return nil }
        func clean(_ s: String?) -> String? {
            guard let s else { return nil }
            let t = s.trimmingCharacters(in: .whitespacesAndNewlines.union(.controlCharacters))
            return t.isEmpty ? nil : t
        }
        let facts = CameraFacts(make: clean(tiff.text(ifd0[0x010F])), model: clean(tiff.text(ifd0[0x0110])))
        return facts.make == nil && facts.model == nil ? nil : facts
    }
}
