import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// The SFTP backend against an asyncssh server (password login) that misbehaves
/// on purpose: closes mid-file, reads slowly, denies names, has a full disk.
@Suite(.serialized)
struct SFTPAwkwardServerTests {
    let work: TempDir

    init() throws {
        work = try TempDir(prefix: "sftp-awkward")
    }

    func fs(_ server: AsyncSSHTestServer, password: String = AsyncSSHTestServer.password) throws -> SFTPFileSystem {
        let file = work.file("known_hosts-\(server.port)")
        try (server.knownHostsLine() + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        var options = ConnectionOptions(credentials: Credentials(user: server.user, password: password))
        options.hostKeys = .knownHosts(file)
        options.identityFile = work.file("no-such-key")
        return SFTPFileSystem(url: try RemoteURL(parsing: server.url("/")), options: options)
    }

    func quick() -> DownloadOptions {
        var o = DownloadOptions()
        o.retryDelay = .milliseconds(50)
        return o
    }

    @Test func passwordLoginAndAWrongPasswordFailsOnceWithoutShowingIt() async throws {
        let server = try await AsyncSSHTestServer()
        try server.write(Data("hello".utf8), at: "/a.txt")
        try FileManager.default.createDirectory(atPath: server.local("/d"), withIntermediateDirectories: true)
        #expect(try await fs(server).list("/").map(\.name).sorted() == ["a.txt", "d"])
        // asyncssh answers `stat a.txt/` as `stat a.txt`: a file must not pass for a folder.
        #expect(try await fs(server).stat("/a.txt").kind == .file)
        #expect(try await fs(server).stat("/a.txt").size == 5)
        #expect(try await fs(server).stat("/d").kind == .directory)
        let wrong = "not-the-Pa55word"
        do {
            _ = try await fs(server, password: wrong).list("/")
            Issue.record("a wrong password logged in")
        } catch let e as FerryError {
            #expect(e.code == .authenticationFailed, "\(e)")
            #expect(e.description.contains("refused ferry with password"), "\(e)")
            #expect(!e.description.contains(wrong) && !e.description.contains(AsyncSSHTestServer.password))
        }
    }

    @Test func aConnectionClosedMidFileIsResumedFromThePart() async throws {
        // Reads answered slowly enough that what was sent before the drop arrives.
        let server = try await AsyncSSHTestServer(faults: .init(closeAtOffset: 1_000_000, readDelayMilliseconds: 3))
        let data = TestData.bytes(3_000_000, seed: 3)
        try server.write(data, at: "/big.bin")
        let dest = work.file("big.bin")
        let result = try await fs(server).download("/big.bin", to: dest, options: quick()).result
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data)
        #expect(result.retries >= 1 && result.restarts == 0)
        // The session after the drop went on from where the part ended, not from 0.
        let reads = server.reads.filter { $0.path.hasSuffix("big.bin") }
        // The read that made the server drop the connection was never answered.
        let drop = try #require(reads.first { $0.offset >= 1_000_000 })
        let later = reads.filter { $0.session > drop.session }
        let resumedAt = try #require(later.first?.offset)
        #expect(resumedAt > 0 && resumedAt <= drop.offset, "\(later.prefix(3).map(\.offset)) drop \(drop.offset)")
        #expect(later.allSatisfy { $0.offset >= resumedAt })
    }

    @Test func permissionDeniedIsTheServersStatus() async throws {
        let server = try await AsyncSSHTestServer(faults: .init(denyNamesContaining: "secret"))
        try server.write(Data("x".utf8), at: "/secret.txt")
        let fs = try fs(server)
        let t = fs.download("/secret.txt", to: work.file("s.txt"), options: quick())
        do {
            _ = try await t.result
            Issue.record("a denied file downloaded")
        } catch {
            let e = error
            #expect(e.code == .permissionDenied && e.serverCode == 3, "\(e)")
            #expect(e.description.contains("Permission denied"))
        }
        do {
            try await fs.makeDirectory("/secret-folder", createParents: false)
            Issue.record("a denied mkdir worked")
        } catch let e {
            #expect(e.code == .permissionDenied, "\(e)")
        }
    }

    @Test func aFullDiskFailsTheUploadAndLeavesNoFile() async throws {
        let server = try await AsyncSSHTestServer(faults: .init(diskFull: true))
        try TestData.file(work.file("up.bin"), size: 200_000)
        var options = UploadOptions()
        options.retryDelay = .milliseconds(50)
        do {
            _ = try await fs(server).upload(work.file("up.bin"), to: "/up.bin", options: options).result
            Issue.record("an upload to a full disk succeeded")
        } catch {
            let e = FerryError.wrap(error)
            // libcurl 7.88 drops the SFTP status of a refused write: the upload is
            // tried a few times (a dropped connection looks the same), then given up.
            #expect(e.operation == "upload" && e.description.contains("full disk"), "\(e)")
            #expect(e.description.contains("gave up after 6 tries"), "\(e)")
        }
        #expect(!FileManager.default.fileExists(atPath: server.local("/up.bin")))
    }

    @Test func aFileReplacedBetweenPauseAndResumeStartsOver() async throws {
        let server = try await AsyncSSHTestServer(faults: .init(readDelayMilliseconds: 15))
        try server.write(TestData.bytes(2_000_000, seed: 1), at: "/photo.jpg")
        let dest = work.file("photo.jpg")
        let t = try fs(server).download("/photo.jpg", to: dest, options: quick())
        let deadline = Date().addingTimeInterval(20)
        while (LocalFileSizes.of(dest + ".part") ?? 0) < 200_000 && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        t.pause()
        try await Task.sleep(for: .milliseconds(300))
        let paused = LocalFileSizes.of(dest + ".part") ?? 0
        #expect(paused >= 200_000 && paused < 2_000_000)
        // Another file under the same name: other bytes, another size, a later time.
        let replacement = TestData.bytes(2_100_000, seed: 2)
        try server.write(replacement, at: "/photo.jpg")
        let later = Date().addingTimeInterval(5)
        try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: server.local("/photo.jpg"))
        t.resume()
        let result = try await t.result
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == replacement)
        #expect(result.restarts >= 1)
    }
}
