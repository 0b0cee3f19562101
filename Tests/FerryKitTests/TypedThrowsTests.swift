import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Every `RemoteFileSystem` call and every public async call of FerryKit throws
/// `FerryError` itself (`throws(FerryError)`). Each `catch` here hands `error` to
/// ``outcome(_:)``, which takes a `FerryError` and switches over its code: there
/// is no cast anywhere, so this file stops compiling the day one of these calls
/// goes back to an untyped `throws`. It runs on real backends: a local folder and
/// `ferry card` (a FlashAir card over HTTP).
@Suite struct TypedThrowsTests {
    /// The code a call failed with, by a switch over `error.code` (no cast).
    static func outcome(_ error: FerryError) -> String {
        switch error.code {
        case .notFound: "notFound"
        case .destinationExists: "destinationExists"
        case .directoryNotEmpty: "directoryNotEmpty"
        case .tooLarge: "tooLarge"
        case .unsupportedOperation: "unsupportedOperation"
        case .invalidURL: "invalidURL"
        default: "unexpected code \(error.code): \(error)"
        }
    }

    /// Calls each operation once where it must work and once where it must fail,
    /// inside `folder` of `fs` (which holds `IMG_0001.JPG`, also on disk at
    /// `localPhoto`), and says what each did.
    static func exercise(_ fs: any RemoteFileSystem, _ folder: String, localPhoto: String) async -> [String] {
        var seen: [String] = []
        let photo = folder + "/IMG_0001.JPG"
        let missing = folder + "/MISSING"
        func note(_ call: String, _ what: String) { seen.append("\(call): \(what)") }

        do { note("list", "\(try await fs.list(folder).count)") } catch { note("list", outcome(error)) }
        do { note("list missing", "\(try await fs.list(missing))") } catch { note("list missing", outcome(error)) }
        do { note("stat", "\(try await fs.stat(photo).size ?? -1)") } catch { note("stat", outcome(error)) }
        do { note("stat missing", "\(try await fs.stat(missing))") } catch { note("stat missing", outcome(error)) }
        do { note("count", "\(try await fs.count(folder))") } catch { note("count", outcome(error)) }
        do { note("count missing", "\(try await fs.count(missing))") } catch { note("count missing", outcome(error)) }
        do { note("data", "\(try await fs.data(at: photo).count)") } catch { note("data", outcome(error)) }
        do {
            note("data limit", "\(try await fs.data(at: photo, limit: 100).count)")
        } catch {
            note("data limit", outcome(error))
        }
        do { note("data missing", "\(try await fs.data(at: missing))") } catch { note("data missing", outcome(error)) }
        do {
            note("data range", "\(try await fs.data(at: photo, range: 0..<2).map { $0 })")
        } catch {
            note("data range", outcome(error))
        }
        do {
            note("thumbnail", "\(try await fs.thumbnail(photo).map { Array($0.jpeg) } == SampleJPEG.thumbnail)")
        } catch {
            note("thumbnail", outcome(error))
        }
        do {
            note("thumbnail missing", "\(String(describing: try await fs.thumbnail(missing)))")
        } catch {
            note("thumbnail missing", outcome(error))
        }
        do {
            try await fs.makeDirectory(folder + "/NEW", createParents: false)
            note("mkdir", "done")
        } catch {
            note("mkdir", outcome(error))
        }
        do {
            try await fs.makeDirectory(folder + "/NEW", createParents: false)
            note("mkdir again", "done")
        } catch {
            note("mkdir again", outcome(error))
        }
        do {
            try await fs.makeDirectory(missing + "/SUB", createParents: false)
            note("mkdir in missing", "done")
        } catch {
            note("mkdir in missing", outcome(error))
        }
        do {
            _ = try await fs.upload(localPhoto, to: folder + "/NEW/COPY.JPG").result
            note("upload", "done")
        } catch {
            note("upload", outcome(error))
        }
        do {
            try await fs.removeDirectory(folder + "/NEW")
            note("rmdir full", "done")
        } catch {
            note("rmdir full", outcome(error))
        }
        do {
            try await fs.rename(folder + "/NEW/COPY.JPG", to: folder + "/NEW/MOVED.JPG")
            note("rename", "done")
        } catch {
            note("rename", outcome(error))
        }
        do {
            try await fs.rename(missing, to: folder + "/ELSEWHERE")
            note("rename missing", "done")
        } catch {
            note("rename missing", outcome(error))
        }
        do {
            try await fs.delete(missing)
            note("delete missing", "done")
        } catch {
            note("delete missing", outcome(error))
        }
        for name in ["COPY.JPG", "MOVED.JPG"] {
            if (try? await fs.stat(folder + "/NEW/" + name)) != nil {
                do {
                    try await fs.delete(folder + "/NEW/" + name)
                    note("delete", "done")
                } catch {
                    note("delete", outcome(error))
                }
            }
        }
        do {
            try await fs.removeDirectory(folder + "/NEW")
            note("rmdir", "done")
        } catch {
            note("rmdir", outcome(error))
        }
        do {
            let (folders, files) = try await fs.walk(folder)
            note("walk", "\(folders.count) folders, \(files.count) files")
        } catch {
            note("walk", outcome(error))
        }
        do { note("walk missing", "\(try await fs.walk(missing))") } catch { note("walk missing", outcome(error)) }
        return seen
    }

    /// What ``exercise(_:_:localPhoto:)`` sees on a source that can rename.
    static func expected(photoSize: Int, rename: String) -> [String] {
        [
            "list: 1", "list missing: notFound",
            "stat: \(photoSize)", "stat missing: notFound",
            "count: 1", "count missing: notFound",
            "data: \(photoSize)", "data limit: tooLarge", "data missing: notFound", "data range: [255, 216]",
            "thumbnail: true", "thumbnail missing: notFound",
            "mkdir: done", "mkdir again: destinationExists", "mkdir in missing: notFound",
            "upload: done", "rmdir full: directoryNotEmpty",
            "rename: \(rename)", "rename missing: \(rename == "done" ? "notFound" : rename)",
            "delete missing: notFound", "delete: done", "rmdir: done",
            "walk: 0 folders, 1 files", "walk missing: notFound",
        ]
    }

    static func photoFolder() throws -> (TempDir, Int) {
        let dir = try TempDir(prefix: "typed-throws")
        try FileManager.default.createDirectory(atPath: dir.file("DCIM"), withIntermediateDirectories: true)
        let photo = SampleJPEG.withThumbnail()
        try Data(photo).write(to: URL(fileURLWithPath: dir.file("DCIM/IMG_0001.JPG")))
        return (dir, photo.count)
    }

    @Test func aLocalFolderThrowsFerryErrorFromEveryCall() async throws {
        let (dir, size) = try Self.photoFolder()
        let fs = try Ferry.fileSystem(for: RemoteURL(parsing: "file://" + dir.path))
        let seen = await Self.exercise(fs, dir.file("DCIM"), localPhoto: dir.file("DCIM/IMG_0001.JPG"))
        #expect(seen == Self.expected(photoSize: size, rename: "done"))
    }

    @Test func aCardThrowsFerryErrorFromEveryCall() async throws {
        let (dir, size) = try Self.photoFolder()
        let card = try FerryCardProcess(folder: dir.path)
        defer { card.stop() }
        let fs = try Ferry.fileSystem(for: RemoteURL(parsing: card.url("/")))
        let seen = await Self.exercise(fs, "/DCIM", localPhoto: dir.file("DCIM/IMG_0001.JPG"))
        #expect(seen == Self.expected(photoSize: size, rename: "unsupportedOperation"))
        do {
            let info = try await fs.info()
            #expect(info.firmware != nil)
        } catch {
            Issue.record("info: \(Self.outcome(error))")
        }
    }

    @Test func theEntryPointsThrowFerryErrorToo() async {
        do {
            _ = try RemoteURL(parsing: "http:///no-host")
            Issue.record("parsed a URL without a host")
        } catch {
            #expect(Self.outcome(error) == "invalidURL")
        }
        do {
            _ = try Ferry.fileSystem(for: URL(string: "gopher://127.0.0.1/")!)
            Issue.record("opened gopher://")
        } catch {
            #expect(error.code == .unsupportedScheme, "\(error)")
        }
        do {
            _ = try EXIFThumbnail.extract(fromFileAt: "/nonexistent/ferry/a.jpg")
            Issue.record("read a missing file")
        } catch {
            #expect(error.code == .localIO && error.target == "/nonexistent/ferry/a.jpg", "\(error)")
        }
        do {
            _ = try await Ferry.download(URL(string: "http://127.0.0.1:1/a.bin")!, to: "/nonexistent/ferry/a.bin")
                .result
            Issue.record("downloaded from a closed port")
        } catch {
            // The destination's missing folder is found first now ("no such folder /nonexistent").
            #expect([.connectionFailed, .localIO, .notFound].contains(error.code), "\(error)")
        }
    }
}
