import Foundation
import Testing

@testable import FerryKit

/// Issue 29 (library): capabilities print their members, the trace masks secrets,
/// `~` in an upload's source follows `$HOME`.
struct LibraryHabitsTests {
    @Test func capabilitiesPrintTheirMembers() {
        #expect("\(RemoteCapabilities([.rangeReads, .oneConnection]))" == "[.rangeReads, .oneConnection]")
        #expect("\(RemoteCapabilities())" == "[]")
        #expect("\(RemoteCapabilities(rawValue: 1 << 9 | 1))" == "[.nativeCount, RemoteCapabilities(rawValue: 512)]")
    }

    @Test func theTraceMasksPasswordsAndAuthorization() {
        #expect(RequestSettings.masked("PASS hunter2") == "PASS ****")
        #expect(RequestSettings.masked("pass hunter2") == "PASS ****")
        #expect(RequestSettings.masked("Authorization: Basic Zm9vOmJhcg==") == "Authorization: ****")
        #expect(RequestSettings.masked("Proxy-Authorization: Basic x") == "Proxy-Authorization: ****")
        #expect(RequestSettings.masked("USER bob") == "USER bob")
        let text = Array("GET / HTTP/1.1\r\nAuthorization: Basic Zm9v\r\n\r\n".utf8)
        let lines = text.withUnsafeBytes { RequestSettings.lines(type: 2, $0) }
        #expect(lines.map(\.text) == ["GET / HTTP/1.1", "Authorization: ****"])
        #expect(lines.allSatisfy { $0.kind == .sent })
        #expect(text.withUnsafeBytes { RequestSettings.lines(type: 3, $0) }.isEmpty)
    }

    /// `~` is `$HOME` (not the password database's home): the upload finds a file there.
    @Test func anUploadSourceStartingWithATildeIsUnderHOME() async throws {
        let home = try #require(getenv("HOME").map { String(cString: $0) })
        let name = ".ferry-tilde-\(UUID().uuidString).txt"
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("up-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        try Data("tilde".utf8).write(to: URL(fileURLWithPath: home + "/" + name))
        defer {
            try? FileManager.default.removeItem(atPath: home + "/" + name)
            try? FileManager.default.removeItem(atPath: target)
        }
        #expect(LocalPath.expandingTilde("~/" + name) == home + "/" + name)
        let fs = LocalFileSystem(url: try RemoteURL(parsing: target))
        _ = try await fs.upload("~/" + name, to: target + "/t.txt", options: .init()).result
        #expect(FileManager.default.contents(atPath: target + "/t.txt") == Data("tilde".utf8))
    }
}
