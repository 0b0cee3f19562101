import Foundation
import FuzzSupport

// FTP LIST replies (Unix, DOS/IIS, NetWare lines), whole and line by line.
// Input: [FOLDER NUL] BODY.
@testable import FerryKit

let now = Date(timeIntervalSince1970: 1_700_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (folderText, body) = splitAtNUL(data, size)
    let folder = folderText ?? "/pub"
    let listing = FTPListingParser.parseLIST(body, folder: folder, now: now)
    check(listing, folder: folder)
    for line in body.split(separator: "\n", omittingEmptySubsequences: true).prefix(8) {
        if let entry = FTPListingParser.parseLISTLine(line, folder: folder, now: now) {
            check(DirectoryListing(entries: [entry]), folder: folder)
        }
    }
    return 0
}

func check(_ listing: DirectoryListing, folder: String) {
    require(listing.skippedLines >= 0, "negative skip count")
    let prefix = FTPListingParser.folderPrefix(folder)
    for entry in listing.entries {
        require(!entry.name.isEmpty, "empty name")
        require(!entry.name.contains("/") && !entry.name.contains("\0"), "bad name \(entry.name)")
        require(entry.name != "." && entry.name != "..", "dot entry")
        require(entry.path == prefix + entry.name, "path \(entry.path)")
        require(entry.size.map { $0 >= 0 } ?? true, "negative size")
        if let modified = entry.modified {
            _ = modified.iso8601
            _ = modified.date(floatingIn: .gmt)
        }
    }
}
