import FerryTestSupport
import Foundation

/// Every file under `dir` but the sync history and its lock, relative and sorted.
func filesBelow(_ dir: TempDir) -> [String] {
    let fm = FileManager.default
    return (fm.subpaths(atPath: dir.path) ?? []).filter { p in
        var isDir: ObjCBool = false
        fm.fileExists(atPath: dir.file(p), isDirectory: &isDir)
        return !isDir.boolValue && !p.hasPrefix(".ferry-sync")
    }.sorted()
}
