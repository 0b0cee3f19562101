// LeakSanitizer report from FoundationEssentials: reading an empty file leaks 4 KiB.
//   swiftc -sanitize=address empty-file-leak.swift -o /tmp/ef && /tmp/ef
import Foundation

let path = NSTemporaryDirectory() + "/ferry-empty-\(getpid())"
FileManager.default.createFile(atPath: path, contents: nil)
_ = try? String(contentsOfFile: path, encoding: .utf8)  // 4096 bytes leaked
_ = FileManager.default.contents(atPath: path)  // 4096 bytes leaked
unlink(path)
