import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// The short forms a first program uses (issue 15, 6), against real servers:
/// default options, `~` and missing parents in destinations, `URL`-typed paths,
/// progress often enough for a fast upload.
@Suite(.serialized) struct FirstUseTests {
    @Test func defaultsTildeParentsAndURLs() async throws {
        let root = try TempDir(prefix: "first-src")
        let body = Data((0..<300_000).map { UInt8($0 % 253) })
        try body.write(to: URL(fileURLWithPath: root.file("a.bin")))
        let nginx = try NginxServer(root: root.path)
        let fs = try Ferry.fileSystem(for: try #require(URL(string: nginx.url("/"))))

        // Missing parents are created; the defaults need no options.
        let out = try TempDir(prefix: "first-out")
        let deep = out.file("x/y/z/a.bin")
        #expect(try await fs.download("/a.bin", to: deep).result.size == 300_000)
        #expect(FileManager.default.contents(atPath: deep) == body)

        // A destination under ~ (a folder made for the test, removed after).
        let home = NSHomeDirectory()
        let folder = ".ferry-first-use-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: home + "/" + folder) }
        let result = try await fs.download("/a.bin", to: "~/\(folder)/in/a.bin").result
        #expect(result.destination.hasPrefix(home) || result.size == 300_000, "\(result)")
        #expect(FileManager.default.contents(atPath: home + "/\(folder)/in/a.bin") == body)

        // Foundation URLs on both sides.
        let target = URL(fileURLWithPath: out.file("u/a.bin"))
        _ = try await Ferry.download(try #require(URL(string: nginx.url("/a.bin"))), to: target).result
        #expect(FileManager.default.contents(atPath: target.path) == body)

        // Without createParents the old behaviour: a missing folder fails, naming the file.
        var strict = DownloadOptions()
        strict.createParents = false
        await #expect(throws: FerryError.self) {
            try await fs.download("/a.bin", to: out.file("none/a.bin"), options: strict).result
        }
    }

    @Test func ftpShortFormsAndUploadProgressEveryPercent() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        defer { server.stop() }
        let fs = try Ferry.fileSystem(for: RemoteURL(parsing: server.url("/")))
        let local = try TempDir(prefix: "first-up")
        let size = 64 << 20
        try Data(repeating: 9, count: size).write(to: URL(fileURLWithPath: local.file("big.bin")))

        // mkdir -p by default; upload into a missing folder creates it too.
        try await fs.makeDirectory("/pub/a/b")
        #expect(try await fs.stat("/pub/a/b").isDirectory)
        // count works through the protocol on a server too; a missing folder is notFound, as in list.
        #expect(try await fs.count("/pub/a") == 1)
        do {
            _ = try await fs.count("/pub/nope")
            Issue.record("count of a missing folder succeeded")
        } catch let e {
            #expect(e.code == .notFound && e.operation == "count", "\(e)")
        }
        let t = fs.upload(URL(fileURLWithPath: local.file("big.bin")), to: "/pub/new/big.bin")
        var seen: [TransferProgress] = []
        for await p in t.progress { seen.append(p) }
        #expect(try await t.result.size == Int64(size))
        #expect(FileManager.default.fileExists(atPath: server.local("/pub/new/big.bin")))
        // One stream per transfer: a second access is the same, finished stream.
        var again = 0
        for await _ in t.progress { again += 1 }
        #expect(again == 0, "a second access made a new stream")
        var other = 0
        for await _ in t.makeProgressStream() { other += 1 }
        #expect(other == 1, "a new stream gives the final snapshot")
        let percents = Set(seen.compactMap { $0.fraction.map { Int($0 * 100) } })
        #expect(percents.count >= 50, "\(percents.count) distinct percents in \(seen.count) snapshots")
        // Bytes since the last snapshot add up (no snapshot was skipped by this fast reader).
        let added = seen.reduce(Int64(0)) { $0 + $1.bytesSinceLastSnapshot }
        #expect(added <= Int64(size) && seen.last?.bytesDone == Int64(size), "\(added)")
    }
}
