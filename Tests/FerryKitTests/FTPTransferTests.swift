import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

extension FTPServerTests {
    /// Downloads and uploads over FTP: byte-identical files, REST resume from a
    /// `.part`, restarts when the file changed, APPE resume of an interrupted upload,
    /// the overwrite policy, pause/resume and cancel on throttled data channels.
    struct FTPTransferTests {
        // MARK: Downloads

        @Test(arguments: FTPServerKind.allCases)
        func downloadsByteIdentical(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            let out = try TempDir(prefix: "ftp-dl")
            let remote = "/pub/dl ünï #1 %.bin"
            let data = try server.write(TestData.bytes(3_000_000), at: remote)
            let t = fs.download(remote, to: out.file("a.bin"), options: .init())
            let r = try await t.result
            #expect(r.size == 3_000_000)
            #expect(r.bytesTransferred == 3_000_000)
            #expect(FTPTest.same(out.file("a.bin"), data))
            #expect(!FileManager.default.fileExists(atPath: out.file("a.bin.part")))
            #expect(!FileManager.default.fileExists(atPath: out.file("a.bin.part.journal")))
            #expect(t.currentProgress.fraction == 1)
            // An empty file too.
            try server.write(Data(), at: "/pub/empty")
            let empty = try await fs.download("/pub/empty", to: out.file("empty"), options: .init()).result
            #expect(empty.size == 0)
            #expect(FTPTest.bytes(out.file("empty")) == Data())
        }

        /// Commands the server logged for `path` (vsftpd and proftpd log every
        /// command; pyftpdlib only logins and transfers). Ferry sends paths relative
        /// to the login folder (`/pub/a` as `pub/a`).
        static func commands(_ verb: String, for path: String, in log: String) -> Int {
            log.split(separator: "\n").filter { $0.contains("\(verb) \(path.dropFirst())") }.count
        }

        @Test(arguments: FTPServerKind.allCases)
        func aListedFileIsFetchedWithoutAskingItsSizeAgain(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            let out = try TempDir(prefix: "ftp-dl")
            let data = try server.write(TestData.bytes(700_000, seed: 4), at: "/pub/listed.bin")
            let large = try server.write(TestData.bytes(1_500_000, seed: 9), at: "/pub/large.bin")
            let empty = try server.write(Data(), at: "/pub/empty.bin")
            let entries = try await fs.list("/pub")
            for (name, bytes) in [("listed.bin", data), ("large.bin", large), ("empty.bin", empty)] {
                let entry = try #require(entries.first { $0.name == name })
                let r = try await fs.download(entry, to: out.file(name), options: .init()).result
                #expect(r.size == Int64(bytes.count))
                #expect(r.retries == 0 && r.restarts == 0)
                #expect(FTPTest.same(out.file(name), bytes))
            }
            let log = server.log
            if kind != .pyftpdlib {
                #expect(Self.commands("RETR", for: "/pub/listed.bin", in: log) == 1, "\(log)")
                #expect(Self.commands("SIZE", for: "/pub/listed.bin", in: log) == 0, "\(log)")
                #expect(Self.commands("SIZE", for: "/pub/large.bin", in: log) == 0, "\(log)")
                #expect(Self.commands("MDTM", for: "/pub/listed.bin", in: log) == 0, "\(log)")
                // MLSD (proftpd) gives the exact time; vsftpd's LIST does not, so a
                // file worth resuming still gets its MDTM.
                let mdtm = Self.commands("MDTM", for: "/pub/large.bin", in: log)
                #expect(kind == .vsftpd ? mdtm == 1 : mdtm == 0, "\(log)")
            }
            // The path without a listing asks as before.
            _ = try await fs.download("/pub/listed.bin", to: out.file("again.bin"), options: .init()).result
            if kind != .pyftpdlib {
                #expect(Self.commands("SIZE", for: "/pub/listed.bin", in: server.log) == 1, "\(server.log)")
            }
        }

        @Test(arguments: FTPServerKind.allCases)
        func aFileThatChangedSinceItWasListedArrivesAsItIsNow(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            let out = try TempDir(prefix: "ftp-dl")
            try server.write(TestData.bytes(400_000, seed: 5), at: "/pub/grew.bin")
            try server.write(TestData.bytes(400_000, seed: 6), at: "/pub/shrank.bin")
            let entries = try await fs.list("/pub")
            let grew = try server.write(TestData.bytes(650_000, seed: 7), at: "/pub/grew.bin")
            let shrank = try server.write(TestData.bytes(90_000, seed: 8), at: "/pub/shrank.bin")
            var options = DownloadOptions()
            options.retryDelay = .milliseconds(10)
            for (name, now) in [("grew.bin", grew), ("shrank.bin", shrank)] {
                let entry = try #require(entries.first { $0.name == name })
                let r = try await fs.download(entry, to: out.file(name), options: options).result
                #expect(r.size == Int64(now.count), "\(name)")
                #expect(FTPTest.same(out.file(name), now), "\(name)")
                #expect(!FileManager.default.fileExists(atPath: out.file(name + ".part")))
            }
        }

        /// Leaves `NAME.part` and its journal as an earlier run that stopped after
        /// `length` bytes would have.
        func leavePart(
            _ data: Data, length: Int, at dest: String, fs: FTPFileSystem, remote: String,
            lastModified: String? = nil, totalSize: Int64? = nil, unverifiable: Bool? = nil
        ) throws {
            try data.prefix(length).write(to: URL(fileURLWithPath: dest + ".part"))
            var journal = DownloadJournal(source: fs.endpoint.display(remote), bootID: DownloadJournal.currentBootID)
            journal.modified = lastModified.map(SourceTime.mdtm)
            journal.totalSize = totalSize
            journal.unverifiable = unverifiable
            journal.durableLength = Int64(length)
            try journal.save(to: dest + ".part.journal")
        }

        @Test(arguments: FTPServerKind.allCases)
        func resumesAPartLeftByAnEarlierRunWithREST(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            let out = try TempDir(prefix: "ftp-dl")
            let data = try server.write(TestData.bytes(2_000_000), at: "/pub/r.bin")
            let mdtm = try #require(await fs.stat("/pub/r.bin").modified)
            _ = mdtm
            try leavePart(
                data, length: 1_234_567, at: out.file("r.bin"), fs: fs, remote: "/pub/r.bin", totalSize: 2_000_000)
            let r = try await fs.download("/pub/r.bin", to: out.file("r.bin"), options: .init()).result
            #expect(r.resumedFrom == 1_234_567)
            #expect(r.bytesTransferred == 2_000_000 - 1_234_567)
            #expect(r.restarts == 0)
            #expect(FTPTest.same(out.file("r.bin"), data))
            #expect(server.log.contains("REST 1234567") || kind == .pyftpdlib, "\(server.log)")
        }

        @Test(arguments: FTPServerKind.allCases)
        func restartsWhenTheFileChangedSinceThePart(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            let out = try TempDir(prefix: "ftp-dl")
            let data = try server.write(TestData.bytes(1_000_000, seed: 2), at: "/pub/c.bin")
            // Bytes of an older version, with that version's MDTM in the journal.
            try leavePart(
                TestData.bytes(1_000_000, seed: 1), length: 500_000, at: out.file("c.bin"), fs: fs,
                remote: "/pub/c.bin",
                lastModified: "19990101000000", totalSize: 1_000_000)
            let r = try await fs.download("/pub/c.bin", to: out.file("c.bin"), options: .init()).result
            #expect(r.restarts >= 1)
            #expect(FTPTest.same(out.file("c.bin"), data))

            // A .part longer than the file is now: REST past the end, start over.
            try leavePart(
                TestData.bytes(1_200_000), length: 1_100_000, at: out.file("d.bin"), fs: fs, remote: "/pub/c.bin")
            let r2 = try await fs.download("/pub/c.bin", to: out.file("d.bin"), options: .init()).result
            #expect(r2.restarts >= 1)
            #expect(FTPTest.same(out.file("d.bin"), data))
        }

        /// A listing that gets a size wrong (old servers list sizes modulo 4 GiB)
        /// costs a SIZE on a retry, not a second download.
        @Test(arguments: [FTPServerKind.vsftpd, .proftpd])
        func aWrongListedSizeIsCheckedWithoutFetchingTheFileAgain(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            let out = try TempDir(prefix: "ftp-dl")
            let data = try server.write(TestData.bytes(1_500_000, seed: 11), at: "/pub/big.bin")
            var entry = try #require(try await fs.list("/pub").first { $0.name == "big.bin" })
            entry.size = 1_500_000 % 65_536
            var options = DownloadOptions()
            options.retryDelay = .milliseconds(10)
            let r = try await fs.download(entry, to: out.file("big.bin"), options: options).result
            #expect(FTPTest.same(out.file("big.bin"), data))
            #expect(r.bytesTransferred == 1_500_000)
            #expect(r.retries == 1 && r.restarts == 0)
        }

        /// A part whose version nothing describes (a small file fetched by its LIST
        /// entry, stopped early) is started over, even when size and time agree.
        @Test func anUnverifiablePartIsStartedOver() async throws {
            let (server, fs) = try await FTPTest.open(.vsftpd)
            let out = try TempDir(prefix: "ftp-dl")
            let data = try server.write(TestData.bytes(300_000, seed: 3), at: "/pub/u.bin")
            try leavePart(
                TestData.bytes(300_000, seed: 1), length: 100_000, at: out.file("u.bin"), fs: fs, remote: "/pub/u.bin",
                totalSize: 300_000, unverifiable: true)
            let r = try await fs.download("/pub/u.bin", to: out.file("u.bin"), options: .init()).result
            #expect(r.restarts == 1)
            #expect(FTPTest.same(out.file("u.bin"), data))
            #expect(!FileManager.default.fileExists(atPath: out.file("u.bin.part.journal")))
        }

        @Test(arguments: FTPServerKind.allCases)
        func missingFileFailsAtOnceWithTheServersReply(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            defer { withExtendedLifetime(server) {} }
            let out = try TempDir(prefix: "ftp-dl")
            let e = try #require(
                await FTPTest.error {
                    _ = try await fs.download("/pub/missing.bin", to: out.file("m"), options: .init()).result
                })
            #expect(e.code == .notFound)
            #expect(e.serverCode == 550)
            #expect(e.operation == "download")
            // Permanent: the driver gives up at once instead of retrying with back-off.
            #expect(!e.isTransient)
            #expect(!FileManager.default.fileExists(atPath: out.file("m")))
        }

        @Test func pauseAndResumeOnAThrottledServer() async throws {
            let (server, fs) = try await FTPTest.open(.pyftpdlib, options: .init(throttle: 1_000_000))
            let out = try TempDir(prefix: "ftp-dl")
            // pyftpdlib throttles in bursts (1 MB at once, then a pause) and every new
            // data connection starts with a burst: the file is large enough for cycles.
            let data = try server.write(TestData.bytes(8_000_000), at: "/pub/slow.bin")
            let dest = out.file("slow.bin")
            let t = fs.download("/pub/slow.bin", to: dest, options: .init())
            var cycles = 0
            var last: Int64 = -1
            while cycles < 4 {
                try await Task.sleep(for: .milliseconds(300))
                if t.state.isFinished { break }
                t.pause()
                try await Task.sleep(for: .milliseconds(100))
                // No .part: it finished just before the pause.
                guard let onDisk = LocalFile.size(atPath: dest + ".part") else { break }
                #expect(onDisk >= last)
                last = onDisk
                t.resume()
                cycles += 1
            }
            let r = try await t.result
            #expect(cycles >= 2)
            #expect(FTPTest.same(dest, data))
            #expect(r.bytesTransferred - r.size < 1 << 20, "re-downloaded \(r.bytesTransferred - r.size) bytes")
        }

        @Test func cancelMidDownloadLeavesNoFinalFileAndTheNextRunResumes() async throws {
            let (server, fs) = try await FTPTest.open(.pyftpdlib, options: .init(throttle: 1_000_000))
            let out = try TempDir(prefix: "ftp-dl")
            // pyftpdlib throttles in bursts: 1 MB at once, then a pause of up to 2 s.
            let data = try server.write(TestData.bytes(5_000_000), at: "/pub/c.bin")
            let dest = out.file("c.bin")
            let t = fs.download("/pub/c.bin", to: dest, options: .init())
            while (LocalFile.size(atPath: dest + ".part") ?? 0) < 300_000 && !t.state.isFinished {
                try await Task.sleep(for: .milliseconds(20))
            }
            t.cancel()
            let e = try #require(await FTPTest.error { _ = try await t.result })
            #expect(e.code == .cancelled)
            #expect(!FileManager.default.fileExists(atPath: dest))
            let kept = LocalFile.size(atPath: dest + ".part") ?? 0
            #expect(kept > 0)
            let r = try await fs.download("/pub/c.bin", to: dest, options: .init()).result
            #expect(r.resumedFrom > 0)
            #expect(FTPTest.same(dest, data))
        }

        // MARK: Uploads

        @Test(arguments: FTPServerKind.allCases)
        func uploadsThroughATemporaryName(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            let local = try TempDir(prefix: "ftp-up")
            let data = try TestData.file(local.file("src.bin"), size: 2_000_000)
            for name in FTPTest.awkwardNames + ["up lo ad ü #%.bin"] {
                let t = fs.upload(local.file("src.bin"), to: "/pub/" + name, options: .init())
                let r = try await t.result
                #expect(r.size == 2_000_000)
                #expect(r.bytesTransferred == 2_000_000)
                #expect(FTPTest.same(server.local("/pub/" + name), data))
                #expect(t.currentProgress.bytesDone == 2_000_000)
            }
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: server.local("/pub"))
                .filter { $0.hasSuffix(".ferry-part") }
            #expect(leftovers.isEmpty)
            #expect(server.log.contains(".ferry-part"), "the bytes should go to a temporary name first")
            // Into a folder that does not exist yet.
            var options = UploadOptions()
            options.createParents = true
            _ = try await fs.upload(local.file("src.bin"), to: "/pub/new/deep er/x.bin", options: options).result
            #expect(FTPTest.same(server.local("/pub/new/deep er/x.bin"), data))
        }

        @Test(arguments: FTPServerKind.allCases)
        func overwritePolicyFailSkipOverwrite(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            let local = try TempDir(prefix: "ftp-up")
            let data = try TestData.file(local.file("new.bin"), size: 10_000)
            try server.write(Data("old".utf8), at: "/pub/there.txt")
            let refused = try #require(
                await FTPTest.error {
                    _ = try await fs.upload(local.file("new.bin"), to: "/pub/there.txt", options: .init()).result
                })
            #expect(refused.code == .destinationExists)
            #expect(FTPTest.bytes(server.local("/pub/there.txt")) == Data("old".utf8))
            var skip = UploadOptions()
            skip.overwrite = .skip
            let skipped = try await fs.upload(local.file("new.bin"), to: "/pub/there.txt", options: skip).result
            #expect(skipped.skipped)
            #expect(FTPTest.bytes(server.local("/pub/there.txt")) == Data("old".utf8))
            var overwrite = UploadOptions()
            overwrite.overwrite = .overwrite
            _ = try await fs.upload(local.file("new.bin"), to: "/pub/there.txt", options: overwrite).result
            #expect(FTPTest.same(server.local("/pub/there.txt"), data))
        }

        @Test(arguments: FTPServerKind.allCases)
        func resumesAnInterruptedUploadWithAPPE(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            let local = try TempDir(prefix: "ftp-up")
            let data = try TestData.file(local.file("big.bin"), size: 3_000_000)
            // What an earlier, interrupted run left on the server.
            try server.write(data.prefix(1_800_000), at: "/pub/.big file.bin.ferry-part")
            let r = try await fs.upload(local.file("big.bin"), to: "/pub/big file.bin", options: .init()).result
            #expect(r.resumedFrom == 1_800_000)
            #expect(r.bytesTransferred == 1_200_000)
            #expect(FTPTest.same(server.local("/pub/big file.bin"), data))
            #expect(server.log.contains("APPE"), "\(server.log)")

            // A leftover whose bytes are not this file's is replaced, not appended to.
            try server.write(TestData.bytes(1_000_000, seed: 9), at: "/pub/.other.bin.ferry-part")
            let r2 = try await fs.upload(local.file("big.bin"), to: "/pub/other.bin", options: .init()).result
            #expect(r2.resumedFrom == 0)
            #expect(FTPTest.same(server.local("/pub/other.bin"), data))
        }

        @Test func serverRefusingRenameGetsTheFileUnderItsName() async throws {
            let (server, fs) = try await FTPTest.open(.pyftpdlib, options: .init(refuseRename: true))
            let local = try TempDir(prefix: "ftp-up")
            let data = try TestData.file(local.file("a.bin"), size: 100_000)
            _ = try await fs.upload(local.file("a.bin"), to: "/pub/a.bin", options: .init()).result
            #expect(FTPTest.same(server.local("/pub/a.bin"), data))
            #expect(!FileManager.default.fileExists(atPath: server.local("/pub/.a.bin.ferry-part")))
            #expect(try await fs.serverInfo().renameRefused)
            // The next upload goes straight to its name.
            _ = try await fs.upload(local.file("a.bin"), to: "/pub/b.bin", options: .init()).result
            #expect(FTPTest.same(server.local("/pub/b.bin"), data))
        }

        @Test func pauseAndResumeAThrottledUpload() async throws {
            let (server, fs) = try await FTPTest.open(.pyftpdlib, options: .init(throttle: 1_000_000))
            let local = try TempDir(prefix: "ftp-up")
            let data = try TestData.file(local.file("u.bin"), size: 3_000_000)
            let t = fs.upload(local.file("u.bin"), to: "/pub/u.bin", options: .init())
            var cycles = 0
            while cycles < 3 {
                try await Task.sleep(for: .milliseconds(400))
                if t.state.isFinished { break }
                t.pause()
                try await Task.sleep(for: .milliseconds(150))
                t.resume()
                cycles += 1
            }
            let r = try await t.result
            #expect(cycles >= 2)
            #expect(FTPTest.same(server.local("/pub/u.bin"), data))
            // Each resume appends from what the server kept instead of starting over.
            #expect(r.bytesTransferred < 3_000_000 + 1_500_000, "sent \(r.bytesTransferred) bytes")
        }

        @Test func cancelMidUploadLeavesNoFinalFile() async throws {
            let (server, fs) = try await FTPTest.open(.pyftpdlib, options: .init(throttle: 500_000))
            let local = try TempDir(prefix: "ftp-up")
            // Larger than loopback socket buffers, so most of it is still to send.
            try TestData.file(local.file("u.bin"), size: 8_000_000)
            let t = fs.upload(local.file("u.bin"), to: "/pub/u.bin", options: .init())
            while t.currentProgress.bytesDone < 300_000 && !t.state.isFinished {
                try await Task.sleep(for: .milliseconds(20))
            }
            t.cancel()
            let e = try #require(await FTPTest.error { _ = try await t.result })
            #expect(e.code == .cancelled)
            #expect(!FileManager.default.fileExists(atPath: server.local("/pub/u.bin")))
        }

        @Test(arguments: FTPServerKind.allCases)
        func uploadOfAMissingLocalFileFailsClearly(kind: FTPServerKind) async throws {
            let (server, fs) = try await FTPTest.open(kind)
            defer { withExtendedLifetime(server) {} }
            let e = try #require(
                await FTPTest.error {
                    _ = try await fs.upload("/nonexistent/x.bin", to: "/pub/x.bin", options: .init()).result
                })
            #expect(e.code == .localIO)
        }
    }
}
