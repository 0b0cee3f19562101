#if canImport(Glibc)
    import Glibc
#endif

/// Why a `multipart/form-data` body could not be taken apart.
public struct MultipartError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. Compare with the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: String, Hashable, Sendable {
            case malformed = "malformed multipart body"
            case headersTooLarge = "part headers too large"
            case fieldTooLarge = "form field too large"
            case tooManyParts = "too many parts"
            case fileSystem = "temporary file error"
            case noSpace = "no space left"
        }
        fileprivate let base: Base
        fileprivate init(_ base: Base) { self.base = base }

        /// The body does not follow RFC 7578 (missing boundary, truncated, ...).
        public static let malformed = Code(.malformed)
        /// One part's header block exceeds ``MultipartParser/Limits/maxPartHeaderSize``.
        public static let headersTooLarge = Code(.headersTooLarge)
        /// A non-file field exceeds ``MultipartParser/Limits/maxFieldSize``.
        public static let fieldTooLarge = Code(.fieldTooLarge)
        /// More parts than ``MultipartParser/Limits/maxParts``.
        public static let tooManyParts = Code(.tooManyParts)
        /// A temporary file could not be created or written.
        public static let fileSystem = Code(.fileSystem)
        /// The temporary file's disk is full (or the quota is used up).
        public static let noSpace = Code(.noSpace)

        public var description: String { base.rawValue }
    }

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
