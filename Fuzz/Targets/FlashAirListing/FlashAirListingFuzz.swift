import FuzzSupport

// command.cgi?op=100 listings as a card (or anything pretending to be one) sends them.
// Input: [FOLDER NUL] BODY.
@testable import FerryKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (folderText, body) = splitAtNUL(data, size)
    let folder = folderText ?? "/DCIM"
    let (entries, skipped) = FlashAirListing.parse(body, folder: folder)
    require(skipped >= 0, "negative skip count")
    let prefix = RemotePath.normalize(folder, keepingServerRoot: false)
    for entry in entries {
        require(!entry.name.isEmpty, "empty name")
        require(!entry.name.contains("/"), "name with a slash: \(entry.name)")
        require(entry.name != "." && entry.name != "..", "dot entry")
        require(entry.path == RemotePath.join(prefix, entry.name), "path \(entry.path) not under \(prefix)")
        require(entry.size.map { $0 >= 0 } ?? true, "negative size")
        if let modified = entry.modified {
            _ = modified.iso8601
            _ = modified.date(floatingIn: .gmt)
        }
    }
    // What the emulator writes, Ferry reads back the same (a folder name with a
    // line break cannot be written in this format).
    guard !prefix.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else { return 0 }
    let raw = entries.filter { $0.kind == .file || $0.kind == .directory }.map {
        FlashAirRawEntry(
            directory: prefix, name: $0.name, size: $0.size ?? 0,
            attributes: $0.kind == .directory ? .directory : .archive,
            dateTime: FATDateTime(date: 0x5A21, time: 0x6000))
    }
    let again = FlashAirListing.parse(FlashAirListing.render(folder: prefix, entries: raw), folder: prefix)
    let expected = raw.filter { !$0.name.contains("\r") && !$0.name.contains("\n") }.map(\.name)
    require(again.entries.map(\.name) == expected, "render/parse round trip lost names")
    return 0
}
