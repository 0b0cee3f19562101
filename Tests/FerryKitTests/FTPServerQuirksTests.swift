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

        @Test func aBareServerBehindNATListsDownloadsAndUploads() async throws {
            let (server, fs) = try await FTPTest.open(
                .pyftpdlib, options: .init(withoutCommands: Self.bare, passiveAddress: "10.255.255.1"))
            let data = try server.write(TestData.bytes(300_000), at: "/pub/bare/a file.bin")
            try server.makeFolder("/pub/bare/sub")
            let entries = try await fs.list("/pub/bare")
            #expect(Set(entries.map(\.name)) == ["a file.bin", "sub"])
            #expect(entries.first { $0.name == "a file.bin" }?.size == 300_000)

            let out = try TempDir(prefix: "ftp-bare")
            let r = try await fs.download("/pub/bare/a file.bin", to: out.file("a.bin"), options: .init()).result
            #expect(r.size == 300_000)
            #expect(FTPTest.same(out.file("a.bin"), data))

            // With neither SIZE nor MDTM, a body-less request succeeds for any name:
            // stat must still tell a file from a folder from nothing.
            let file = try await fs.stat("/pub/bare/a file.bin")
            #expect(file.kind == .file)
            #expect(file.size == 300_000)
            #expect(try await fs.stat("/pub/bare/sub").kind == .directory)
            let missing = try #require(await FTPTest.error { _ = try await fs.stat("/pub/bare/missing.bin") })
            #expect(missing.code == .notFound)
            #expect(missing.operation == "stat")
            #expect(missing.target?.contains("missing.bin") == true)

            // A new name uploads; the same name again is refused by the overwrite policy.
            let local = try TempDir(prefix: "ftp-bare-up")
            let up = try TestData.file(local.file("up.bin"), size: 50_000)
            _ = try await fs.upload(local.file("up.bin"), to: "/pub/bare/up.bin", options: .init()).result
            #expect(FTPTest.same(server.local("/pub/bare/up.bin"), up))
            let again = try #require(
                await FTPTest.error {
                    _ = try await fs.upload(local.file("up.bin"), to: "/pub/bare/up.bin", options: .init()).result
                })
            #expect(again.code == .destinationExists)
        }

        /// A server without `REST` cannot resume: the `.part` is started over
        /// and the file arrives whole, instead of the download failing for good.
        @Test func aPartOnAServerWithoutRESTIsStartedOver() async throws {
            let (server, fs) = try await FTPTest.open(.pyftpdlib, options: .init(withoutCommands: ["REST"]))
            let data = try server.write(TestData.bytes(1_000_000), at: "/pub/r.bin")
            let out = try TempDir(prefix: "ftp-norest")
            let dest = out.file("r.bin")
            try data.prefix(400_000).write(to: URL(fileURLWithPath: dest + ".part"))
            var journal = DownloadJournal(
                source: fs.endpoint.display("/pub/r.bin"), bootID: DownloadJournal.currentBootID)
            journal.totalSize = 1_000_000
            journal.durableLength = 400_000
            try journal.save(to: dest + ".part.journal")
            let r = try await fs.download("/pub/r.bin", to: dest, options: .init()).result
            #expect(r.restarts >= 1)
            #expect(FTPTest.same(dest, data))
        }

        /// A server that answers neither `SIZE` nor `MDTM` (nor `MLST`) leaves a
        /// part nothing to be checked against: its resume starts over, so a file
        /// replaced meanwhile never arrives as the old start plus the new rest.
        @Test func aPartWithoutSizeOrTimeIsStartedOverOnResume() async throws {
            let (server, fs) = try await FTPTest.open(
                .pyftpdlib, options: .init(throttle: 1_000_000, withoutCommands: ["SIZE", "MDTM", "MLST", "MLSD"]))
            try server.write(TestData.bytes(4_000_000, seed: 1), at: "/pub/v.bin")
            let out = try TempDir(prefix: "ftp-novalidator")
            let dest = out.file("v.bin")
            let t = fs.download("/pub/v.bin", to: dest, options: .init())
            for _ in 0..<100 where (LocalFile.size(atPath: dest + ".part") ?? 0) < 300_000 {
                try await Task.sleep(for: .milliseconds(50))
            }
            t.pause()
            try await Task.sleep(for: .milliseconds(150))
            try #require((LocalFile.size(atPath: dest + ".part") ?? 0) > 0, "no part to resume")
            let replaced = try server.write(TestData.bytes(4_000_000, seed: 2), at: "/pub/v.bin")
            t.resume()
            let r = try await t.result
            #expect(r.restarts >= 1)
            #expect(FTPTest.same(dest, replaced))
        }

        /// Some servers answer the listing of an empty folder with `550`: that
        /// folder is empty, while a folder that is not there is still an error.
        @Test(arguments: [false, true])
        func anEmptyFolderAnswered550IsEmpty(mlsd: Bool) async throws {
            let (server, fs) = try await FTPTest.open(
                .pyftpdlib, options: .init(withoutCommands: mlsd ? [] : ["MLSD", "MLST"], emptyFolderListing550: true))
            try server.makeFolder("/pub/empty")
            #expect(try await fs.serverInfo().usesMLSD == mlsd)
            #expect(try await fs.list("/pub/empty").isEmpty)
            let missing = try #require(await FTPTest.error { _ = try await fs.list("/pub/not here") })
            #expect(missing.code == .notFound)
            #expect(missing.serverCode == 550)
            #expect(missing.operation == "list")
        }

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

        /// A server that answers `EPSV`/`PASV` at once (pyftpdlib, proftpd) used to
        /// cost every other listing on a reused connection a second: libcurl read
        /// the reply in the call that sent the command and then waited for nothing.
        @Test(arguments: FTPServerKind.allCases)
        func listingsOnAReusedConnectionDoNotWait(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            try server.write(Data("x".utf8), at: "/pub/again/a")
            _ = try await fs.list("/pub/again")
            let start = ContinuousClock.now
            for _ in 0..<8 { #expect(try await fs.list("/pub/again").count == 1) }
            let took = ContinuousClock.now - start
            // A few milliseconds each; with the stall about four seconds.
            #expect(took < .seconds(2), "\(took)")
        }
    }
}
