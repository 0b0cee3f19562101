// ftp-client URL: a scripted session in the folder URL names: mkdir, upload
// (twice, deciding to overwrite the second time), list, download, rename,
// delete, rmdir. Each step prints "completed" or "failed" with the server's reply.
//
//   swift run ftp-client ftp://me@ftp.example.org/upload
import FerryKit
import Foundation

func step(_ name: String, _ body: () async throws -> String) async {
    do {
        let detail = try await body()
        print("\(name): completed" + (detail.isEmpty ? "" : " " + detail))
    } catch {
        print("\(name): failed: \(error)")
    }
}

guard CommandLine.arguments.count == 2, let url = try? RemoteURL(parsing: CommandLine.arguments[1]) else {
    print("usage: ftp-client URL")
    exit(2)
}
let fs: any RemoteFileSystem
do { fs = try Ferry.fileSystem(for: url) } catch {
    print("failed: \(error)")
    exit(2)
}
let base = url.path.hasSuffix("/") ? url.path : url.path + "/"
let folder = base + "ferry-example"
let local = NSTemporaryDirectory() + "ferry-example-\(getpid()).txt"
try Data("hello from ferry-client\n".utf8).write(to: URL(fileURLWithPath: local))
defer { try? FileManager.default.removeItem(atPath: local) }

await step("mkdir \(folder)") {
    try await fs.makeDirectory(folder)
    return ""
}
for attempt in 1...2 {
    await step("upload #\(attempt)") {
        // In a closure, Swift infers no thrown type for `do`: say it, and `error` is a FerryError.
        do throws(FerryError) {
            return "\(try await fs.upload(local, to: folder + "/hello.txt").result.size) bytes"
        } catch {
            guard error.code == .destinationExists else { throw error }
            // The decision: replace the server's copy.
            var replace = UploadOptions()
            replace.overwrite = .overwrite
            let size = try await fs.upload(local, to: folder + "/hello.txt", options: replace).result.size
            return "\(size) bytes (it existed: overwritten)"
        }
    }
}
await step("list") { try await fs.list(folder).map(\.name).joined(separator: ", ") }
await step("download") {
    let copy = local + ".copy"
    defer { try? FileManager.default.removeItem(atPath: copy) }
    return "\(try await fs.download(folder + "/hello.txt", to: copy).result.size) bytes"
}
await step("rename") {
    try await fs.rename(folder + "/hello.txt", to: "renamed.txt")
    return ""
}
await step("delete missing") {
    try await fs.delete(folder + "/hello.txt")
    return ""
}
await step("delete") {
    try await fs.delete(folder + "/renamed.txt")
    return ""
}
await step("rmdir") {
    try await fs.removeDirectory(folder)
    return ""
}
