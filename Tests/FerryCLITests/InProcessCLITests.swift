import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryCLI

/// A console that keeps what a command printed, for running `ferry` in-process
/// (issue 27 item 8): no process started, the output read back exactly.
final class CapturedConsole: Sendable {
    private let text = Mutex<(out: String, err: String)>(("", ""))

    /// The console to hand to ``CLI/main(_:console:)``.
    var console: Console {
        Console { stream, piece in
            self.text.withLock {
                switch stream {
                case .standardOutput: $0.out += piece
                case .standardError: $0.err += piece
                }
            }
        }
    }

    var stdout: String { text.withLock { $0.out } }
    var stderr: String { text.withLock { $0.err } }

    /// Runs `ferry ARGS...` in this process; the exit code and what it printed.
    static func run(_ args: [String]) async -> (status: Int32, stdout: String, stderr: String) {
        let captured = CapturedConsole()
        let status = await CLI.main(["ferry"] + args, console: captured.console)
        return (status, captured.stdout, captured.stderr)
    }
}

/// Commands run in-process through an injected console: what they print on each
/// stream and their exit codes, as the program gives them.
@Suite struct InProcessCLITests {
    @Test func helpGoesToStandardOutputWithTheDefaultsOfTheOptions() async {
        let r = await CapturedConsole.run(["help", "get"])
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty)
        #expect(r.stdout == ArgumentParser.help(GetCommand.spec))
        #expect(r.stdout.contains("transfers at once (default 4)"))
        #expect(r.stdout.contains("failed tries in a row before giving up (default 5)"))
    }

    @Test func aUsageMistakeIsOneMessageOnStandardErrorAndExitTwo() async {
        let r = await CapturedConsole.run(["get", "--overwrite", "--skip-existing", "ftp://127.0.0.1:1/a"])
        #expect(r.status == 2)
        #expect(r.stdout.isEmpty)
        #expect(
            r.stderr
                == "ferry get: --overwrite and --skip-existing exclude each other.\nusage: \(GetCommand.spec.usage)\n")

        let json = await CapturedConsole.run(["put", "-j", "0", "a", "ftp://127.0.0.1:1/", "--json"])
        #expect(json.status == 2)
        let object = try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["type"] as? String == "error")
        #expect(object?["error"] as? String == "--jobs wants a number from 1 to 64, not \"0\"")
        #expect(object?["exitCode"] as? Int == 2)
        #expect(json.stderr.hasPrefix("ferry put: --jobs wants a number from 1 to 64, not \"0\".\n"))
    }

    /// `ls` of nginx's folder page on 127.0.0.1: the listing on stdout, the count on
    /// stderr, `--json` an array, a missing folder exit 1 with one message.
    @Test func lsOfAWebFolderPrintsItsListingAndJSON() async throws {
        let files = try TempDir(prefix: "in-process-ls")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: files.file("a.txt")))
        try Data(repeating: 1, count: 1234).write(to: URL(fileURLWithPath: files.file("b.jpg")))
        let nginx = try NginxServer(root: files.path)
        defer { nginx.stop() }

        let text = await CapturedConsole.run(["ls", nginx.url("/index/")])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(text.stdout)")
        #expect(lines.first?.hasPrefix("-            5 ") == true && lines.first?.hasSuffix("  a.txt") == true)
        #expect(lines.last?.hasPrefix("-         1234 ") == true && lines.last?.hasSuffix("  b.jpg") == true)
        #expect(text.stderr == "2 items in \(nginx.url("/index/"))\n")

        let json = await CapturedConsole.run(["ls", nginx.url("/index/"), "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["name"] as? String } == ["a.txt", "b.jpg"])
        #expect(rows.map { $0["size"] as? Int } == [5, 1234])
        #expect(json.stderr.isEmpty || json.stderr.hasPrefix("2 items"), "\(json.stderr)")

        let missing = await CapturedConsole.run(["ls", nginx.url("/index/nothing-here/")])
        #expect(missing.status == 1)
        #expect(missing.stdout.isEmpty)
        #expect(missing.stderr.hasPrefix("ferry ls: "), "\(missing.stderr)")
        #expect(missing.stderr.filter { $0 == "\n" }.count == 1, "one message: \(missing.stderr)")
    }
}
