import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// `camera://` through libgphoto2, against its "Directory Browse" driver on a
/// `disk:` port: a folder that libgphoto2 presents as a camera, so the calls
/// are those a real camera gets.
@Suite(.serialized)
struct CameraFileSystemTests {
    let root: TempDir
    let out: TempDir
    let photo: Data

    init() throws {
        root = try TempDir(prefix: "camera")
        out = try TempDir(prefix: "camera-out")
        try FileManager.default.createDirectory(atPath: root.file("DCIM/100CANON"), withIntermediateDirectories: true)
        photo = try TestData.file(root.file("DCIM/100CANON/IMG_0001.JPG"), size: 250_000, seed: 7)
        try TestData.file(root.file("DCIM/100CANON/IMG_0002.JPG"), size: 1_000, seed: 8)
        // A time in the past, to see it carried over.
        let old = Date(timeIntervalSince1970: 1_700_000_000)
        try FileManager.default.setAttributes(
            [.modificationDate: old], ofItemAtPath: root.file("DCIM/100CANON/IMG_0001.JPG"))
    }

    func camera(_ path: String = "/") throws -> any RemoteFileSystem {
        try Ferry.fileSystem(for: try RemoteURL(parsing: "camera://\(path)?port=disk:\(root.path)"))
    }

    @Test func urls() throws {
        let u = try RemoteURL(parsing: "camera:///DCIM?port=usb:001,004&model=Canon%20EOS%20R6")
        #expect(u.scheme == .camera && u.host == "camera" && u.path == "/DCIM")
        #expect(u.query == "port=usb:001,004&model=Canon%20EOS%20R6")
        let items = CameraFileSystem.queryItems(u.query!)
        #expect(items["port"] == "usb:001,004" && items["model"] == "Canon EOS R6")
    }

    @Test func listsStatsAndDownloads() async throws {
        let fs = try camera()
        #expect(fs.capabilities.contains(.oneConnection))
        #expect(try await fs.list("/").map(\.name) == ["DCIM"])
        let files = try await fs.list("/DCIM/100CANON")
        #expect(files.map(\.name).sorted() == ["IMG_0001.JPG", "IMG_0002.JPG"])
        let first = try #require(files.first { $0.name == "IMG_0001.JPG" })
        #expect(first.size == 250_000 && first.kind == .file)
        #expect(first.modified == RemoteTimestamp(utc: Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(try await fs.stat("/DCIM/100CANON/IMG_0002.JPG").size == 1_000)
        let result = try await fs.download(first, to: out.file("a.jpg"), options: .init()).result
        #expect(result.size == 250_000)
        #expect(FileManager.default.contents(atPath: out.file("a.jpg")) == photo)
        #expect(!FileManager.default.fileExists(atPath: out.file("a.jpg.part")))
        let copied = try FileManager.default.attributesOfItem(atPath: out.file("a.jpg"))[.modificationDate] as? Date
        #expect(copied == Date(timeIntervalSince1970: 1_700_000_000))
        // Never replaced unless asked.
        await #expect(throws: FerryError.self) {
            try await fs.download(first, to: out.file("a.jpg"), options: .init()).result
        }
    }

    @Test func missingThingsAndWritesSayWhy() async throws {
        let fs = try camera()
        do {
            _ = try await fs.stat("/DCIM/100CANON/NOPE.JPG")
            Issue.record("found a missing file")
        } catch {
            #expect(error.code == .notFound)
        }
        do {
            _ = try await fs.download("/DCIM/100CANON/NOPE.JPG", to: out.file("n.jpg"), options: .init()).result
            Issue.record("downloaded a missing file")
        } catch {
            #expect(error.code == .notFound || error.code == .serverError, "\(error)")
        }
        do {
            try await fs.delete("/DCIM/100CANON/IMG_0001.JPG")
            Issue.record("deleted")
        } catch {
            #expect(error.code == .unsupportedOperation)
        }
        #expect(FileManager.default.fileExists(atPath: root.file("DCIM/100CANON/IMG_0001.JPG")))
        let nowhere = try Ferry.fileSystem(for: try RemoteURL(parsing: "camera:///?port=disk:\(root.path)/gone"))
        do {
            _ = try await nowhere.list("/")
            Issue.record("listed a folder that is not there")
        } catch {
            #expect(error.code == .notFound && error.detail?.contains("disk: port") == true, "\(error)")
        }
    }

    /// Calls from many tasks at once all end: they run one by one on the camera's thread.
    @Test func callsFromManyTasksRunOneByOne() async throws {
        let fs = try camera()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { try await fs.list("/DCIM/100CANON").count } }
            for try await count in group { #expect(count == 2) }
        }
    }
}
