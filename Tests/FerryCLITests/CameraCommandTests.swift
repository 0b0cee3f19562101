import FerryTestSupport
import Foundation
import Testing

/// `camera://` through the binary, against libgphoto2's Directory Browse driver
/// on a `disk:` port: ls, get -r, and sync twice imports once.
@Suite(.serialized)
struct CameraCommandTests {
    let root: TempDir
    let work: TempDir
    let ferry = TestProcess.ferryExecutable()

    init() throws {
        root = try TempDir(prefix: "cam-cli")
        work = try TempDir(prefix: "cam-work")
        try FileManager.default.createDirectory(atPath: root.file("DCIM/100NIKON"), withIntermediateDirectories: true)
        for i in 1...3 {
            try TestData.file(root.file("DCIM/100NIKON/DSC_000\(i).JPG"), size: 40_000 * i, seed: UInt64(i))
        }
    }

    func run(_ args: String...) throws -> TestProcess.Output { try TestProcess.run(ferry, args, cwd: work.path) }

    @Test func listsGetsAndSyncsOnce() throws {
        let url = "camera:///DCIM?port=disk:\(root.path)"
        let ls = try run("ls", "camera:///DCIM/100NIKON?port=disk:\(root.path)")
        #expect(ls.status == 0 && ls.stdout.contains("DSC_0001.JPG") && ls.stdout.contains("120000"), "\(ls)")
        let get = try run("get", "-r", url, "-o", "tree")
        #expect(get.status == 0, "\(get.stderr)")
        #expect(FileManager.default.contents(atPath: work.file("tree/100NIKON/DSC_0003.JPG"))?.count == 120_000)
        let first = try run("sync", url, "photos")
        #expect(first.status == 0 && (first.stdout + first.stderr).contains("imported 3 files"), "\(first)")
        let second = try run("sync", url, "photos")
        #expect(second.status == 0 && (second.stdout + second.stderr).contains("imported 0 files"), "\(second)")
    }
}
