import Foundation

/// One part of a `multipart/form-data` body.
public struct MultipartPart: Sendable, Equatable {
    /// Where a part's bytes are.
    public enum Content: Sendable, Equatable {
        /// A field without a filename, kept in memory.
        case data(Data)
        /// A file part, written to a temporary file of `size` bytes.
        case file(path: String, size: Int64)
    }

    /// The part's own headers (`Content-Disposition`, `Content-Type`, ...).
    public var headers: HTTPHeaders
    /// The `name` parameter of `Content-Disposition`, if any.
    public var name: String?
    /// The `filename` parameter of `Content-Disposition` exactly as the
    /// client sent it, with only `\"` and `\\` unescaped: it may be a path
    /// (`C:\dir\a.jpg`, `/home/u/a.jpg`). `filename*=` is not read (FlashAir
    /// does not read it either). `nil` for plain fields.
    public var filename: String?
    /// The part's `Content-Type`, if any.
    public var contentType: String?
    /// The bytes.
    public var content: Content

    /// Creates a part.
    public init(headers: HTTPHeaders, name: String?, filename: String?, contentType: String?, content: Content) {
        self.headers = headers
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.content = content
    }

    /// The last component of ``filename`` after any `/` or `\`, or `nil`
    /// when there is no filename or it ends in a separator.
    public var filenameLastComponent: String? {
        guard let filename else { return nil }
        let last = filename.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        let name = last.split(separator: "\\", omittingEmptySubsequences: false).last ?? ""
        return name.isEmpty ? nil : String(name)
    }

    /// The field's value as UTF-8 text, for in-memory parts.
    public var text: String? {
        if case .data(let data) = content { return String(decoding: data, as: UTF8.self) }
        return nil
    }
}
