import FerryErrorCode

#if canImport(Glibc)
    import Glibc
#endif

/// Why a `multipart/form-data` body could not be taken apart.
public struct MultipartError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. Compare with the static members (the extension below).
    public typealias Code = ErrorCode<MultipartError>

    /// The kind of failure.
    public var code: Code
    /// What exactly went wrong, for a person.
    public var detail: String

    /// "malformed multipart body: no closing boundary".
    public var description: String { "\(code): \(detail)" }

    static func malformed(_ detail: String) -> MultipartError { .init(code: .malformed, detail: detail) }
    static func headersTooLarge(_ limit: Int) -> MultipartError {
        .init(code: .headersTooLarge, detail: "a part's headers exceed \(limit) bytes")
    }
    static func fieldTooLarge(_ name: String?, limit: Int) -> MultipartError {
        .init(
            code: .fieldTooLarge, detail: "field \(name.map { "\"\($0)\"" } ?? "without a name") exceeds \(limit) bytes"
        )
    }
    static func tooManyParts(_ limit: Int) -> MultipartError {
        .init(code: .tooManyParts, detail: "more than \(limit) parts")
    }
    /// `.noSpace` for ENOSPC and EDQUOT, `.fileSystem` for every other `errno`.
    static func fileSystem(_ detail: String, errno code: Int32) -> MultipartError {
        .init(code: code == ENOSPC || code == EDQUOT ? .noSpace : .fileSystem, detail: detail)
    }
}

/// The codes of ``MultipartError``.
extension MultipartError.Code {
    /// The body does not follow RFC 7578 (missing boundary, truncated, ...).
    public static var malformed: Self { Self("malformed multipart body") }
    /// One part's header block exceeds ``MultipartParser/Limits/maxPartHeaderSize``.
    public static var headersTooLarge: Self { Self("part headers too large") }
    /// A non-file field exceeds ``MultipartParser/Limits/maxFieldSize``.
    public static var fieldTooLarge: Self { Self("form field too large") }
    /// More parts than ``MultipartParser/Limits/maxParts``.
    public static var tooManyParts: Self { Self("too many parts") }
    /// A temporary file could not be created or written.
    public static var fileSystem: Self { Self("temporary file error") }
    /// The temporary file's disk is full (or the quota is used up).
    public static var noSpace: Self { Self("no space left") }
}
