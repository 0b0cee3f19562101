import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

#if canImport(Glibc)
    import Glibc
#endif

/// Uploads from the page into a local folder (issue 25, item 8): a failed one
/// leaves no `.part` or journal there, its error speaks of an upload, and the
/// partial file of one in progress is not listed.
@Suite(.serialized)
struct UploadPartTests {
    /// A 1 MiB tmpfs, unmounted when released.
    final class SmallDisk: Sendable {
        let dir: TempDir
        var path: String { dir.path }

        init() throws {
            dir = try TempDir(prefix: "upload-small-disk")
            let m = try TestProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir.path])
            try #require(m.status == 0, "mounting a tmpfs is not permitted here: \(m.stderr)")
        }

        deinit {
            if (try? TestProcess.run("/bin/umount", [dir.path]))?.status != 0 {
                _ = try? TestProcess.run("/bin/umount", ["-l", dir.path])
            }
        }
    }

    static func api(serving folder: String, cache: String) throws -> WebAPI {
        var configuration = WebConfiguration(source: try RemoteURL(parsing: folder))
        configuration.cacheDirectory = cache
        return try WebAPI(configuration: configuration)
    }

    static func part(_ name: String, bytes: Int, in spool: TempDir) throws -> MultipartPart {
        let path = spool.file(UUID().uuidString)
        try Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: path))
        return MultipartPart(
            headers: [:], name: "file", filename: name, contentType: "application/octet-stream",
            content: .file(path: path, size: Int64(bytes)))
    }

    static func text(_ response: HTTPResponse) -> String {
        guard case .data(let data) = response.body else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func anUploadIntoAFullDiskLeavesNoPartialFile() async throws {
        let disk = try SmallDisk()
        let cache = try TempDir(prefix: "upload-full-cache")
        let spool = try TempDir(prefix: "upload-full-spool")
        let api = try Self.api(serving: disk.path, cache: cache.path)
        let answer = await api.handle(
            APITests.post(
                "/api/upload?path=/", body: .multipart([try Self.part("BIG.JPG", bytes: 3_000_000, in: spool)])))
        #expect(answer.status >= 400, "\(answer.status)")
        let text = Self.text(answer)
        #expect(text.contains("upload") && !text.contains("download"), "\(text)")
        let left = try FileManager.default.contentsOfDirectory(atPath: disk.path)
        #expect(left.isEmpty, "the full disk holds \(left)")
        // Room again: the same upload goes through.
        let small = await api.handle(
            APITests.post(
                "/api/upload?path=/", body: .multipart([try Self.part("SMALL.JPG", bytes: 300_000, in: spool)])))
        #expect(small.status == 201)
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == ["SMALL.JPG"])
    }

    @Test func thePartialFileOfAnUploadInProgressIsNotListed() async throws {
        let folder = try TempDir(prefix: "upload-listing")
        let cache = try TempDir(prefix: "upload-listing-cache")
        let api = try Self.api(serving: folder.path, cache: cache.path)
        for name in ["NEW.JPG.part", "NEW.JPG.part.journal", "OLD.JPG.part", "A.JPG"] {
            try Data("x".utf8).write(to: URL(fileURLWithPath: folder.file(name)))
        }
        api.uploading.withLock { _ = $0.insert(folder.file("NEW.JPG")) }
        let listing = APITests.object(await api.handle(APITests.request("/api/list?path=/")))
        let names = Set((listing["entries"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
        // Another .part (a download's, resumable) is listed as before.
        #expect(names == ["A.JPG", "OLD.JPG.part"], "\(names)")
        api.uploading.withLock { _ = $0.remove(folder.file("NEW.JPG")) }
        let after = APITests.object(await api.handle(APITests.request("/api/list?path=/")))
        #expect((after["entries"] as? [Any])?.count == 4)
    }
}
