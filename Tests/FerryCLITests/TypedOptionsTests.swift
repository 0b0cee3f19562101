import FerryKit
import Foundation
import Testing

@testable import FerryCLI

/// Typed option keys, "did you mean", library errors without command-line words,
/// and the card's default name (issue 13 item 4, issue 15 item 5, issue 16 item 5).
@Suite struct TypedOptionsTests {
    @Test func everyCommandDeclaresEachNameOnce() {
        for c in CLI.commands {
            let longs = c.spec.allOptions.map(\.long)
            #expect(Set(longs).count == longs.count, "\(c.spec.name): \(longs)")
            let shorts = c.spec.allOptions.compactMap(\.short)
            #expect(Set(shorts).count == shorts.count, "\(c.spec.name): \(shorts)")
        }
    }

    @Test func keysLookUpWhatTheyDeclare() throws {
        let a = try ArgumentParser.parse(["-r", "--only=jpg", "u"], spec: GetCommand.spec)
        #expect(a.has(GetCommand.Keys.recursive))
        #expect(try a.value(GetCommand.Keys.only) == ["jpg"])
        #expect(!a.has(GetCommand.Keys.overwrite))
        #expect(a.declared.contains("insecure") && a.declared.contains("quiet"))
    }

    @Test func suggestions() {
        #expect(Suggestion.nearest(to: "lst", in: CLI.commands.map { $0.spec.name }) == "ls")
        #expect(Suggestion.nearest(to: "sycn", in: CLI.commands.map { $0.spec.name }) == "sync")
        #expect(Suggestion.nearest(to: "zzzzzz", in: CLI.commands.map { $0.spec.name }) == nil)
        #expect(Suggestion.nearest(to: "skip", in: GetCommand.spec.allOptions.map(\.long)) == "skip-existing")
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["--recursiv", "u"], spec: GetCommand.spec) }
        do {
            _ = try ArgumentParser.parse(["--recursiv", "u"], spec: GetCommand.spec)
        } catch {
            #expect("\(error)".contains("did you mean --recursive?"))
        }
    }

    @Test func libraryErrorsCarryARecoveryAndTheCLIGivesItsFlags() {
        let e = FerryError(.destinationExists, operation: "download", target: "a.jpg", recovery: .replaceOrKeep)
        #expect(e.description == "download a.jpg: destination exists (replace it or keep it)")
        #expect(!e.description.contains("--"))
        #expect(Hints.describe(e).contains("--overwrite replaces it, --skip-existing keeps it"))
    }

    @Test func noFerryKitErrorTextNamesACommandLineOption() throws {
        let kit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../Sources/FerryKit"
        ).standardizedFileURL
        let files = try #require(FileManager.default.enumerator(atPath: kit.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20)
        let option = try Regex(#""[^"\n]*--[a-z][a-z-]+[^"\n]*""#)
        for file in files {
            let text = try String(contentsOfFile: kit.appendingPathComponent(file).path, encoding: .utf8)
            for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                #expect(line.firstMatch(of: option) == nil, "\(file): \(line)")
            }
        }
    }

    @Test func theCardsDefaultName() throws {
        let a = try RemoteURL(parsing: "flashair:///DCIM/100__TSB")
        #expect(a.scheme == .flashair && a.host == "flashair" && a.path == "/DCIM/100__TSB")
        #expect(a.port == nil && a.defaultPort == 80)
        let b = try RemoteURL(parsing: "flashair:DCIM")
        #expect(b.host == "flashair" && b.path == "/DCIM")
        let c = try RemoteURL(parsing: "flashair://192.168.0.1/DCIM")
        #expect(c.host == "192.168.0.1")
    }

    @Test func patterns() {
        #expect(Glob.isPattern("*.JPG") && Glob.isPattern("IMG_000?.JPG") && Glob.isPattern("IMG_[12].JPG"))
        #expect(!Glob.isPattern("plain.jpg") && !Glob.isPattern("a[2J.txt") && !Glob.isPattern("[]"))
        #expect(Glob.matches("*.JPG", "IMG_0001.JPG") && !Glob.matches("*.JPG", ".hidden.JPG"))
        #expect(Glob.matches("IMG_000[12].JPG", "IMG_0002.JPG") && !Glob.matches("IMG_000[12].JPG", "IMG_0003.JPG"))
    }

    @Test func infoInWords() {
        #expect(InfoCommand.wirelessMode(0) == "access point")
        #expect(InfoCommand.wirelessMode(4) == "access point, from power-on")
        #expect(InfoCommand.wirelessMode(5) == "station (joins a network), from power-on")
        #expect(InfoCommand.webDAV(0, url: nil) == "off")
        let dav = try? RemoteURL(parsing: "dav://flashair/")
        #expect(InfoCommand.webDAV(2, url: dav) == "read and write at dav://flashair/")
        #expect(InfoCommand.webDAV(1, url: dav) == "read-only at dav://flashair/")
        #expect(InfoCommand.webDAV(1, url: nil).hasPrefix("read-only in CONFIG, but the card does not answer WebDAV"))
    }

    @Test func summaryLine() {
        var s = RunSummary(verb: "downloaded")
        s.transferred = 12
        s.bytes = 1_100_000_000
        s.seconds = 40
        s.alreadyHere = 13
        s.differs = 1
        #expect(s.text == "12 downloaded (1.1 GB in 40 s, 27.5 MB/s), 13 already here, 1 differs (kept), 0 failed")
    }
}
