#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 socket address in a `sockaddr_storage`, for binding and
/// for naming peers.
struct SocketAddress {
    private(set) var storage = sockaddr_storage()
    let length: socklen_t

    var isIPv6: Bool { Int32(storage.ss_family) == AF_INET6 }

    /// Resolves `host` (an IPv4 or IPv6 literal, optionally in brackets, or a
    /// name such as `localhost`) for binding on `port`. The first address
    /// returned wins, so `localhost` binds wherever the resolver puts it first.
    ///
    /// - Throws: ``HTTPServerError/Code/invalidAddress``.
    static func resolve(host: String, port: Int) throws(HTTPServerError) -> SocketAddress {
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        guard (0...65535).contains(port) else {
            throw .invalidAddress("\(host):\(port)", "port must be 0...65535")
        }
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name.isEmpty ? nil : name, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .invalidAddress("\(host):\(port)", String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var address = SocketAddress(length: first.pointee.ai_addrlen)
        withUnsafeMutableBytes(of: &address.storage) { target in
            target.copyMemory(
                from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        return address
    }

    private init(length: socklen_t) {
        self.length = length
    }

    /// Reads a peer address; `nil` for families other than IPv4 and IPv6.
    init?(_ address: UnsafePointer<sockaddr>) {
        let family = Int32(address.pointee.sa_family)
        switch family {
        case AF_INET: length = socklen_t(MemoryLayout<sockaddr_in>.size)
        case AF_INET6: length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        default: return nil
        }
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length)))
        }
    }

    /// The numeric host (`127.0.0.1`, `::1`) and the port.
    var hostAndPort: (host: String, port: Int)? {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        func text(_ buffer: [CChar]) -> String {
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        let status = withUnsafeBytes(of: storage) { raw in
            getnameinfo(
                raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length, &host, socklen_t(host.count),
                &service, socklen_t(service.count), NI_NUMERICHOST | NI_NUMERICSERV)
        }
        guard status == 0 else { return nil }
        return (text(host), Int(text(service)) ?? 0)
    }

    /// Calls `body` with a `sockaddr` pointer to this address.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: storage) { raw in
            try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
    }
}
