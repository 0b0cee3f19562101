import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

private let documented = """
    WLANSD_FILELIST\r
    /DCIM,100__TSB,0,16,9944,129\r
    /DCIM,0126_1.jpg,70408,32,17071,28040\r

    """

@Suite struct FlashAirListingTests {
    @Test func documentedExample() throws {
        let (entries, skipped) = FlashAirListing.parse(documented, folder: "/DCIM")
        #expect(skipped == 0)
        try #require(entries.count == 2)

        let folder = entries[0]
        #expect(folder.name == "100__TSB")
        #expect(folder.path == "/DCIM/100__TSB")
        #expect(folder.kind == .directory)
        #expect(folder.size == nil)
        #expect(folder.modified?.iso8601 == "1999-06-24T00:04:02")
        #expect(folder.modified?.zone == .floating)
        #expect(!folder.isHidden)
        #expect(!folder.isReadOnly)

        let file = entries[1]
        #expect(file.name == "0126_1.jpg")
        #expect(file.path == "/DCIM/0126_1.jpg")
        #expect(file.kind == .file)
        #expect(file.size == 70408)
        #expect(file.modified?.iso8601 == "2013-05-15T13:44:16")
        #expect(!file.isHidden)
        #expect(!file.isReadOnly)
    }

    @Test(arguments: [
        "WLANSD_FILELIST\n/DCIM,100__TSB,0,16,9944,129\n/DCIM,0126_1.jpg,70408,32,17071,28040\n",
        "/DCIM,100__TSB,0,16,9944,129\r\n/DCIM,0126_1.jpg,70408,32,17071,28040",
        "\r\n\r\nWLANSD_FILELIST\r\n\r\n/DCIM,100__TSB,0,16,9944,129\r\n\r\n/DCIM,0126_1.jpg,70408,32,17071,28040\r\n\r\n",
        "WLANSD_FILELIST\r/DCIM,100__TSB,0,16,9944,129\r/DCIM,0126_1.jpg,70408,32,17071,28040\r",
        "\u{FEFF}WLANSD_FILELIST\r\n/DCIM,100__TSB,0,16,9944,129\r\n/DCIM,0126_1.jpg,70408,32,17071,28040\r\r\n",
        "WLANSD_FILELIST \r\n/DCIM,100__TSB,0,16,9944,129\r\n/DCIM,0126_1.jpg,70408,32,17071,28040\r\n \r\n",
    ])
    func toleratesLineEndsAndHeaders(_ body: String) {
        let (entries, skipped) = FlashAirListing.parse(body, folder: "/DCIM")
        #expect(skipped == 0)
        #expect(entries.map(\.name) == ["100__TSB", "0126_1.jpg"])
        #expect(entries.map(\.size) == [nil, 70408])
    }

    @Test func emptyListings() {
        #expect(FlashAirListing.parse("", folder: "/").entries.isEmpty)
        #expect(FlashAirListing.parse("WLANSD_FILELIST\r\n", folder: "/").skippedLines == 0)
        #expect(FlashAirListing.parse("WLANSD_FILELIST", folder: "/DCIM").entries.isEmpty)
    }

    @Test func rootListing() {
        let body =
            "WLANSD_FILELIST\r\n,DCIM,0,16,17071,28040\r\n,SD_WLAN,0,18,17071,28040\r\n,a,b.txt,5,32,17071,28040\r\n"
        let (entries, skipped) = FlashAirListing.parse(body, folder: "/")
        #expect(skipped == 0)
        #expect(entries.map(\.name) == ["DCIM", "SD_WLAN", "a,b.txt"])
        #expect(entries.map(\.path) == ["/DCIM", "/SD_WLAN", "/a,b.txt"])
        #expect(entries[1].isHidden)
        #expect(entries[2].size == 5)
    }

    @Test func rootListingSpelledWithSlash() {
        let body = "WLANSD_FILELIST\r\n/,DCIM,0,16,17071,28040\r\n/,x,y,1,32,17071,28040\r\n"
        for folder in ["/", "", "//"] {
            let (entries, skipped) = FlashAirListing.parse(body, folder: folder)
            #expect(skipped == 0)
            #expect(entries.map(\.path) == ["/DCIM", "/x,y"])
        }
    }

    @Test func commasInNames() {
        let body =
            "/DCIM,a,b,c.jpg,10,32,17071,28040\r\n/DCIM,,leading.jpg,11,32,17071,28040\r\n/DCIM,trailing,,12,32,17071,28040\r\n"
        let (entries, skipped) = FlashAirListing.parse(body, folder: "/DCIM")
        #expect(skipped == 0)
        #expect(entries.map(\.name) == ["a,b,c.jpg", ",leading.jpg", "trailing,"])
        #expect(
            entries.map(\.path) == ["/DCIM/a,b,c.jpg", "/DCIM/,leading.jpg", "/DCIM/trailing,"])
        #expect(entries.map(\.size) == [10, 11, 12])
    }

    @Test func commasInFolderNames() {
        let body = "WLANSD_FILELIST\r\n/Trips,2023/Oslo,Bergen,IMG_1,2.JPG,1234,32,17071,28040\r\n"
        let (entries, skipped) = FlashAirListing.parse(body, folder: "/Trips,2023/Oslo,Bergen")
        #expect(skipped == 0)
        #expect(entries.first?.name == "IMG_1,2.JPG")
        #expect(entries.first?.path == "/Trips,2023/Oslo,Bergen/IMG_1,2.JPG")
    }

    @Test func folderAskedWithTrailingSlashOrOtherCase() {
        let body = "/DCIM,IMG.JPG,1,32,17071,28040\r\n"
        #expect(
            FlashAirListing.parse(body, folder: "/DCIM/").entries.first?.path == "/DCIM/IMG.JPG")
        #expect(FlashAirListing.parse(body, folder: "DCIM").entries.first?.path == "/DCIM/IMG.JPG")
        // FAT folder names ignore case; the card may spell the folder as stored.
        let odd = FlashAirListing.parse("/DCIM,a,b.JPG,1,32,17071,28040\r\n", folder: "/dcim")
        #expect(odd.entries.first?.name == "a,b.JPG")
        #expect(odd.entries.first?.path == "/dcim/a,b.JPG")
        // A card that echoes a trailing slash.
        let slash = FlashAirListing.parse("/DCIM/,a,b.JPG,1,32,17071,28040\r\n", folder: "/DCIM")
        #expect(slash.entries.first?.name == "a,b.JPG")
    }

    @Test func unexpectedDirectoryFallsBackToFirstComma() {
        let body = "/ELSEWHERE,IMG,1.JPG,1,32,17071,28040\r\n"
        let (entries, skipped) = FlashAirListing.parse(body, folder: "/DCIM")
        #expect(skipped == 0)
        #expect(entries.first?.name == "IMG,1.JPG")
        #expect(entries.first?.path == "/DCIM/IMG,1.JPG")
    }

    @Test func invalidDatesKeepTheEntry() {
        let body = """
            /DCIM,zero.jpg,1,32,0,0\r
            /DCIM,month13.jpg,2,32,\(33 << 9 | 13 << 5 | 15),0\r
            /DCIM,hour24.jpg,3,32,17071,\(24 << 11)\r
            /DCIM,big.jpg,4,32,70000,28040\r
            /DCIM,bigtime.jpg,5,32,17071,99999999999999999999999\r
            /DCIM,good.jpg,6,32,17071,28040\r

            """
        let (entries, skipped) = FlashAirListing.parse(body, folder: "/DCIM")
        #expect(skipped == 0)
        #expect(
            entries.map(\.name) == [
                "zero.jpg", "month13.jpg", "hour24.jpg", "big.jpg", "bigtime.jpg", "good.jpg",
            ])
        #expect(entries.map { $0.modified == nil } == [true, true, true, true, true, false])
        #expect(entries.map(\.size) == [1, 2, 3, 4, 5, 6])
    }

    @Test func largeSizes() {
        let body = """
            /DCIM,movie.mp4,5000000000,32,17071,28040\r
            /DCIM,max.bin,9223372036854775807,32,17071,28040\r
            /DCIM,over.bin,9223372036854775808,32,17071,28040\r
            /DCIM,absurd.bin,123456789012345678901234567890,32,17071,28040\r
            /DCIM,four.bin,4294967296,32,17071,28040\r

            """
        let (entries, skipped) = FlashAirListing.parse(body, folder: "/DCIM")
        #expect(skipped == 0)
        #expect(entries.map(\.size) == [5_000_000_000, Int64.max, nil, nil, 4_294_967_296])
        #expect(entries.allSatisfy { $0.kind == .file && $0.modified != nil })
    }

    @Test func japaneseAndOtherNonASCIINames() {
        let body =
            "WLANSD_FILELIST\r\n/DCIM/旅行,写真 01.jpg,2048,32,17071,28040\r\n/DCIM/旅行,夏,海.JPG,1,33,17071,28040\r\n/DCIM/旅行,Ærø 🌊.jpg,3,32,17071,28040\r\n"
        let (entries, skipped) = FlashAirListing.parse(body, folder: "/DCIM/旅行")
        #expect(skipped == 0)
        #expect(entries.map(\.name) == ["写真 01.jpg", "夏,海.JPG", "Ærø 🌊.jpg"])
        #expect(
            entries.map(\.path) == ["/DCIM/旅行/写真 01.jpg", "/DCIM/旅行/夏,海.JPG", "/DCIM/旅行/Ærø 🌊.jpg"])
        #expect(entries[1].isReadOnly)
    }

    @Test func attributes() {
        let body = """
            ,ro.txt,1,33,17071,28040\r
            ,hidden.txt,1,34,17071,28040\r
            ,system.txt,1,36,17071,28040\r
            ,LABEL,0,8,17071,28040\r
            ,hiddendir,0,18,17071,28040\r
            ,plain,1,0,17071,28040\r
            ,huge,1,65536,17071,28040\r

            """
        let (entries, skipped) = FlashAirListing.parse(body, folder: "/")
        #expect(skipped == 0)
        #expect(entries.map(\.isReadOnly) == [true, false, false, false, false, false, false])
        #expect(entries.map(\.isHidden) == [false, true, true, false, true, false, false])
        #expect(entries.map(\.kind) == [.file, .file, .file, .other, .directory, .file, .other])
    }

    @Test func unreadableLinesAreSkippedAndCounted() {
        let body = """
            WLANSD_FILELIST\r
            garbage\r
            /DCIM,a,1,32,17071\r
            a,b,c,d,e\r
            /DCIM,x.jpg,1,32,17071,abc\r
            /DCIM,x.jpg,-1,32,17071,28040\r
            /DCIM,x.jpg,,32,17071,28040\r
            /DCIM,x.jpg,0x10,32,17071,28040\r
            /DCIM,,1,32,17071,28040\r
            /DCIM,a/b.jpg,1,32,17071,28040\r
            <html><body>500 Internal Server Error</body></html>\r
            /DCIM,ok.jpg,1,32,17071,28040\r

            """
        let (entries, skipped) = FlashAirListing.parse(body, folder: "/DCIM")
        #expect(entries.map(\.name) == ["ok.jpg"])
        #expect(skipped == 10)
    }

    @Test func dotEntriesAreIgnored() {
        let body =
            "/DCIM,.,0,16,17071,28040\r\n/DCIM,..,0,16,17071,28040\r\n/DCIM,.hidden,1,32,17071,28040\r\n"
        let (entries, skipped) = FlashAirListing.parse(body, folder: "/DCIM")
        #expect(skipped == 0)
        #expect(entries.map(\.name) == [".hidden"])
        #expect(entries.first?.isHidden == false)  // dot-files are not marked hidden here
    }

    @Test func spacesAroundNumbersAreTolerated() {
        let (entries, skipped) = FlashAirListing.parse(
            "/DCIM, a.jpg, 7, 32, 17071, 28040\r\n", folder: "/DCIM")
        #expect(skipped == 0)
        #expect(entries.first?.name == " a.jpg")
        #expect(entries.first?.size == 7)
    }

    // MARK: render

    @Test func rendersDocumentedExample() {
        let entries = [
            FlashAirRawEntry(
                directory: "/DCIM", name: "100__TSB", size: 0, attributes: .directory,
                dateTime: FATDateTime(date: 9944, time: 129)),
            FlashAirRawEntry(
                directory: "/DCIM", name: "0126_1.jpg", size: 70408, attributes: .archive,
                dateTime: FATDateTime(date: 17071, time: 28040)),
        ]
        #expect(FlashAirListing.render(folder: "/DCIM", entries: entries) == documented)
    }

    @Test func rendersRootWithEmptyDirectoryField() {
        let dcim = FlashAirRawEntry(
            directory: "/", name: "DCIM", size: 0, attributes: .directory,
            dateTime: FATDateTime(date: 17071, time: 28040))
        var blank = dcim
        blank.directory = ""
        let expected = "WLANSD_FILELIST\r\n,DCIM,0,16,17071,28040\r\n"
        #expect(FlashAirListing.render(folder: "/", entries: [dcim]) == expected)
        #expect(FlashAirListing.render(folder: "/", entries: [blank]) == expected)
        #expect(FlashAirListing.render(folder: "/", entries: []) == "WLANSD_FILELIST\r\n")
    }

    @Test func renderUsesFolderForEntriesWithoutDirectory() {
        let entry = FlashAirRawEntry(
            directory: "", name: "a,b.jpg", size: 5_000_000_000, attributes: [.archive, .readOnly],
            dateTime: .earliest)
        #expect(
            FlashAirListing.render(folder: "/DCIM/", entries: [entry])
                == "WLANSD_FILELIST\r\n/DCIM,a,b.jpg,5000000000,33,33,0\r\n")
    }

    @Test func renderLeavesOutUnwritableNames() {
        let bad = FlashAirRawEntry(
            directory: "/", name: "two\nlines", size: 1, attributes: .archive, dateTime: .earliest)
        let cr = FlashAirRawEntry(
            directory: "/", name: "cr\r", size: 1, attributes: .archive, dateTime: .earliest)
        #expect(FlashAirListing.render(folder: "/", entries: [bad, cr]) == "WLANSD_FILELIST\r\n")
    }

    @Test func renderParseRoundTrips() throws {
        var rng = SeededRandom(seed: 42)
        let pieces = [
            "IMG", "_", "0001", ",", " ", ".JPG", "写真", "夏", "é", "🌊", "a", "Z", ".", "-", "(1)",
        ]
        func randomName() -> String {
            while true {
                let name = (0..<Int.random(in: 1...6, using: &rng)).map { _ in
                    pieces.randomElement(using: &rng)!
                }.joined()
                if name != "." && name != ".." { return name }
            }
        }
        let folders = ["/", "/DCIM", "/DCIM/100__TSB", "/a,b", "/写真,2023/夏", "/x/,/y"]
        for _ in 0..<300 {
            let folder = folders.randomElement(using: &rng)!
            var raws: [FlashAirRawEntry] = []
            for _ in 0..<Int.random(in: 0...20, using: &rng) {
                raws.append(
                    FlashAirRawEntry(
                        directory: folder, name: randomName(),
                        size: Bool.random(using: &rng)
                            ? .random(in: 0...Int64.max, using: &rng)
                            : .random(in: 0...100_000, using: &rng),
                        attributes: FlashAirAttributes(rawValue: .random(in: 0...63, using: &rng)),
                        dateTime: FATDateTime(
                            date: .random(in: 0...0xFFFF, using: &rng),
                            time: .random(in: 0...0xFFFF, using: &rng))))
            }
            let body = FlashAirListing.render(folder: folder, entries: raws)
            #expect(body.hasPrefix("WLANSD_FILELIST\r\n"))
            #expect(body.hasSuffix("\r\n"))
            let (entries, skipped) = FlashAirListing.parse(body, folder: folder)
            #expect(skipped == 0)
            try #require(entries.count == raws.count)
            for (raw, entry) in zip(raws, entries) {
                let isDirectory = raw.attributes.contains(.directory)
                #expect(entry.name == raw.name)
                #expect(entry.path == (folder == "/" ? "/" : folder + "/") + raw.name)
                #expect(
                    entry.kind
                        == (isDirectory
                            ? .directory : raw.attributes.contains(.volumeLabel) ? .other : .file))
                #expect(entry.size == (isDirectory ? nil : raw.size))
                #expect(entry.modified == raw.dateTime.timestamp)
                #expect(entry.isHidden == !raw.attributes.isDisjoint(with: [.hidden, .system]))
                #expect(entry.isReadOnly == raw.attributes.contains(.readOnly))
            }
        }
    }

    // MARK: no crash on hostile input

    @Test func mutatedListingsNeverCrash() {
        var rng = SeededRandom(seed: 7)
        let base = Array(
            (documented + "/DCIM,夏,海.JPG,5000000000,33,17071,28040\r\n,root,0,16,0,0\r\n").utf8)
        let inserts: [[UInt8]] = [
            [0x2C], [0x0D], [0x0A], [0x2F], [0x30], [0x39, 0x39, 0x39], [0xE5, 0xA4, 0x8F], [0xFF],
            [0x00], [0x2D],
        ]
        for _ in 0..<3000 {
            var bytes = base
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                guard !bytes.isEmpty else { break }
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes[at] = .random(in: 0...255, using: &rng)
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(contentsOf: inserts.randomElement(using: &rng)!, at: at)
                default: bytes.removeSubrange(at...)
                }
            }
            let body = String(decoding: bytes, as: UTF8.self)
            for folder in ["/DCIM", "/", "/dc,im"] {
                let (entries, skipped) = FlashAirListing.parse(body, folder: folder)
                let lines = body.utf8.split(whereSeparator: { $0 == 10 || $0 == 13 }).count
                #expect(entries.count + skipped <= lines)
                for entry in entries {
                    #expect(!entry.name.isEmpty)
                    #expect(!entry.name.contains("/"))
                    #expect(entry.path.hasPrefix(folder == "/" ? "/" : folder + "/"))
                }
            }
        }
    }

    @Test func randomTextNeverCrashes() {
        var rng = SeededRandom(seed: 8)
        let alphabet = Array(",,,,0123456789/\r\n -aé写🌊WLANSD_FILELIST")
        for _ in 0..<3000 {
            let text = String(
                (0..<Int.random(in: 0...80, using: &rng)).map { _ in
                    alphabet.randomElement(using: &rng)!
                })
            _ = FlashAirListing.parse(text, folder: ["/", "/DCIM", ""].randomElement(using: &rng)!)
        }
    }
}

@Suite struct FlashAirReplyTests {
    @Test func capacity() throws {
        let c = try #require(FlashAirReply.capacity("13952920/15228928,512"))
        #expect(c.freeSectors == 13_952_920)
        #expect(c.totalSectors == 15_228_928)
        #expect(c.sectorSize == 512)
        #expect(c.freeBytes == 7_143_895_040)
        #expect(c.totalBytes == 7_797_211_136)
        #expect(FlashAirReply.capacity(" 13952920/15228928,512\r\n") == c)
        // A 128 GB card counted in 32 KiB clusters still gives bytes.
        #expect(FlashAirReply.capacity("3000000/3900000,32768")?.totalBytes == 127_795_200_000)
        #expect(FlashAirReply.capacity("0/0,512")?.freeBytes == 0)
    }

    @Test(arguments: [
        "", "abc", "1/2", "1,2/3", "1/2,0", "-1/2,512", "1/-2,512", "1/2,512,3", "1 / 2,512",
        "1/2,",
        "/2,512", "1/,512", "9223372036854775807/1,512", "1/9223372036854775807,2",
        "99999999999999999999/1,512", "<html>", "1/2,5１2",
    ])
    func capacityRejectsGarbage(_ body: String) {
        #expect(FlashAirReply.capacity(body) == nil)
    }

    @Test func capacityBytesSaturate() {
        let c = FlashAirCapacity(freeSectors: .max, totalSectors: .max, sectorSize: 512)
        #expect(c.freeBytes == .max)
        #expect(c.totalBytes == .max)
    }

    @Test func fileCount() {
        #expect(FlashAirReply.fileCount("2") == 2)
        #expect(FlashAirReply.fileCount(" 2\r\n") == 2)
        #expect(FlashAirReply.fileCount("0") == 0)
        for bad in ["", "-1", "+1", "x", "2 3", "1.5", "99999999999999999999"] {
            #expect(FlashAirReply.fileCount(bad) == nil)
        }
    }

    @Test func updated() {
        #expect(FlashAirReply.updated("1") == true)
        #expect(FlashAirReply.updated("0\r\n") == false)
        #expect(FlashAirReply.updated(" 1 ") == true)
        for bad in ["", "2", "10", "true", "01", "-0"] {
            #expect(FlashAirReply.updated(bad) == nil)
        }
    }

    @Test func lastWriteMilliseconds() {
        #expect(FlashAirReply.lastWriteMilliseconds("174428") == 174_428)
        #expect(FlashAirReply.lastWriteMilliseconds("174428\r\n") == 174_428)
        #expect(FlashAirReply.lastWriteMilliseconds("0") == 0)
        for bad in ["", "-5", "abc", "1e5", "99999999999999999999"] {
            #expect(FlashAirReply.lastWriteMilliseconds(bad) == nil)
        }
    }

    @Test func timeZone() {
        #expect(FlashAirReply.timeZoneQuarterHours("36") == 36)
        #expect(FlashAirReply.timeZoneQuarterHours("+36\r\n") == 36)
        #expect(FlashAirReply.timeZoneQuarterHours(" -20 ") == -20)
        #expect(FlashAirReply.timeZoneQuarterHours("-48") == -48)
        #expect(FlashAirReply.timeZoneQuarterHours("54") == 54)
        #expect(FlashAirReply.timeZoneQuarterHours("0") == 0)
        #expect(FlashAirReply.timeZone("36")?.secondsFromGMT() == 9 * 3600)
        #expect(FlashAirReply.timeZone("-18")?.secondsFromGMT() == -(4 * 3600 + 30 * 60))
        for bad in ["", "57", "-57", "--1", "+-1", "- 1", "abc", "3 6", "99999999999999999999"] {
            #expect(FlashAirReply.timeZoneQuarterHours(bad) == nil)
            #expect(FlashAirReply.timeZone(bad) == nil)
        }
    }

    @Test func randomRepliesNeverCrash() {
        var rng = SeededRandom(seed: 9)
        let alphabet = Array("0123456789/,,-+ \r\n9x")
        for _ in 0..<5000 {
            let text = String(
                (0..<Int.random(in: 0...30, using: &rng)).map { _ in
                    alphabet.randomElement(using: &rng)!
                })
            if let c = FlashAirReply.capacity(text) {
                #expect(c.freeBytes >= 0 && c.totalBytes >= 0)
            }
            _ = FlashAirReply.fileCount(text)
            _ = FlashAirReply.updated(text)
            _ = FlashAirReply.lastWriteMilliseconds(text)
            _ = FlashAirReply.timeZone(text)
        }
    }
}
