#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Unqualified names for the libc calls whose names clash with methods
/// (`close`, `write`) inside the types that use them.
enum Sys {
    @discardableResult
    static func close(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
            Glibc.close(fd)
        #elseif canImport(Musl)
            Musl.close(fd)
        #else
            Darwin.close(fd)
        #endif
    }

    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
            Glibc.write(fd, buffer, count)
        #elseif canImport(Musl)
            Musl.write(fd, buffer, count)
        #else
            Darwin.write(fd, buffer, count)
        #endif
    }

    /// `strerror` as a Swift string.
    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
