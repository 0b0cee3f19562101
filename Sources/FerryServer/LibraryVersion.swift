import CMicroHTTPD

extension HTTPServer {
    /// The libmicrohttpd this process runs with (`MHD_get_version`), e.g. `0.9.75`.
    public static var libraryVersion: String {
        MHD_get_version().map { String(cString: $0) } ?? "unknown"
    }
}
