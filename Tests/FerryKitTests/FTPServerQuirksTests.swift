import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

extension FTPServerTests {
    /// Servers that lack commands or answer in ways the three real servers cannot
    /// be configured into: no `SIZE`, `MDTM`, `REST`, `EPSV`, `MLSD` or `FEAT`; a
    /// `PASV` reply naming another address; `550` for an empty folder's listing.
    struct FTPServerQuirksTests {
        /// Everything a bare RFC 959 server does not have.
        static let bare = ["SIZE", "MDTM", "FEAT", "EPSV", "EPRT", "MLSD", "MLST", "MFMT"]

        /// Names that end in a space reach the server whole, and the reply to the
        /// command that carries one is found (it was looked up by the command
        /// without its trailing space: "the server did not answer").
        @Test(arguments: FTPServerKind.allCases)
        func namesEndingInASpace(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            try server.write(Data("x".utf8), at: "/pub/trailing ")
            try await fs.rename("/pub/trailing ", to: "renamed ")
            #expect(FileManager.default.fileExists(atPath: server.local("/pub/renamed ")))
            try await fs.makeDirectory("/pub/folder ", createParents: false)
            #expect(LocalFile.isDirectory(server.local("/pub/folder ")))
            try await fs.removeDirectory("/pub/folder ")
            try await fs.delete("/pub/renamed ")
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.local("/pub")).isEmpty)
        }
    }
}
