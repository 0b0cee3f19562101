import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

struct FTPSmokeTests {
    @Test(arguments: FTPServerKind.allCases)
    func smoke(kind: FTPServerKind) async throws {
        let server = try FTPTestServer(kind)
        try server.write(Data("hello".utf8), at: "/pub/a b.txt")
        let fs = try Ferry.fileSystem(for: RemoteURL(parsing: server.url("/")))
        _ = try await fs.list("/pub")
        let e = try await fs.stat("/pub/a b.txt")
        print(kind, e)
    }
}
