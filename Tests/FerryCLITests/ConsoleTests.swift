import FerryTestSupport
import Foundation
import Testing

@testable import FerryCLI

/// What the CLI prints for people never carries a server's control characters.
@Suite struct ConsoleTests {
    @Test func controlCharactersAreShownAsQuestionMarks() {
        #expect(Format.printable("plain name.jpg") == "plain name.jpg")
        #expect(Format.printable("red\u{1B}[31mname") == "red?[31mname")
        #expect(Format.printable("a\tb\rc\u{07}d\u{7F}e\u{9B}f") == "a?b?c?d?e?f")
        // Line feeds separate lines of a message; letters beyond ASCII stay.
        #expect(Format.printable("first\nzweite Zeile, 日本") == "first\nzweite Zeile, 日本")
    }

    /// `ferry ls` of an FTP folder holding a name with escape sequences (a
    /// terminal title and a screen clear): the text listing shows them harmlessly,
    /// `--json` keeps the exact name, and `get -r`'s messages are clean too.
    @Test func aServersNameWithEscapeSequencesCannotDriveTheTerminal() async throws {
        let server = try await FTPTestServer(.pyftpdlib)
        let name = "evil\u{1B}]0;owned\u{07}\u{1B}[2J.txt"
        _ = try server.write(Data("hello".utf8), at: "/pub/" + name)
        let work = try TempDir(prefix: "ls-escape")
        let ferry = TestProcess.ferryExecutable()
        func clean(_ text: String) -> Bool { !text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 } }

        let text = try TestProcess.run(ferry, ["ls", server.url("/pub/")], cwd: work.path)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(clean(text.stdout) && clean(text.stderr))
        #expect(text.stdout.contains("evil?]0;owned??[2J.txt"))

        let json = try TestProcess.run(ferry, ["ls", server.url("/pub/"), "--json"], cwd: work.path)
        #expect(json.status == 0, "\(json.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.contains { $0["name"] as? String == name } == true)

        // A download that fails names the file in its message: still no escapes.
        let missing = try TestProcess.run(ferry, ["get", server.url("/pub/" + name + ".gone")], cwd: work.path)
        #expect(missing.status == 1)
        #expect(clean(missing.stderr), "\(missing.stderr)")
        #expect(missing.stderr.contains("evil%1B%5D0%3Bowned%07%1B%5B2J.txt.gone"))
    }
}
