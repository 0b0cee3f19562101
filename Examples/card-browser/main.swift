// card-browser URL: counts and lists a folder on a FlashAir card (or an FTP
// server, or a local folder), enters its first subfolder, and goes back up.
//
//   swift run card-browser flashair://192.168.0.1/DCIM
import FerryKit
import Foundation

func show(_ fs: any RemoteFileSystem, _ folder: String) async throws {
    print("\(folder): \(try await fs.count(folder)) entries")
    for entry in try await fs.list(folder) where !entry.isHidden {
        print(entry.isDirectory ? "  \(entry.name)/" : "  \(entry.name)  \(entry.size ?? 0) bytes")
    }
}

guard CommandLine.arguments.count == 2 else {
    print("usage: card-browser URL")
    exit(2)
}
do {
    let fs = try Ferry.fileSystem(for: RemoteURL(parsing: CommandLine.arguments[1]))
    let start = fs.url.path.isEmpty ? "/" : fs.url.path
    try await show(fs, start)
    if let sub = try await fs.list(start).first(where: { $0.isDirectory && !$0.isHidden }) {
        print("enter \(sub.name)")
        try await show(fs, sub.path)
        print("up")
        try await show(fs, start)
    }
    if fs.capabilities.contains(.cardInfo) {
        let info = try await fs.info()
        print("card: firmware \(info.firmware ?? "?"), SSID \(info.ssid ?? "?")")
    }
} catch {
    print("failed: \(error)")
    exit(1)
}
