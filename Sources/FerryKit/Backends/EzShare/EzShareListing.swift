import Foundation

/// The folder page of an ez Share Wi-Fi SD card (`GET /dir?dir=A:%5CDCIM`),
/// read and written exactly as the card writes it.
///
/// The page is HTML in GB2312 whose `<pre>` holds one line per entry:
///
/// ```
///    2024- 1- 4    5: 8:56        1918KB  <a href="http://192.168.4.1/download?file=DCIM%5C100CANON%5CIMG_0001.JPG"> IMG_0001.JPG</a>
///    2024- 1- 4   10:56:12         &lt;DIR&gt;   <a href="dir?dir=A:%5CDCIM%5C100CANON"> 100CANON</a>
/// ```
///
/// Dates and times are unpadded FAT local time; sizes are rounded up to KB;
/// links name the 8.3 short name while the text shows the long one; folders
/// other than the root list `.` and `..`; a `Total Entries` and `Total Size`
/// line close the list. File links are absolute URLs naming the card's own
/// address: only their `file` parameter is kept, never their host.
package enum EzShareListing {
    /// One entry of the page.
    package struct Entry: Sendable, Hashable {
        /// The long name as the card shows it, decoded from GB2312.
        package var name: String
        /// Whether the line says `<DIR>`.
        package var isDirectory: Bool
        /// The size as listed, in KB rounded up (nil for folders).
        package var kilobytes: Int64?
        /// The time as listed: FAT local time, floating.
        package var modified: RemoteTimestamp?
        /// The link's parameter, percent-decoded, as the card wants it back:
        /// `file` of a file (`DCIM\100CANON\IMG_0001.JPG`), `dir` of a folder
        /// (`A:\DCIM\100CANON`). Bytes: an 8.3 alias may hold GB2312 bytes.
        package var link: [UInt8]

        /// Creates an entry.
        package init(name: String, isDirectory: Bool, kilobytes: Int64?, modified: RemoteTimestamp?, link: [UInt8]) {
            self.name = name
            self.isDirectory = isDirectory
            self.kilobytes = kilobytes
            self.modified = modified
            self.link = link
        }

        /// `.` or `..`.
        package var isDotEntry: Bool { name == "." || name == ".." }
    }

    /// What a page held.
    package struct Page: Sendable, Hashable {
        /// The entries in the card's order, `.` and `..` included.
        package var entries: [Entry] = []
        /// The number the `Total Entries:` line gives, when there is one.
        package var totalEntries: Int?
        /// Whether the page had a `<pre>` at all.
        package var hasListing = false
        /// Lines inside `<pre>` that were neither an entry, a total nor blank.
        package var skippedLines = 0
    }

    /// The card's name for its root folder.
    package static let root: [UInt8] = Array("A:".utf8)

    /// Reads a folder page.
    package static func parse(_ page: [UInt8]) -> Page {
        var result = Page()
        guard let open = find(Array("<pre>".utf8), in: page[...]) else { return result }
        result.hasListing = true
        var body = page[(open + 5)...]
        if let close = find(Array("</pre>".utf8), in: body) { body = page[body.startIndex..<close] }
        for rawLine in body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            var line = rawLine
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            let trimmed = line.drop { $0 == 0x20 || $0 == 0x09 }
            if trimmed.isEmpty { continue }
            if let total = totalEntries(trimmed) {
                result.totalEntries = total
                continue
            }
            if startsWith(trimmed, "Total") { continue }
            if let entry = parseLine(trimmed) {
                result.entries.append(entry)
            } else {
                result.skippedLines += 1
            }
        }
        return result
    }

    /// One entry line without its leading spaces; nil when it is not one.
    static func parseLine(_ line: ArraySlice<UInt8>) -> Entry? {
        guard let anchor = find(Array("<a ".utf8), in: line) ?? find(Array("<A ".utf8), in: line) else { return nil }
        var scanner = Scanner(line[line.startIndex..<anchor])
        // 2024- 1- 4   5: 8:56
        guard let year = scanner.number(), scanner.take(UInt8(ascii: "-")),
            let month = scanner.number(), scanner.take(UInt8(ascii: "-")),
            let day = scanner.number(), let hour = scanner.number(), scanner.take(UInt8(ascii: ":")),
            let minute = scanner.number(), scanner.take(UInt8(ascii: ":")), let second = scanner.number()
        else { return nil }
        let modified = RemoteTimestamp(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, zone: .floating)
        scanner.skipSpaces()
        let isDirectory: Bool
        var kilobytes: Int64?
        if scanner.take("&lt;DIR&gt;") || scanner.take("<DIR>") {
            isDirectory = true
        } else if let n = scanner.number(), scanner.take("KB") || scanner.take("kb") {
            isDirectory = false
            kilobytes = Int64(n)
        } else {
            return nil
        }
        // <a href="URL"> NAME</a>
        let tag = line[anchor...]
        guard let hrefStart = find(Array("href=\"".utf8), in: tag) else { return nil }
        let valueStart = hrefStart + 6
        guard let valueEnd = line[valueStart...].firstIndex(of: UInt8(ascii: "\"")),
            let tagEnd = line[valueEnd...].firstIndex(of: UInt8(ascii: ">"))
        else { return nil }
        let nameStart = tagEnd + 1
        let nameEnd =
            find(Array("</a>".utf8), in: line[nameStart...]) ?? find(Array("</A>".utf8), in: line[nameStart...])
        guard let nameEnd else { return nil }
        var nameBytes = line[nameStart..<nameEnd]
        // The card writes one space between the tag and the name.
        if nameBytes.first == 0x20 { nameBytes = nameBytes.dropFirst() }
        let name = HTTPIndexParser.decodeEntities(GB18030.decode(nameBytes))
        guard !name.isEmpty else { return nil }
        let href = Array(line[valueStart..<valueEnd])
        guard let link = parameter(isDirectory ? "dir" : "file", of: href) else { return nil }
        return Entry(name: name, isDirectory: isDirectory, kilobytes: kilobytes, modified: modified, link: link)
    }

    /// The percent-decoded value of `name` in a link's query (`&amp;` read as
    /// `&`): the link's scheme, host and path are ignored. The card's links carry
    /// one parameter, so the value runs to the end: a short name may hold a raw `&`.
    static func parameter(_ name: String, of href: [UInt8]) -> [UInt8]? {
        let text = replacing(Array("&amp;".utf8), with: [UInt8(ascii: "&")], in: href)
        guard let q = text.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        let query = text[(q + 1)...]
        let key = Array((name + "=").utf8)
        if query.starts(with: key) { return percentDecode(query.dropFirst(key.count)) }
        guard let at = find([UInt8(ascii: "&")] + key, in: query) else { return nil }
        return percentDecode(text[(at + 1 + key.count)...])
    }

    /// `%XX` escapes decoded byte by byte; a malformed one stays as written, and
    /// bytes that are not escaped (raw GB2312) are kept.
    package static func percentDecode(_ text: ArraySlice<UInt8>) -> [UInt8] {
        func hex(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x41...0x46: c - 0x41 + 10
            case 0x61...0x66: c - 0x61 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var i = text.startIndex
        while i < text.endIndex {
            if text[i] == UInt8(ascii: "%"), i + 2 < text.endIndex, let hi = hex(text[i + 1]), let lo = hex(text[i + 2])
            {
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(text[i])
                i += 1
            }
        }
        return out
    }

    /// A link parameter as it goes on the wire: every byte but letters, digits,
    /// `-._~` and the drive's `:` percent-encoded (a backslash is `%5C`).
    package static func encodeParameter(_ value: [UInt8]) -> String {
        RemoteURL.percentEncode(bytes: value, allowed: linkByte)
    }

    static let linkByte = RemoteURL.unreserved.adding(":")

    // MARK: Writing (the emulator)

    /// One entry as the emulator lists it.
    package struct Line: Sendable, Hashable {
        /// The long name.
        package var name: String
        /// Whether it is a folder.
        package var isDirectory: Bool
        /// The size in bytes (written rounded up to KB).
        package var size: Int64
        /// The FAT time the line shows.
        package var dateTime: FATDateTime
        /// The link: `dir?dir=...` for a folder, an absolute download URL for a file.
        package var href: String

        /// Creates a line.
        package init(name: String, isDirectory: Bool, size: Int64, dateTime: FATDateTime, href: String) {
            self.name = name
            self.isDirectory = isDirectory
            self.size = size
            self.dateTime = dateTime
            self.href = href
        }
    }

    /// KB as the card counts them: rounded up.
    package static func kilobytes(_ size: Int64) -> Int64 { (max(0, size) + 1023) / 1024 }

    /// A folder page as the card writes it, in GB18030 (GB2312 for its characters).
    ///
    /// - Parameters:
    ///   - folder: The card's name of the folder (`A:`, `A:\DCIM`).
    ///   - lines: The entries, in the order the card lists them.
    package static func render(folder: String, lines: [Line]) -> [UInt8] {
        var out: [UInt8] = []
        func add(_ text: String) { out.append(contentsOf: GB18030.encode(text) ?? Array(text.utf8)) }
        add(
            """
            <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
            <html xmlns="http://www.w3.org/1999/xhtml">
            <head>
            <meta http-equiv="Content-Type" content="text/html; charset=gb2312">
            <title>Index of \(folder)</title>
            </head>
            <body>
            <h1><a href="photo">back to photo</a></h1>
            <h1>Directory Index of \(folder)</h1>
            <pre>

            """)
        var totalKB: Int64 = 0
        for line in lines {
            let d = line.dateTime
            func pad(_ n: Int, _ width: Int) -> String {
                let s = String(n)
                return String(repeating: " ", count: max(0, width - s.count)) + s
            }
            var text = "   \(pad(d.year, 4))-\(pad(d.month, 2))-\(pad(d.day, 2))   "
            text += "\(pad(d.hour, 2)):\(pad(d.minute, 2)):\(pad(d.second, 2))"
            if line.isDirectory {
                text += "         &lt;DIR&gt;   "
            } else {
                let kb = kilobytes(line.size)
                totalKB += kb
                text += pad(Int(kb), 12) + "KB  "
            }
            text += "<a href=\"\(line.href)\"> \(escape(line.name))</a>\n"
            add(text)
        }
        add("\nTotal Entries: \(lines.count)\nTotal Size: \(totalKB)KB\n</pre>\n</body>\n</html>\n")
        return out
    }

    /// `&`, `<`, `>` and `"` as entities.
    static func escape(_ text: String) -> String {
        guard text.contains(where: { "&<>\"".contains($0) }) else { return text }
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }

    // MARK: Bytes

    /// `Total Entries: N`.
    private static func totalEntries(_ line: ArraySlice<UInt8>) -> Int? {
        let prefix = Array("Total Entries:".utf8)
        guard line.starts(with: prefix) else { return nil }
        var scanner = Scanner(line.dropFirst(prefix.count))
        return scanner.number()
    }

    private static func startsWith(_ line: ArraySlice<UInt8>, _ text: String) -> Bool {
        line.starts(with: text.utf8)
    }

    /// The index where `needle` starts in `hay`.
    static func find(_ needle: [UInt8], in hay: ArraySlice<UInt8>) -> Int? {
        guard !needle.isEmpty, hay.count >= needle.count else { return nil }
        var i = hay.startIndex
        let last = hay.endIndex - needle.count
        while i <= last {
            if hay[i] == needle[0] && hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    private static func replacing(_ needle: [UInt8], with new: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        guard find(needle, in: bytes[...]) != nil else { return bytes }
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if i + needle.count <= bytes.count && bytes[i..<(i + needle.count)].elementsEqual(needle) {
                out.append(contentsOf: new)
                i += needle.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    /// Numbers with the spaces the card puts before them.
    private struct Scanner {
        var bytes: ArraySlice<UInt8>

        init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

        mutating func skipSpaces() { bytes = bytes.drop { $0 == 0x20 || $0 == 0x09 } }

        /// Spaces, then up to 12 digits.
        mutating func number() -> Int? {
            skipSpaces()
            let digits = bytes.prefix { $0 >= 0x30 && $0 <= 0x39 }
            guard !digits.isEmpty, digits.count <= 12 else { return nil }
            bytes = bytes.dropFirst(digits.count)
            return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard bytes.first == byte else { return false }
            bytes = bytes.dropFirst()
            return true
        }

        mutating func take(_ text: String) -> Bool {
            guard bytes.starts(with: text.utf8) else { return false }
            bytes = bytes.dropFirst(text.utf8.count)
            return true
        }
    }
}
