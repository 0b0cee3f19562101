import Foundation

extension RemoteFileSystem {
    /// The limit of ``data(at:)``: 16 MiB.
    public static var defaultDataLimit: Int { 16 << 20 }

    /// Reads a whole file into memory, refusing one over 16 MiB (``defaultDataLimit``).
    ///
    /// - Parameter path: The file.
    /// - Returns: The file's bytes.
    /// - Throws: `FerryError`: `tooLarge`, `notFound`, `cancelled`, the server's error.
    public func data(at path: String) async throws(FerryError) -> Data {
        try await data(at: path, limit: Self.defaultDataLimit)
    }

    /// Throws `unsupportedOperation`: this backend cannot read ranges.
    public func data(at path: String, range: Range<Int64>) async throws(FerryError) -> Data {
        throw unsupported("read", path)
    }

    /// Reads the range `0..<limit + 1` and fails when all of it came: at most
    /// `limit + 1` bytes are ever read.
    public func data(at path: String, limit: Int) async throws(FerryError) -> Data {
        let limit = max(0, limit)
        let bytes = try await data(at: path, range: 0..<Int64(limit) + 1)
        guard bytes.count <= limit else {
            throw FerryError.overLimit(limit, size: nil, operation: "read", target: url.with(path: path).redacted)
        }
        return bytes
    }

    /// The Exif thumbnail from the file's first bytes (``EXIFThumbnail/fetch(reading:)``).
    ///
    /// The bytes are as the camera stored them, not turned upright: apply the
    /// result's `orientation` to show them (``ExifOrientation``; `displayedWidth`
    /// and `displayedHeight` give the main image's size as shown).
    public func thumbnail(_ path: String) async throws(FerryError) -> EXIFThumbnail.Thumbnail? {
        do {
            return try await EXIFThumbnail.fetch { range async throws(FerryError) in
                try await data(at: path, range: range)
            }
        } catch {
            var e = error.context(target: url.with(path: path).redacted)
            e.operation = "thumbnail"
            throw e
        }
    }
}

extension FerryError {
    /// A file over an in-memory read's limit.
    static func overLimit(_ limit: Int, size: Int64?, operation: String, target: String) -> FerryError {
        let size = size.map { "\($0) bytes" } ?? "larger than that"
        return FerryError(
            .tooLarge, operation: operation, target: target,
            detail: "the file is \(size); the limit is \(limit) bytes: raise the limit or download it to a file")
    }

    /// A byte range that cannot be: negative.
    static func badRange(_ range: Range<Int64>, operation: String, target: String) -> FerryError {
        FerryError(.invalidURL, operation: operation, target: target, detail: "no such byte range: \(range)")
    }
}
