import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

extension FTPServerTests {
    /// Listing, stat, delete, folders, rename, login errors and connection reuse,
    /// against vsftpd (LIST, anonymous), pyftpdlib and proftpd (MLSD, user and password).
    struct FTPOperationsTests {
        /// A server that allows two connections per address refuses some of the
        /// folder listings `walk` runs at once (421): they are tried again, the
        /// engine holds the server to the two connections that work, and the tree
        /// and its files come whole with few retries.
        @Test func aTreeFromAServerThatAllowsTwoConnectionsPerAddress() async throws {
            let (server, fs) = try await FTPTest.open(.pyftpdlib, options: .init(maxConnectionsPerIP: 2))
            var expected: [String: Data] = [:]
            for d in 0..<8 {
                for f in 0..<2 {
                    let path = "/pub/t/d\(d)/f\(f).bin"
                    expected[path] = try server.write(TestData.bytes(20_000 + d * 100 + f, seed: UInt64(d)), at: path)
                }
            }
            let (folders, files) = try await fs.walk("/pub/t", width: 4)
            #expect(folders.count == 8)
            #expect(Set(files.map(\.path)) == Set(expected.keys))
            #expect(server.log.contains("Too many connections"), "the server never refused: the test proves nothing")
            let out = try TempDir(prefix: "ftp-421")
            var options = DownloadOptions()
            options.retryDelay = .milliseconds(50)
            let opts = options
            let targets = files.indices.map { out.file("\($0).bin") }
            let retries = try await withThrowingTaskGroup(of: Int.self) { group in
                for (entry, target) in zip(files, targets) {
                    group.addTask { try await fs.download(entry, to: target, options: opts).result.retries }
                }
                return try await group.reduce(0, +)
            }
            // Without the lowered limit: 25 retries in one run, a download that gave up after 6 tries in another.
            #expect(retries < 8, "\(retries) retries")
            for (i, entry) in files.enumerated() {
                #expect(FTPTest.same(out.file("\(i).bin"), expected[entry.path]!), "\(entry.path)")
            }
        }

        @Test(arguments: FTPServerKind.allCases)
        func listsAwkwardNamesWithMLSDOrLIST(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            for (i, name) in FTPTest.awkwardNames.enumerated() {
                try server.write(TestData.bytes(100 + i), at: "/pub/list/" + name)
            }
            try server.makeFolder("/pub/list/sub folder")
            let entries = try await fs.list("/pub/list")
            #expect(Set(entries.map(\.name)) == Set(FTPTest.awkwardNames + ["sub folder"]))
            for (i, name) in FTPTest.awkwardNames.enumerated() {
                let e = try #require(entries.first { $0.name == name })
                #expect(e.kind == .file)
                #expect(e.size == Int64(100 + i))
                #expect(e.path == "/pub/list/" + name)
                #expect(e.modified != nil)
            }
            #expect(entries.first { $0.name == "sub folder" }?.kind == .directory)
            #expect(try await fs.serverInfo().usesMLSD == (kind != .vsftpd))
            // A trailing slash names the same folder; the root lists too.
            #expect(try await fs.list("/pub/list/").count == entries.count)
            #expect(try await fs.list("/").contains { $0.name == "pub" && $0.kind == .directory })
        }

        @Test(arguments: FTPServerKind.allCases)
        func statDescribesFilesAndFolders(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            let name = "/pub/ünï côdé #1 %.bin"
            try server.write(TestData.bytes(1234), at: name)
            try server.makeFolder("/pub/a folder")
            let file = try await fs.stat(name)
            #expect(file.kind == .file)
            #expect(file.size == 1234)
            #expect(file.name == "ünï côdé #1 %.bin")
            #expect(file.path == name)
            let modified = try #require(file.modified)
            let now = Calendar(identifier: .gregorian).component(.year, from: Date())
            #expect(modified.year == now)
            let folder = try await fs.stat("/pub/a folder")
            #expect(folder.kind == .directory)
            #expect(try await fs.stat("/").kind == .directory)
        }

        @Test(arguments: FTPServerKind.allCases)
        func missingFileKeepsTheServersReply(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            defer { withExtendedLifetime(server) {} }
            let e = try #require(await FTPTest.error { _ = try await fs.stat("/pub/nothing here.txt") })
            #expect(e.code == .notFound)
            #expect(e.serverCode == 550)
            #expect(e.serverText?.isEmpty == false)
            #expect(e.operation == "stat")
            #expect(e.description.contains("550"))
            #expect(e.description.contains("/pub/nothing%20here.txt"))
            let listing = try #require(await FTPTest.error { _ = try await fs.list("/pub/no folder") })
            #expect(listing.code == .notFound)
            #expect(listing.serverCode == 550)
        }

        @Test(arguments: FTPServerKind.allCases)
        func percentTwoFNamesTheTrueRoot(kind: FTPServerKind) async throws {
            // These servers chroot the login, so the true root is the login folder: the
            // point is that "%2F" URLs reach the same files through every operation.
            let (server, _) = try await FTPTest.open(kind)
            let data = try server.write(TestData.bytes(5000), at: "/pub/root test.bin")
            let url = try RemoteURL(parsing: server.url("/%2Fpub/root%20test.bin"))
            #expect(url.path == "//pub/root test.bin")
            let fs = FTPFileSystem(url: url, options: .init())
            #expect(try await fs.stat(url.path).size == 5000)
            #expect(try await fs.list("//pub").contains { $0.name == "root test.bin" })
            let out = try TempDir(prefix: "root")
            _ = try await fs.download(url.path, to: out.file("r.bin"), options: .init()).result
            #expect(FTPTest.same(out.file("r.bin"), data))
            try await fs.rename(url.path, to: "//pub/renamed.bin")
            try await fs.delete("//pub/renamed.bin")
            #expect(!FileManager.default.fileExists(atPath: server.local("/pub/renamed.bin")))
        }

        @Test(arguments: FTPServerKind.allCases)
        func deletesFiles(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            for name in FTPTest.awkwardNames {
                try server.write(Data("x".utf8), at: "/pub/" + name)
                try await fs.delete("/pub/" + name)
                #expect(!FileManager.default.fileExists(atPath: server.local("/pub/" + name)))
            }
            let e = try #require(await FTPTest.error { try await fs.delete("/pub/" + FTPTest.awkwardNames[0]) })
            #expect(e.serverCode == 550)
            #expect(e.operation == "delete")
        }

        @Test(arguments: FTPServerKind.allCases)
        func makesAndRemovesFolders(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            try await fs.makeDirectory("/pub/new dir #1 ü", createParents: false)
            #expect(LocalFile.isDirectory(server.local("/pub/new dir #1 ü")))
            let again = try #require(
                await FTPTest.error { try await fs.makeDirectory("/pub/new dir #1 ü", createParents: false) })
            #expect(again.code == .destinationExists)
            #expect(again.serverCode == 550)
            // -p: every missing parent, and an existing folder is fine.
            try await fs.makeDirectory("/pub/a/b ü/c%d", createParents: true)
            #expect(LocalFile.isDirectory(server.local("/pub/a/b ü/c%d")))
            try await fs.makeDirectory("/pub/a/b ü/c%d", createParents: true)
            let noParent = try #require(
                await FTPTest.error { try await fs.makeDirectory("/pub/x/y", createParents: false) })
            #expect(noParent.serverCode == 550)

            try await fs.removeDirectory("/pub/new dir #1 ü")
            #expect(!FileManager.default.fileExists(atPath: server.local("/pub/new dir #1 ü")))
            let notEmpty = try #require(await FTPTest.error { try await fs.removeDirectory("/pub/a") })
            #expect(notEmpty.code == .directoryNotEmpty)
            #expect(notEmpty.serverCode == 550)
            #expect(notEmpty.serverText?.isEmpty == false)
            #expect(LocalFile.isDirectory(server.local("/pub/a/b ü")))
        }

        @Test(arguments: FTPServerKind.allCases)
        func renamesFilesAndFolders(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            try server.write(Data("one".utf8), at: "/pub/old name.txt")
            try server.makeFolder("/pub/sub")
            try await fs.rename("/pub/old name.txt", to: "new ñame #%.txt")
            #expect(FTPTest.bytes(server.local("/pub/new ñame #%.txt")) == Data("one".utf8))
            #expect(!FileManager.default.fileExists(atPath: server.local("/pub/old name.txt")))
            try await fs.rename("/pub/new ñame #%.txt", to: "/pub/sub/moved.txt")
            #expect(FTPTest.bytes(server.local("/pub/sub/moved.txt")) == Data("one".utf8))
            try await fs.rename("/pub/sub", to: "/pub/sub renamed")
            #expect(LocalFile.isDirectory(server.local("/pub/sub renamed")))
            let missing = try #require(await FTPTest.error { try await fs.rename("/pub/nope", to: "x") })
            #expect(missing.serverCode == 550)
            #expect(missing.operation == "rename")
        }

        /// RNTO replaces on servers built on rename(2): a rename onto a taken name
        /// must refuse before anything is sent, and replace only when asked
        /// (docs/RELIABILITY.md, issue 25 item 2).
        @Test(arguments: FTPServerKind.allCases)
        func renameNeverReplacesAnExistingFileUnlessAsked(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            try server.write(Data("first photo".utf8), at: "/pub/IMG_0001.JPG")
            try server.write(Data("second photo".utf8), at: "/pub/IMG_0002.JPG")
            try server.makeFolder("/pub/folder")
            let refused = try #require(
                await FTPTest.error { try await fs.rename("/pub/IMG_0001.JPG", to: "IMG_0002.JPG") })
            #expect(refused.code == .destinationExists)
            #expect(refused.recovery == .replace)
            #expect(refused.operation == "rename")
            #expect(FTPTest.bytes(server.local("/pub/IMG_0001.JPG")) == Data("first photo".utf8))
            #expect(FTPTest.bytes(server.local("/pub/IMG_0002.JPG")) == Data("second photo".utf8))
            // Onto a folder's name too.
            let onFolder = try #require(
                await FTPTest.error { try await fs.rename("/pub/IMG_0001.JPG", to: "/pub/folder") })
            #expect(onFolder.code == .destinationExists)
            #expect(LocalFile.isDirectory(server.local("/pub/folder")))
            // Asked to replace: the old IMG_0002.JPG goes.
            try await fs.rename("/pub/IMG_0001.JPG", to: "IMG_0002.JPG", replacing: true)
            #expect(FTPTest.bytes(server.local("/pub/IMG_0002.JPG")) == Data("first photo".utf8))
            #expect(!FileManager.default.fileExists(atPath: server.local("/pub/IMG_0001.JPG")))
        }

        @Test(arguments: FTPServerKind.allCases)
        func wrongPasswordIsALoginFailureWithTheServersText(kind: FTPServerKind) async throws {
            let server = try await FTPTestServer(kind)
            let url =
                kind == .vsftpd
                // vsftpd here is anonymous-only: any named login is refused with 530.
                ? "ftp://someone:wrong%20pw@127.0.0.1:\(server.port)/"
                : server.url("/", password: "wrong pw")
            let parsed = try RemoteURL(parsing: url)
            FTPServerInfoCache.shared.forget(hostKey: parsed.hostKey)
            let fs = FTPFileSystem(url: parsed)
            let e = try #require(await FTPTest.error { _ = try await fs.list("/pub") })
            #expect(e.code == .authenticationFailed)
            #expect(e.operation == "list")
            #expect(e.target?.hasSuffix(":\(server.port)/pub") == true)
            #expect(e.serverCode == 530)
            #expect(e.serverText?.isEmpty == false)
            #expect(!e.description.contains("wrong"))
        }

        @Test func permissionDeniedKeepsTheServersText() async throws {
            let (server, fs) = try await FTPTest.open(.pyftpdlib, options: .init(readOnlyFolders: ["/pub/ro"]))
            try server.write(Data("keep".utf8), at: "/pub/ro/keep.txt")
            let delete = try #require(await FTPTest.error { try await fs.delete("/pub/ro/keep.txt") })
            #expect(delete.code == .permissionDenied)
            #expect(delete.serverCode == 550)
            #expect(FTPTest.bytes(server.local("/pub/ro/keep.txt")) == Data("keep".utf8))
            let local = try TempDir(prefix: "up")
            try Data("new".utf8).write(to: URL(fileURLWithPath: local.file("new.txt")))
            let upload = try #require(
                await FTPTest.error {
                    _ = try await fs.upload(local.file("new.txt"), to: "/pub/ro/new.txt", options: .init()).result
                })
            #expect(upload.code == .permissionDenied)
            #expect(upload.serverCode == 550)
            #expect(!FileManager.default.fileExists(atPath: server.local("/pub/ro/new.txt")))
        }

        @Test(arguments: FTPServerKind.allCases)
        func oneLoginServesManyOperations(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            try server.write(TestData.bytes(50_000), at: "/pub/a.bin")
            let local = try TempDir(prefix: "reuse")
            try TestData.file(local.file("up.bin"), size: 40_000)
            _ = try await fs.list("/pub")
            _ = try await fs.stat("/pub/a.bin")
            _ = try await fs.download("/pub/a.bin", to: local.file("a.bin"), options: .init()).result
            _ = try await fs.upload(local.file("up.bin"), to: "/pub/up.bin", options: .init()).result
            try await fs.makeDirectory("/pub/d", createParents: false)
            try await fs.rename("/pub/up.bin", to: "/pub/d/up.bin")
            try await fs.delete("/pub/d/up.bin")
            try await fs.removeDirectory("/pub/d")
            _ = try? await fs.stat("/pub/missing")
            _ = try await fs.list("/pub")
            #expect(server.loginCount == 1, "\(server.log)")
        }
    }
}
