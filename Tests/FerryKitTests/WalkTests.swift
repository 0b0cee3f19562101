import Foundation
import Synchronization
import Testing

@testable import FerryKit

/// `walk` lists several folders at once and still returns one order.
struct WalkTests {
    /// A tree in memory whose listings take a while, counting how many run at once.
    final class SlowTree: RemoteFileSystem, Sendable {
        let url = try! RemoteURL(parsing: "ftp://127.0.0.1/")
        let folders: [String: [RemoteEntry]]
        // Atomics, not a Mutex: ThreadSanitizer cannot see a contended Mutex's order.
        let now = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        let calls = Atomic<Int>(0)

        init(_ folders: [String: [RemoteEntry]]) { self.folders = folders }

        func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
            most.max(now.add(1, ordering: .sequentiallyConsistent).newValue, ordering: .sequentiallyConsistent)
            calls.add(1, ordering: .sequentiallyConsistent)
            do { try await Task.sleep(for: .milliseconds(20)) } catch {
                throw FerryError.wrap(error, operation: "list")
            }
            now.subtract(1, ordering: .sequentiallyConsistent)
            guard let entries = folders[path] else { throw FerryError(.notFound, target: path) }
            return entries.shuffled()
        }

        func stat(_ path: String) async throws(FerryError) -> RemoteEntry { throw unsupported("stat", path) }

        func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
            Transfer.failed(unsupported("download", path), source: path, destination: destination)
        }
    }

    static func folder(_ path: String) -> RemoteEntry {
        RemoteEntry(name: (path as NSString).lastPathComponent, path: path, kind: .directory)
    }

    static func file(_ path: String, hidden: Bool = false) -> RemoteEntry {
        RemoteEntry(name: (path as NSString).lastPathComponent, path: path, kind: .file, size: 1, isHidden: hidden)
    }

    @Test func listsFoldersAtOnceAndReturnsThemDepthFirstInNameOrder() async throws {
        var tree: [String: [RemoteEntry]] = ["/r": [Self.file("/r/top"), Self.file("/r/.sys", hidden: true)]]
        for i in 0..<8 {
            let d = "/r/d\(i)"
            tree["/r"]!.append(Self.folder(d))
            tree[d] = [Self.file(d + "/b"), Self.file(d + "/a"), Self.folder(d + "/sub")]
            tree[d + "/sub"] = [Self.file(d + "/sub/x")]
        }
        // A link back up does not loop.
        tree["/r/d0/sub"]!.append(Self.folder("/r"))
        let fs = SlowTree(tree)
        let (folders, files) = try await fs.walk("/r", width: 4)
        var expectedFiles = ["/r/top"]
        var expectedFolders: [String] = []
        for i in 0..<8 {
            expectedFolders += ["/r/d\(i)", "/r/d\(i)/sub"]
            expectedFiles += ["/r/d\(i)/a", "/r/d\(i)/b", "/r/d\(i)/sub/x"]
            if i == 0 { expectedFolders.append("/r") }
        }
        // Name order: "d0" < ... < "top".
        expectedFiles = expectedFiles.dropFirst() + ["/r/top"]
        #expect(files.map(\.path) == expectedFiles)
        #expect(folders.map(\.path) == expectedFolders)
        #expect(fs.calls.load(ordering: .sequentiallyConsistent) == 17)
        #expect(fs.most.load(ordering: .sequentiallyConsistent) == 4)

        let hidden = try await fs.walk("/r", includeHidden: true, width: 1)
        #expect(hidden.files.map(\.path).contains("/r/.sys"))
        #expect(hidden.files.count == files.count + 1)
    }

    @Test func aFailedListingFailsTheWalk() async throws {
        let fs = SlowTree(["/r": [Self.folder("/r/gone"), Self.folder("/r/here")], "/r/here": []])
        await #expect(throws: FerryError.self) { try await fs.walk("/r") }
    }
}
