import FerryErrorCode

/// Why a JPEG could not be decoded or encoded.
public struct JPEGError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. Compare with the static members (the extension below).
    public typealias Code = ErrorCode<JPEGError>

    /// The kind of failure.
    public var code: Code
    /// The file concerned, when there is one.
    public var path: String?
    /// libjpeg's own message ("Premature end of JPEG file") or the system's reason.
    public var detail: String?

    /// Creates an error.
    public init(_ code: Code, path: String? = nil, detail: String? = nil) {
        self.code = code
        self.path = path
        self.detail = detail
    }

    /// "a.jpg: not a readable JPEG (Not a JPEG file: starts with 0x89 0x50)".
    public var description: String {
        var text = code.description
        if let path { text = "\(path): " + text }
        if let detail, !detail.isEmpty { text += " (\(detail))" }
        return text
    }
}

/// The codes of ``JPEGError``.
extension JPEGError.Code {
    /// libjpeg rejected the data (truncated, not a JPEG, CMYK ...).
    public static var corrupt: Self { Self("not a readable JPEG") }
    /// The file could not be opened.
    public static var unreadable: Self { Self("cannot open") }
    /// Memory for the pixels could not be allocated.
    public static var outOfMemory: Self { Self("out of memory") }
    /// An empty buffer or a nonsensical size.
    public static var invalidArgument: Self { Self("invalid image") }
    /// libheif rejected a HEIC/HEIF file (truncated, not HEIF, an unsupported codec ...).
    public static var heif: Self { Self("not a readable HEIF image") }
}
