import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// Ferry's ez Share client against `ferry card --kind ezshare`, started as a
/// process on a free port, through a proxy that counts connections.
@Suite(.serialized)
struct EzShareFileSystemTests {
    let root: TempDir
    let out: TempDir
    let photo: [UInt8]

    init() throws {
        root = try TempDir(prefix: "ez-root")
        out = try TempDir(prefix: "ez-out")
        try FileManager.default.createDirectory(
            atPath: root.file("DCIM/100CANON"), withIntermediateDirectories: true)
        photo = SampleJPEG.withThumbnail(orientation: 1) + [UInt8](repeating: 0x5A, count: 200_000)
        try Data(photo).write(to: URL(fileURLWithPath: root.file("DCIM/100CANON/Birthday party.jpg")))
        for i in 0..<4 { try TestData.file(root.file("DCIM/100CANON/IMG_000\(i).JPG"), size: 50_000, seed: UInt64(i)) }
    }

    /// The card's only connection holds whatever the options say: the emulator
    /// here would take four at once, and the proxy sees no more than one.
    @Test func oneConnectionWhateverTheOptionsSay() async throws {
        let card = try FerryCardProcess(folder: root.path, arguments: ["--kind", "ezshare", "--max-connections", "4"])
        defer { card.stop() }
        let proxy = try FaultProxy(upstreamPort: card.port)
        let fs = try Ferry.fileSystem(
            for: try RemoteURL(parsing: "ezshare://127.0.0.1:\(proxy.port)/"),
            options: ConnectionOptions(maxConnections: 8))
        #expect(fs.capabilities.contains(.oneConnection))
        let listed = try await fs.list("/DCIM/100CANON")
        #expect(listed.map(\.name).sorted() == ["Birthday party.jpg"] + (0..<4).map { "IMG_000\($0).JPG" })
        try await withThrowingTaskGroup(of: Void.self) { group in
            for entry in listed {
                group.addTask {
                    _ = try await fs.download(entry, to: out.file(entry.name), options: .init()).result
                }
                group.addTask { _ = try await fs.list("/DCIM") }
            }
            group.addTask { _ = try await fs.thumbnail("/DCIM/100CANON/Birthday party.jpg") }
            try await group.waitForAll()
        }
        #expect(proxy.maxConcurrentConnections == 1)
        #expect(FileManager.default.contents(atPath: out.file("Birthday party.jpg")) == Data(photo))
    }

    @Test func rangesThumbnailsAndStat() async throws {
        let card = try FerryCardProcess(folder: root.path, arguments: ["--kind", "ezshare"])
        defer { card.stop() }
        let fs = try Ferry.fileSystem(for: try RemoteURL(parsing: card.ezShareURL()))
        // Asked by its long name, sent by its alias.
        let slice = try await fs.data(at: "/DCIM/100CANON/Birthday party.jpg", range: 100..<120)
        #expect(slice == Data(photo[100..<120]))
        let thumb = try #require(try await fs.thumbnail("/DCIM/100CANON/Birthday party.jpg"))
        #expect(Array(thumb.jpeg) == SampleJPEG.thumbnail)
        let entry = try await fs.stat("/DCIM/100CANON/Birthday party.jpg")
        #expect(entry.kind == .file && entry.size == nil && entry.modified?.zone == .floating)
        // The alias the links name works as a name too, and case does not matter.
        #expect(try await fs.stat("/dcim/100canon/BIRTHD~1.JPG").name == "Birthday party.jpg")
        do {
            _ = try await fs.stat("/DCIM/100CANON/missing.jpg")
            Issue.record("a missing file was found")
        } catch {
            #expect(error.code == .notFound)
        }
        do {
            _ = try await fs.list("/DCIM/100CANON/IMG_0000.JPG")
            Issue.record("a file was listed")
        } catch {
            #expect(error.code == .notFound && error.detail == "is a file, not a folder")
        }
        let info = try await fs.info()
        #expect(info.firmware?.hasPrefix("LZ1801EDPG:") == true)
    }

    /// A web server that is no ez Share card is told apart.
    @Test func aHostThatIsNoCard() async throws {
        let www = try TempDir(prefix: "ez-www")
        let nginx = try NginxServer(root: www.path)
        let fs = try Ferry.fileSystem(for: try RemoteURL(parsing: "ezshare://127.0.0.1:\(nginx.port)/"))
        do {
            _ = try await fs.list("/")
            Issue.record("nginx listed as a card")
        } catch {
            #expect(error.code == .notFound && error.detail?.contains("is this an ez Share card?") == true, "\(error)")
        }
    }
}
