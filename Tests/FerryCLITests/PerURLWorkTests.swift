import FerryTestSupport
import Foundation
import Testing

@testable import FerryCLI
@testable import FerryKit

/// The per-URL work of `ferry get URL1 ... URL1000`, done on bytes where it ran
/// on Characters (bench/RESULTS.md, issue 19, branch cli), answers as before.
@Suite struct PerURLWorkTests {
    @Test func localNameIsTheLastComponent() {
        #expect(localName("photos/2024/IMG_0001.JPG") == "IMG_0001.JPG")
        #expect(localName("IMG_0001.JPG") == "IMG_0001.JPG")
        #expect(localName("a//b//") == "b")
        #expect(localName("/") == "/")
        #expect(localName("") == "")
        // Beyond ASCII, by Characters as before: a combining mark after `/`
        // makes one Character with it, so no component starts there.
        #expect(localName("Fotos/Café.jpg") == "Café.jpg")
        #expect(localName("a/\u{301}b") == "a/\u{301}b")
    }

    @Test func onlyTheLastComponentIsAPattern() throws {
        func pattern(_ text: String) throws -> Bool { Glob.hasPattern(try RemoteURL(parsing: text)) }
        #expect(try pattern("ftp://h/DCIM/*.JPG"))
        #expect(try pattern("ftp://h/DCIM/IMG_000?.JPG"))
        #expect(try pattern("ftp://h/DCIM/IMG_[12].JPG"))
        #expect(try !pattern("ftp://h/DCIM/IMG_0001.JPG"))
        #expect(try !pattern("ftp://h/DC*IM/IMG_0001.JPG"))
        #expect(try !pattern("ftp://h/DCIM/*/"))
        // An unclosed bracket is part of a name.
        #expect(try !pattern("ftp://h/logs/[2J.txt"))
        #expect(try !pattern("http://h/a.txt?x=*"))
    }

    /// Rows show in the order they were added, whichever finished in between.
    @Test func progressRowsKeepTheirOrderWhenOneInTheMiddleFinishes() {
        let table = ProgressTable(waitingText: nil)
        table.begin(files: 4, bytes: nil)
        let transfers = ["A", "B", "C", "D"].map { Transfer(source: "ftp://h/\($0)", destination: $0) }
        for t in transfers.reversed() { table.add(t, label: t.destination) }
        table.finish(transfers[2], bytes: 10)
        let lines = table.lines(width: 100)
        #expect(lines.count == 4, "\(lines)")
        #expect(lines[0].hasPrefix("D ") && lines[1].hasPrefix("B ") && lines[2].hasPrefix("A "), "\(lines)")
        #expect(lines[3].hasPrefix("total: 1/4 files, 10 B"), "\(lines)")
    }

    /// `put`'s size of a local file is what `FileManager.attributesOfItem` said.
    @Test func localSizeIsWhatFileManagerSaid() throws {
        let dir = try TempDir(prefix: "local-size")
        let file = dir.path + "/a.bin"
        try Data(repeating: 7, count: 12_345).write(to: URL(fileURLWithPath: file))
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/link", withDestinationPath: file)
        try FileManager.default.createDirectory(atPath: dir.path + "/sub", withIntermediateDirectories: false)
        for path in [file, dir.path + "/link", dir.path + "/sub", dir.path + "/missing"] {
            let manager = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value
            #expect(localSize(path) == manager, "\(path)")
        }
        #expect(localSize(file) == 12_345)
    }

    /// Only URLs with a question get one; the answers keep the order of the URLs.
    @Test func askAboutAsksOnlyWhatItMustInOrder() async throws {
        let dir = try TempDir(prefix: "ask-about")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: dir.path + "/here.txt"))
        let root = try RemoteURL(parsing: dir.path)
        let fs = LocalFileSystem(url: root)
        let here = root.with(path: dir.path + "/here.txt")
        let missing = root.with(path: dir.path + "/missing.txt")
        let web = try RemoteURL(parsing: "http://127.0.0.1:1/a.txt?x=1")
        let answers = await GetPlanner.askAbout(
            [(missing, false), (here, true), (web, true), (missing, true), (here, false)].map { url, ask in
                GetPlanner.Target(url: url, fs: fs, name: url.lastComponent, ask: ask)
            }
        ).map(\.answer)
        #expect(answers.count == 5)
        guard answers.count == 5 else { return }
        #expect((try? answers[0].get()) == .some(nil))
        #expect((try? answers[1].get())??.size == 5)
        #expect((try? answers[2].get()) == .some(nil), "a web URL with a query is not asked about")
        if case .failure(let e) = answers[3] { #expect(e.code == .notFound) } else { Issue.record("\(answers[3])") }
        #expect((try? answers[4].get()) == .some(nil))
    }
}
