import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// Every test against a real FTP server, one at a time: each starts servers and
/// moves megabytes, and running them side by side with the timing- and
/// memory-sensitive tests of other suites on a 2-core machine made those flaky.
@Suite(.serialized) struct FTPServerTests {}

/// Shared helpers for the FTP tests.
enum FTPTest {
    /// Names every server must carry through list, stat, download, upload, rename.
    static let awkwardNames = ["with  two spaces.txt", "ünïcödé ñame.txt", "hash#1.txt", "per%cent 100%.txt"]

    /// Starts a server and opens Ferry's file system on it, with nothing cached
    /// from an earlier server that had the same port.
    static func open(
        _ kind: FTPServerKind, options: FTPTestServerOptions = .init(), verifyTLS: Bool = false
    ) async throws -> (FTPTestServer, FTPFileSystem) {
        let server = try await FTPTestServer(kind, options: options)
        let fs = try fileSystem(server, verifyTLS: verifyTLS)
        return (server, fs)
    }

    static func fileSystem(_ server: FTPTestServer, password: String? = nil, verifyTLS: Bool = false) throws
        -> FTPFileSystem
    {
        let url = try RemoteURL(parsing: server.url("/", password: password))
        FTPServerInfoCache.shared.forget(hostKey: url.hostKey)
        return FTPFileSystem(url: url, options: ConnectionOptions(verifyTLS: verifyTLS))
    }

    /// The error an async operation threw, or nil.
    static func error(_ body: () async throws -> Void) async -> FerryError? {
        do {
            try await body()
            return nil
        } catch {
            return FerryError.wrap(error)  // the closure is untyped: Swift 6.3 infers no typed throws for it
        }
    }

    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// Whether the file at `path` holds exactly `data`, read in chunks (no second
    /// copy of a large file in memory).
    static func same(_ path: String, _ data: Data) -> Bool {
        guard let h = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? h.close() }
        var offset = 0
        while true {
            let chunk = (try? h.read(upToCount: 256 << 10)) ?? nil
            guard let chunk, !chunk.isEmpty else { return offset == data.count }
            // Data's == compares with memcmp, fast even in a debug build.
            guard offset + chunk.count <= data.count,
                chunk == data[data.startIndex + offset..<data.startIndex + offset + chunk.count]
            else { return false }
            offset += chunk.count
        }
    }
}
