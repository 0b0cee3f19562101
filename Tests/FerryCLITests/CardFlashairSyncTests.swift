import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The third-party client `flashair-sync` (PyPI, installed into `.build/test-venv`
/// when missing) against `ferry card` (issue 14, item 7). It uploads without
/// `UPDIR` (into the card's root) and deletes with `upload.cgi?DEL=NAME`, a path
/// without a leading `/`, which real cards read from the root; `ferry card`
/// answered 403 and the delete failed.
@Suite(.serialized)
struct CardFlashairSyncTests {
    let root: TempDir
    let local: TempDir
    let card: FerryCardProcess

    init() throws {
        try TestVenv.require(module: "_flashair_sync", package: "flashair-sync")
        root = try TempDir(prefix: "fas-card")
        local = try TempDir(prefix: "fas-local")
        try TestData.file(root.file("old.gcode"), size: 1_000, seed: 1)
        try TestData.file(root.file("keep.txt"), size: 10, seed: 2)
        try FileManager.default.createDirectory(atPath: root.file("DCIM"), withIntermediateDirectories: true)
        try TestData.file(local.file("part one.gcode"), size: 120_000, seed: 3)
        try TestData.file(local.file("part2.gcode"), size: 5_000, seed: 4)
        card = try FerryCardProcess(folder: root.path)
    }

    /// Waits up to `seconds` for `condition`.
    func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(100_000)
        }
        return condition()
    }

    func same(_ name: String) -> Bool {
        guard let a = FileManager.default.contents(atPath: local.file(name)),
            let b = FileManager.default.contents(atPath: root.file(name))
        else { return false }
        return a == b
    }

    @Test func uploadsAndDeletesByRelativeName() throws {
        // -i: upload what the card lacks and delete the card's .gcode files the
        // folder does not have (old.gcode); then keep watching every 0.2 s.
        let sync = try SpawnedProcess(
            TestVenv.program("flashair_sync"), [local.path, "127.0.0.1:\(card.port)", "gcode", "-i", "-p", "0.2"],
            logPath: local.file("../fas-\(card.port).log"))
        defer { sync.stop(grace: 0.2) }
        let log = {
            (try? String(contentsOfFile: self.local.file("../fas-\(self.card.port).log"), encoding: .utf8)) ?? ""
        }

        #expect(eventually(20) { same("part one.gcode") && same("part2.gcode") }, "\(log())\n\(card.log)")
        #expect(eventually(10) { !FileManager.default.fileExists(atPath: root.file("old.gcode")) }, "\(log())")
        // Only .gcode files were its business.
        #expect(FileManager.default.fileExists(atPath: root.file("keep.txt")))

        // A file removed locally goes from the card, by its bare name again.
        try FileManager.default.removeItem(atPath: local.file("part2.gcode"))
        #expect(
            eventually(10) { !FileManager.default.fileExists(atPath: root.file("part2.gcode")) }, "\(log())")
        #expect(same("part one.gcode"))
        #expect(!log().contains("ERROR"), "\(log())")
        #expect(!log().contains("403"), "\(log())")
    }

    /// Relative paths start at the card's root for every path parameter, and
    /// confinement holds for them as for absolute ones.
    @Test func relativePathsStartAtTheRootAndStayInside() throws {
        func get(_ target: String) throws -> RawHTTP.Response { try RawHTTP.request(port: card.port, target: target) }
        let list = try get("/command.cgi?op=100&DIR=DCIM")
        #expect(list.status == 200 && list.text.hasPrefix("WLANSD_FILELIST"), "\(list.status) \(list.text)")
        #expect(try get("/command.cgi?op=101&DIR=").text == "3")
        #expect(try get("/upload.cgi?UPDIR=DCIM/NEW").text == "SUCCESS")
        #expect(FileManager.default.fileExists(atPath: root.file("DCIM/NEW")))
        #expect(try get("/upload.cgi?DEL=DCIM/NEW").text == "SUCCESS")
        #expect(!FileManager.default.fileExists(atPath: root.file("DCIM/NEW")))
        for escape in ["..", "../x", "DCIM/../../x", "..%2fx", "..%5cx"] {
            for target in [
                "/upload.cgi?DEL=\(escape)", "/upload.cgi?UPDIR=\(escape)", "/command.cgi?op=100&DIR=\(escape)",
            ] {
                let r = try get(target)
                #expect(r.status == 403 || r.status == 404, "\(target): \(r.status) \(r.text)")
            }
        }
    }
}
