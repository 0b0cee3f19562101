import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// When a `.part` makes its periodic checkpoint (`fdatasync` and the journal).
struct PartFileCheckpointTests {
    @Test func aDownloadThatWaitedForAConnectionMakesNoCheckpointOnItsFirstByte() async throws {
        let work = try TempDir(prefix: "part-checkpoint")
        let part = PartFile(destination: work.file("photo.jpg"), source: "sftp://nas/photo.jpg")
        #expect(try part.open(resume: true) == 0)
        // `get -r` opens its files long before the per-host limit lets them run.
        try await Task.sleep(for: .milliseconds(2_200))
        try part.begin(at: 0, etag: nil, modified: .stamp(seconds: 1_700_000_000, nanoseconds: 0), totalSize: 10)
        let bytes: [UInt8] = Array(repeating: 7, count: 10)
        #expect(bytes.withUnsafeBytes { part.append($0) })
        // A checkpoint would have named the file, synced it and written its journal.
        #expect(part.journal.durableLength == 0)
        #expect(!FileManager.default.fileExists(atPath: part.journalPath))
        #expect(!FileManager.default.fileExists(atPath: part.partPath))
        part.settle()
    }
}
