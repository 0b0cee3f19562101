import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

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
            return error as? FerryError ?? FerryError.wrap(error)
        }
    }

    static func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
}
