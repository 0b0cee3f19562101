import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

#if canImport(Glibc)
    import Glibc
#endif

/// Downloads where the destination's file system has no unnamed files
/// (`O_TMPFILE`: NFS, FUSE, vfat, kernels before 3.11). `PartFile` then names
/// `NAME.part` from the start and renames it at the end; the transfer contract
/// must hold the same: whole files, resume, nothing half under the final name.
/// `LocalFile.unnamedFilesFailWith` makes the unnamed open fail here as it does
/// there (every file system of the test machine has `O_TMPFILE`); it is bound
/// per test, so only that test's downloads take the fallback.
@Suite(.serialized)
struct UnnamedFileFallbackTests {
    let files: TempDir
    let out: TempDir
    let nginx: NginxServer

    init() throws {
        files = try TempDir(prefix: "www")
        out = try TempDir(prefix: "dl")
        nginx = try NginxServer(root: files.path, slowRate: 1_000_000)
    }

    func download(_ path: String, to dest: String, options: DownloadOptions = .init()) -> Transfer {
        Ferry.download(try! RemoteURL(parsing: nginx.url(path)), to: dest, options: options)
    }

    func listing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
    }

    /// Waits until `t` has taken `bytes` (or ended), noting every moment the
    /// final name exists: it may only ever hold the whole file.
    func watch(_ t: Transfer, dest: String, size: Int, until bytes: Int64) async throws -> [Int64] {
        var seen: [Int64] = []
        while t.currentProgress.bytesDone < bytes && !t.state.isFinished {
            if let s = LocalFile.size(atPath: dest) { seen.append(s) }
            try await Task.sleep(for: .milliseconds(5))
        }
        return seen.filter { $0 != Int64(size) }
    }

    @Test(arguments: [EOPNOTSUPP, EISDIR])
    func smallAndLargeFilesArriveWhole(failure: Int32) async throws {
        let small = try TestData.file(files.file("s.bin"), size: 100_000, seed: 1)
        let large = try TestData.file(files.file("l.bin"), size: 3_000_000, seed: 2)
        try await LocalFile.$unnamedFilesFailWith.withValue(failure) {
            let a = try await download("/s.bin", to: out.file("s.bin")).result
            let b = try await download("/l.bin", to: out.file("l.bin")).result
            #expect(a.size == 100_000 && b.size == 3_000_000)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: out.file("s.bin"))) == small)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out.file("l.bin"))) == large)
        #expect(try listing() == ["l.bin", "s.bin"], "no .part or journal left")
    }

    @Test func thePartIsNamedFromTheStartAndTheFinalNameOnlyEverHoldsTheWholeFile() async throws {
        // Below one write buffer an unnamed file would have no name yet (see
        // HTTPDownloadTests.aSmallDownloadHasNoPartNameUntilItStopsEarly): a
        // named .part this early shows that the fallback ran.
        let slow = try NginxServer(root: files.path, slowRate: 40_000)
        let data = try TestData.file(files.file("n.bin"), size: 200_000, seed: 3)
        let dest = out.file("n.bin")
        try await LocalFile.$unnamedFilesFailWith.withValue(EOPNOTSUPP) {
            let t = Ferry.download(try RemoteURL(parsing: slow.url("/slow/n.bin")), to: dest, options: .init())
            var wrong = try await watch(t, dest: dest, size: 200_000, until: 20_000)
            #expect(!t.state.isFinished, "the download ended before it could be watched")
            #expect(try listing() == ["n.bin.part"])
            wrong += try await watch(t, dest: dest, size: 200_000, until: .max)
            #expect(wrong.isEmpty, "the final name held a partial file: \(wrong)")
            #expect(try await t.result.size == 200_000)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data)
        #expect(try listing() == ["n.bin"])
    }

    @Test func aCancelledDownloadResumesFromItsPart() async throws {
        let data = try TestData.file(files.file("r.bin"), size: 2_000_000, seed: 4)
        let dest = out.file("r.bin")
        try await LocalFile.$unnamedFilesFailWith.withValue(EISDIR) {
            let t = download("/slow/r.bin", to: dest)
            _ = try await watch(t, dest: dest, size: 2_000_000, until: 500_000)
            t.cancel()
            _ = try? await t.result
            #expect(t.state == .cancelled)
            let kept = LocalFile.size(atPath: dest + ".part") ?? 0
            #expect(kept >= 500_000 && kept < 2_000_000, "kept \(kept)")
            #expect(FileManager.default.fileExists(atPath: DownloadJournal.path(forPart: dest + ".part")))
            #expect(!FileManager.default.fileExists(atPath: dest))
            let r = try await download("/slow/r.bin", to: dest).result
            #expect(r.resumedFrom == kept)
            #expect(r.bytesTransferred == 2_000_000 - kept)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data)
        #expect(try listing() == ["r.bin"])
    }

    /// A `kill -9` leaves the files as they are at that moment: a copy of the
    /// `.part` and its journal taken while the download runs is that state. The
    /// same download started on it resumes and ends byte-identical.
    @Test func theStateACrashLeavesResumesByteIdentical() async throws {
        let data = try TestData.file(files.file("k.bin"), size: 3_000_000, seed: 5)
        let dest = out.file("k.bin")
        let part = dest + ".part"
        let journal = DownloadJournal.path(forPart: part)
        let crash = try TempDir(prefix: "crash")
        try await LocalFile.$unnamedFilesFailWith.withValue(EOPNOTSUPP) {
            let t = download("/slow/k.bin", to: dest)
            var wrong: [Int64] = []
            // The journal is written once a megabyte is in the file.
            while !FileManager.default.fileExists(atPath: journal) && !t.state.isFinished {
                wrong += try await watch(t, dest: dest, size: 3_000_000, until: t.currentProgress.bytesDone + 1)
            }
            #expect(!t.state.isFinished, "the download ended before its state could be copied")
            // The journal first: it only ever describes bytes already written.
            try FileManager.default.copyItem(atPath: journal, toPath: crash.file("journal"))
            try FileManager.default.copyItem(atPath: part, toPath: crash.file("part"))
            #expect(!FileManager.default.fileExists(atPath: dest))
            t.cancel()
            _ = try? await t.result
            #expect(wrong.isEmpty, "the final name held a partial file: \(wrong)")
            for f in [part, journal] { try FileManager.default.removeItem(atPath: f) }
            try FileManager.default.copyItem(atPath: crash.file("journal"), toPath: journal)
            try FileManager.default.copyItem(atPath: crash.file("part"), toPath: part)
            let left = LocalFile.size(atPath: part) ?? 0
            #expect(left >= 1 << 20, "left \(left)")
            // The same source: a journal names it, and another one starts over.
            let r = try await download("/slow/k.bin", to: dest).result
            #expect(r.resumedFrom == left)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dest)) == data)
        #expect(try listing() == ["k.bin"])
    }

    @Test func aFileThatAppearsMeanwhileIsNotReplaced() async throws {
        try TestData.file(files.file("a.bin"), size: 2_000_000, seed: 6)
        let dest = out.file("a.bin")
        try await LocalFile.$unnamedFilesFailWith.withValue(EOPNOTSUPP) {
            let t = download("/slow/a.bin", to: dest)
            _ = try await watch(t, dest: dest, size: 2_000_000, until: 100_000)
            try Data("mine".utf8).write(to: URL(fileURLWithPath: dest))
            let e = await #expect(throws: FerryError.self) { _ = try await t.result }
            #expect(e?.code == .destinationExists, "\(String(describing: e))")
        }
        #expect(try String(contentsOfFile: dest, encoding: .utf8) == "mine")
        #expect((LocalFile.size(atPath: dest + ".part") ?? 0) == 2_000_000, "the bytes are kept for --overwrite")
    }

    /// A file system that refuses for another reason (no permission) is an
    /// error naming the file, not a silent fallback.
    @Test func anotherRefusalIsAnError() async throws {
        try TestData.file(files.file("p.bin"), size: 1000, seed: 7)
        let dest = out.file("p.bin")
        try await LocalFile.$unnamedFilesFailWith.withValue(EACCES) {
            let e = await #expect(throws: FerryError.self) { _ = try await download("/p.bin", to: dest).result }
            #expect(e?.description.contains("p.bin.part") == true, "\(String(describing: e))")
        }
        #expect(try listing().isEmpty)
    }
}
