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

    /// `--delete-after`: what the camera lets go is deleted once its copy is verified;
    /// a file it protects stays, with the reason.
    @Test func deleteAfterDeletesWhatTheCameraLetsGo() throws {
        let protected = root.file("DCIM/100NIKON/DSC_0002.JPG")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: protected)
        let out = try run("sync", "camera:///DCIM?port=disk:\(root.path)", "photos", "--delete-after", "--json")
        #expect(out.status == 0, "\(out.stderr)")
        let lines = SyncCommandTests.jsonLines(out.stdout)
        let deleted = lines.filter { $0["type"] as? String == "deleted" }.compactMap { $0["path"] as? String }
        #expect(deleted.sorted() == ["/DCIM/100NIKON/DSC_0001.JPG", "/DCIM/100NIKON/DSC_0003.JPG"], "\(out.stdout)")
        #expect(out.stdout.contains("read-only on the source"), "\(out.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.file("DCIM/100NIKON")) == ["DSC_0002.JPG"])
        for i in 1...3 {
            #expect(
                FileManager.default.contents(atPath: work.file("photos/100NIKON/DSC_000\(i).JPG"))?.count == 40_000 * i)
        }
    }

    /// `ferry sync --watch` lists the camera at the interval and imports a photo taken meanwhile.
    @Test func watchImportsANewPhoto() throws {
        let watch = try ServerProcess(
            ferry,
            ["sync", "camera:///DCIM?port=disk:\(root.path)", "photos", "--watch", "--json", "--interval", "0.3"],
            cwd: work.path, logPath: work.file("watch.log"))
        defer { watch.stop() }
        func seen(_ count: Int) -> Bool {
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline {
                if SyncCommandTests.imported(SyncCommandTests.jsonLines(watch.log)).count >= count { return true }
                usleep(50_000)
            }
            return false
        }
        #expect(seen(3), "\(watch.log)")
        try TestData.file(root.file("DCIM/100NIKON/DSC_0004.JPG"), size: 12_345, seed: 4)
        #expect(seen(4), "\(watch.log)")
        #expect(SyncCommandTests.imported(SyncCommandTests.jsonLines(watch.log)).last == "/DCIM/100NIKON/DSC_0004.JPG")
        #expect(watch.process.isRunning)
    }

    /// `ferry ls camera://`: the cameras libgphoto2 finds; none here says so.
    @Test func lsOfTheFirstCameraSaysWhatItFound() throws {
        let ls = try run("ls", "camera:///")
        if ls.status == 0 {
            // Several cameras: one line each, and how to pick one.
            #expect(!ls.stderr.contains("cameras are connected") || ls.stderr.contains("?port="), "\(ls)")
        } else {
            #expect(ls.stderr.contains("no camera found"), "\(ls)")
        }
    }

    /// `ptpip://` with nothing listening (a free port on 127.0.0.1): a clear error, exit 1.
    @Test func ptpipWithNoCameraFailsClearly() throws {
        let port = Loopback.freePort()
        let ls = try run("ls", "ptpip://127.0.0.1:\(port)/")
        #expect(ls.status == 1, "\(ls)")
        #expect(ls.stderr.contains("PTP/IP at 127.0.0.1:\(port)"), "\(ls)")
    }
}
