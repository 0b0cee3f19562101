import FuzzSupport

// URLs and local paths as a user (or a script, or a listing) gives them to ferry.
@testable import FerryKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = text(data, size)
    _ = RemoteURL.redact(input)
    let url: RemoteURL
    do {
        url = try RemoteURL(parsing: input)
    } catch {
        _ = "\(error)"
        return 0
    }
    require(url.path.utf8.first == UInt8(ascii: "/"), "relative path")
    if url.scheme != .file {
        require(!url.host.isEmpty, "empty host")
        require(!url.path.contains("\0"), "NUL in path")
    }
    if let port = url.port { require((1...65535).contains(port), "port \(port)") }
    // The password never shows.
    // (A password that is literally `***` shows as itself.)
    if let password = url.password, !password.isEmpty, password != "***", let user = url.user {
        let shown = RemoteURL.percentEncode(user, allowed: RemoteURL.unreserved) + ":" + password + "@"
        if !(url.query ?? "").contains(shown) {
            require(!url.redacted.contains(shown), "password in redacted")
            require(!url.description.contains(shown), "password in description")
        }
        // The URL handed to libcurl carries no user information at all.
        let wire = url.wireURL()
        let authority = wire[wire.range(of: "://")!.upperBound...].prefix { $0 != "/" && $0 != "?" }
        require(!authority.contains("@"), "user information in the wire URL")
    }
    // What Ferry prints it reads back as the same place.
    if url.scheme != .file {
        do {
            let again = try RemoteURL(parsing: url.redacted)
            require(again.scheme == url.scheme && again.host == url.host && again.port == url.port, "authority changed")
            require(again.path == url.path, "path \(url.path) became \(again.path)")
            require(again.user == url.user, "user changed")
            require(again.query == url.query, "query changed")
        } catch {
            require(false, "redacted form does not parse: \(error)")
        }
    }
    _ = url.hostKey
    _ = url.lastComponent
    _ = url.with(path: url.path + "/x").wireURL(scheme: "http")
    return 0
}
