import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// The "already here" decision (FerryKit's `ExistingFile`) and `put` run twice
/// against FTP servers that keep no times of their own.
@Suite(.serialized)
struct ExistingFileTests {
    let work: TempDir
    let fm = FileManager.default

    init() throws {
        work = try TempDir(prefix: "existing")
    }

    func setTime(_ path: String, _ date: Date) throws {
        try fm.setAttributes([.modificationDate: date], ofItemAtPath: path)
    }

    @Test func downloadComparesSizeAndTimeToTheSecond() throws {
        let path = work.file("a.jpg")
        let remote = RemoteEntry(
            name: "a.jpg", path: "/a.jpg", kind: .file, size: 10,
            modified: RemoteTimestamp(year: 2024, month: 5, day: 1, hour: 12, minute: 0, second: 10, zone: .utc))
        #expect(ExistingFile.download(remote, to: path) == .missing)
        try Data(count: 10).write(to: URL(fileURLWithPath: path))
        guard case .differs = ExistingFile.download(remote, to: path) else {
            Issue.record("a file written now is not the one from 2024")
            return
        }
        ExistingFile.stampModificationTime(path, from: remote)
        #expect(ExistingFile.download(remote, to: path) == .same)
        try setTime(path, remote.modified!.date().addingTimeInterval(0.6))  // same second
        #expect(ExistingFile.download(remote, to: path) == .same)
        try setTime(path, remote.modified!.date().addingTimeInterval(1))
        #expect(ExistingFile.download(remote, to: path) != .same)
        var bigger = remote
        bigger.size = 11
        ExistingFile.stampModificationTime(path, from: remote)
        #expect(ExistingFile.download(bigger, to: path) == .differs(reason: "10 B here, 11 B at the source"))
        // No time from the source: the size decides.
        var timeless = remote
        timeless.modified = nil
        #expect(ExistingFile.download(timeless, to: path) == .same)
        try fm.createDirectory(atPath: work.file("dir"), withIntermediateDirectories: true)
        #expect(ExistingFile.download(remote, to: work.file("dir")) == .folder)
    }

    /// A symbolic link is followed: to the same file it is that file, to a folder
    /// a folder, and a dangling one is nothing.
    @Test func symbolicLinksAreFollowed() throws {
        let remote = RemoteEntry(
            name: "b.jpg", path: "/b.jpg", kind: .file, size: 7,
            modified: RemoteTimestamp(year: 2024, month: 5, day: 1, hour: 12, minute: 0, second: 10, zone: .utc))
        let target = work.file("target.jpg")
        try Data(count: 7).write(to: URL(fileURLWithPath: target))
        ExistingFile.stampModificationTime(target, from: remote)
        try fm.createSymbolicLink(atPath: work.file("link.jpg"), withDestinationPath: target)
        #expect(ExistingFile.download(remote, to: work.file("link.jpg")) == .same)
        try fm.createDirectory(atPath: work.file("folder"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: work.file("folder-link"), withDestinationPath: work.file("folder"))
        #expect(ExistingFile.download(remote, to: work.file("folder-link")) == .folder)
        try fm.createSymbolicLink(atPath: work.file("dangling.jpg"), withDestinationPath: work.file("nowhere"))
        #expect(ExistingFile.download(remote, to: work.file("dangling.jpg")) == .missing)
    }

    @Test func aFATTimeMayBeASecondOff() throws {
        let path = work.file("card.jpg")
        try Data(count: 5).write(to: URL(fileURLWithPath: path))
        let card = RemoteEntry(
            name: "card.jpg", path: "/card.jpg", kind: .file, size: 5,
            modified: RemoteTimestamp(year: 2024, month: 5, day: 1, hour: 12, minute: 0, second: 10, zone: .floating))
        try setTime(path, card.modified!.date().addingTimeInterval(1))
        #expect(ExistingFile.download(card, to: path) == .same)
    }

    @Test func uploadTakesARemoteCopyAtLeastAsNewAsThisVersion() throws {
        let path = work.file("up.bin")
        try Data(count: 100).write(to: URL(fileURLWithPath: path))
        let now = Date()
        func entry(size: Int64, age: TimeInterval) -> RemoteEntry {
            let c = Calendar(identifier: .gregorian).dateComponents(
                in: TimeZone(identifier: "UTC")!, from: now.addingTimeInterval(-age))
            return RemoteEntry(
                name: "up.bin", path: "/up.bin", kind: .file, size: size,
                modified: RemoteTimestamp(
                    year: c.year!, month: c.month!, day: c.day!, hour: c.hour!, minute: c.minute!, second: c.second!,
                    zone: .utc))
        }
        #expect(ExistingFile.upload(path, to: nil) == .missing)
        #expect(ExistingFile.upload(path, to: entry(size: 100, age: -30)) == .same)
        #expect(ExistingFile.upload(path, to: entry(size: 100, age: 0)) == .same)
        #expect(ExistingFile.upload(path, to: entry(size: 99, age: -30)) != .same)
        // Uploaded before the local file last changed: another version.
        #expect(ExistingFile.upload(path, to: entry(size: 100, age: 3600)) != .same)
    }

    @Test(arguments: [FTPServerKind.pyftpdlib, .vsftpd])
    func putTwiceToFTPIsAlreadyHereTheSecondTime(kind: FTPServerKind) async throws {
        let server = try await FTPTestServer(kind)
        try TestData.file(work.file("one.bin"), size: 30_000, seed: 1)
        try TestData.file(work.file("two.bin"), size: 20_000, seed: 2)
        let ferry = TestProcess.ferryExecutable()
        let args = ["put", work.file("one.bin"), work.file("two.bin"), server.url("/pub/")]
        let first = try TestProcess.run(ferry, args, cwd: work.path)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("2 uploaded ("), "\(first.stderr)")
        let second = try TestProcess.run(ferry, args, cwd: work.path)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("0 uploaded, 2 already here, 0 failed"), "\(second.stderr)")
        // A changed local file differs: kept on the server, reported, exit 1.
        try TestData.file(work.file("two.bin"), size: 25_000, seed: 3)
        let third = try TestProcess.run(ferry, args, cwd: work.path)
        #expect(third.status == 1)
        #expect(third.stderr.contains("two.bin differs"), "\(third.stderr)")
        #expect(third.stderr.contains("0 uploaded, 1 already here, 1 differs (kept), 0 failed"), "\(third.stderr)")
        // mv says what it did.
        let mv = try TestProcess.run(ferry, ["mv", server.url("/pub/one.bin"), "three.bin"], cwd: work.path)
        #expect(mv.status == 0, "\(mv.stderr)")
        #expect(mv.stderr.contains("renamed ") && mv.stderr.contains("/pub/three.bin"), "\(mv.stderr)")
        // mv onto a taken name refuses (RNTO would replace it), names the way out, and
        // replaces only with --overwrite.
        let onto = try TestProcess.run(ferry, ["mv", server.url("/pub/three.bin"), "two.bin"], cwd: work.path)
        #expect(onto.status == 1, "\(onto.stderr)")
        #expect(onto.stderr.contains("two.bin") && onto.stderr.contains("--overwrite"), "\(onto.stderr)")
        #expect(fileSize(server.local("/pub/two.bin")) == 20_000)
        #expect(fileSize(server.local("/pub/three.bin")) == 30_000)
        let replace = try TestProcess.run(
            ferry, ["mv", server.url("/pub/three.bin"), "two.bin", "--overwrite"], cwd: work.path)
        #expect(replace.status == 0, "\(replace.stderr)")
        #expect(fileSize(server.local("/pub/two.bin")) == 30_000)
    }

    func fileSize(_ path: String) -> Int? {
        (try? fm.attributesOfItem(atPath: path))?[.size] as? Int
    }
}
