// Helpers shared by the fuzz targets.

/// The fuzzer's bytes as a buffer.
public func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: size == 0 ? nil : data, count: size)
}

/// The bytes as text, decoded the way Ferry decodes a server's reply (invalid
/// UTF-8 becomes U+FFFD).
public func text(_ data: UnsafePointer<UInt8>?, _ size: Int) -> String {
    String(decoding: bytes(data, size), as: UTF8.self)
}

/// Splits at the first NUL byte: (before, after); (nil, all) when there is none.
/// Targets that need two inputs (a folder and a body) read them this way.
public func splitAtNUL(_ data: UnsafePointer<UInt8>?, _ size: Int) -> (String?, String) {
    let all = bytes(data, size)
    guard let nul = all.firstIndex(of: 0) else { return (nil, String(decoding: all, as: UTF8.self)) }
    return (
        String(decoding: UnsafeBufferPointer(rebasing: all[..<nul]), as: UTF8.self),
        String(decoding: UnsafeBufferPointer(rebasing: all[(nul + 1)...]), as: UTF8.self)
    )
}

/// A broken invariant: crash so libFuzzer saves the input.
public func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #file,
    line: UInt = #line
) {
    if !condition() { fatalError("invariant: \(message())", file: file, line: line) }
}
