/// Why a JPEG could not be decoded or encoded.
public struct JPEGError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. Compare with the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: String, Hashable, Sendable {
            case corrupt = "not a readable JPEG"
            case unreadable = "cannot open"
            case outOfMemory = "out of memory"
            case invalidArgument = "invalid image"
            case heif = "not a readable HEIF image"
        }
        fileprivate let base: Base
        fileprivate init(_ base: Base) { self.base = base }

        /// libjpeg rejected the data (truncated, not a JPEG, CMYK ...).
        public static let corrupt = Code(.corrupt)
        /// The file could not be opened.
        public static let unreadable = Code(.unreadable)
        /// Memory for the pixels could not be allocated.
        public static let outOfMemory = Code(.outOfMemory)
        /// An empty buffer or a nonsensical size.
        public static let invalidArgument = Code(.invalidArgument)
        /// libheif rejected a HEIC/HEIF file (truncated, not HEIF, an unsupported codec ...).
        public static let heif = Code(.heif)

        public var description: String { base.rawValue }
    }

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
