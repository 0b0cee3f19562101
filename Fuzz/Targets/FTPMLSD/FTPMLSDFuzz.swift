import Foundation
import FuzzSupport

// FTP MLSD replies and single MLST fact lines (RFC 3659).
// Input: [FOLDER NUL] BODY.
@testable import FerryKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (folderText, body) = splitAtNUL(data, size)
    let folder = folderText ?? "/pub"
    let listing = FTPListingParser.parseMLSD(body, folder: folder)
    require(listing.skippedLines >= 0, "negative skip count")
    let prefix = FTPListingParser.folderPrefix(folder)
    for entry in listing.entries {
        require(!entry.name.isEmpty, "empty name")
        require(!entry.name.contains("/") && !entry.name.contains("\0"), "bad name \(entry.name)")
        require(entry.name != "." && entry.name != "..", "dot entry")
        require(entry.path == prefix + entry.name, "path \(entry.path)")
        require(entry.size.map { $0 >= 0 } ?? true, "negative size")
        _ = entry.modified?.iso8601
    }
    for line in body.split(separator: "\n", omittingEmptySubsequences: true).prefix(8) {
        guard let entry = FTPListingParser.parseMLSDLine(line, folder: folder) else { continue }
        require(entry.path.utf8.first == UInt8(ascii: "/"), "relative path \(entry.path)")
        let parts = entry.path.split(separator: "/")
        require(!parts.contains("..") && !parts.contains("."), "dot component in \(entry.path)")
        require(!entry.path.contains("\0"), "NUL in path")
        _ = entry.modified?.date(floatingIn: .gmt)
    }
    return 0
}
