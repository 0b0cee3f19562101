/// The kind of a failure, for each of Ferry's error types (`FerryError.Code`,
/// `HTTPServerError.Code`, `MultipartError.Code`, `JPEGError.Code`): `Domain`
/// is the error type, so the codes of one are never compared with another's.
///
/// A struct, not an enum, so that a later Ferry may add codes without breaking
/// your build: a `switch` over codes needs a `default:` case, and `==` or
/// `case .notFound:` patterns work as for an enum. Each error type declares
/// its codes as static members of its `Code`; only Ferry makes codes.
///
/// A code is its words: two codes of one domain are equal when their words are,
/// so each code of a domain has words of its own.
public struct ErrorCode<Domain>: Hashable, Sendable, CustomStringConvertible {
    /// The kind in words: "not found", "login failed" ...
    public let description: String

    /// A code of `Domain` with these words.
    package init(_ description: String) { self.description = description }
}
