import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCLI

/// `ferry __generate man|bash|zsh` and `ferry --version`, run as the built
/// program: the man page names every command and option of the specs and
/// renders without a groff warning; bash completes commands, options and
/// option values when driven as on a Tab press; the zsh script parses.
@Suite(.serialized)
struct GeneratedDocsTests {
    let ferry = TestProcess.ferryExecutable()
    let work: TempDir

    init() throws {
        work = try TempDir(prefix: "generated-docs")
    }

    func generate(_ kind: String) throws -> String {
        let out = try TestProcess.run(ferry, ["__generate", kind])
        #expect(out.status == 0, "\(out.stderr)")
        return out.stdout
    }

    @Test func theManPageHasEveryCommandAndOptionOfTheSpecs() throws {
        let page = try generate("man")
        for spec in CLI.commands.map({ $0.spec }) {
            #expect(page.contains(".SS \"\(ManPage.escape(spec.name)) \\-"), "no section for \(spec.name)")
            #expect(page.contains(ManPage.escape(spec.usage)), "no usage of \(spec.name)")
            for option in spec.allOptions {
                #expect(page.contains("\\fB\\-\\-\(ManPage.escape(option.long))\\fR"), "\(spec.name) --\(option.long)")
                #expect(page.contains(ManPage.escape(option.help)), "\(spec.name) --\(option.long)'s help")
            }
        }
        for section in ["URLS", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"] {
            #expect(page.contains(".SH \(section)\n"), "no \(section)")
        }
        for text in ["FERRY_PASSWORD", ".ferry\\-sync.sqlite", "ferry\\-sync@", "\"ferry \(Ferry.version)\""] {
            #expect(page.contains(text), "no \(text)")
        }
        #expect(try TestProcess.run(ferry, ["__generate", "html"]).status == 2)
    }

    /// Issue 29: every scheme, every variable, connection options once, `-h` for ls said.
    @Test func theManPageNamesEverySchemeAndVariableAndConnectionOptionsOnce() throws {
        let page = try generate("man")
        for text in [
            "sftp://", "SFTP", "smb://", "dav://", "davs://", "WebDAV", "FERRY_KEY_PASSPHRASE", "FERRY_SSH_TRANSPORT",
            "FERRY_SMB_THREADS", "SSH_AUTH_SOCK",
            "CURL_CA_BUNDLE", "SSL_CERT_FILE", "FERRY_USER",
            ".SH CONNECTION OPTIONS", "\\fB\\-\\-human\\-readable\\fR", "\"type\":\"error\"",
        ] {
            #expect(page.contains(text), "no \(text)")
        }
        // Once under CONNECTION OPTIONS, not under each command that takes it.
        for option in ["connect\\-timeout", "timeout", "connections"] {
            let heading = ".TP\n\\fB\\-\\-\(option)\\fR \\fI"
            #expect(
                page.components(separatedBy: heading).count == 2,
                "--\(option) is listed \(page.components(separatedBy: heading).count - 1) times")
        }
        let help = try TestProcess.run(ferry, ["--help"]).stdout
        for text in ["SFTP", "FERRY_KEY_PASSPHRASE", "SSH_AUTH_SOCK", "CURL_CA_BUNDLE", "SSL_CERT_FILE"] {
            #expect(help.contains(text), "--help names no \(text)")
        }
    }

    @Test func fishCompletesEveryCommandAndOption() throws {
        let text = try generate("fish")
        for spec in CLI.commands.map({ $0.spec }) {
            #expect(text.contains("-a \(spec.name) -d"), "no command \(spec.name)")
            for option in spec.allOptions {
                #expect(
                    text.contains("__fish_seen_subcommand_from \(spec.name)' -l \(option.long)"),
                    "\(spec.name) --\(option.long)")
            }
        }
        #expect(text.contains("-l layout -r -f -a 'tree date'"), "\(text)")
        if let fish = TestProcess.which("fish") {
            let script = work.file("ferry.fish")
            try text.write(toFile: script, atomically: true, encoding: .utf8)
            #expect(try TestProcess.run(fish, ["--no-execute", script]).status == 0)
        }
    }

    @Test func theManPageRendersWithoutWarnings() throws {
        let page = try generate("man")
        let file = work.file("ferry.1")
        try page.write(toFile: file, atomically: true, encoding: .utf8)
        let groff = try #require(TestProcess.which("groff"), "groff is installed by scripts/setup.sh (man-db)")
        let checked = try TestProcess.run(groff, ["-man", "-Tutf8", "-ww", "-z", file])
        #expect(checked.status == 0 && checked.stderr.isEmpty, "\(checked.stderr)")
        let man = try #require(TestProcess.which("man"), "man is installed by scripts/setup.sh (man-db)")
        let shown = try TestProcess.run(man, ["-l", file], environment: ["MANWIDTH": "100", "MANPAGER": "cat"])
        #expect(shown.status == 0, "\(shown.stderr)")
        for text in ["EXIT STATUS", "--overwrite", "--layout L", "ferry sync URL DIR"] {
            #expect(shown.stdout.contains(text), "man -l shows no \(text)")
        }
    }

    /// COMPREPLY of `_ferry` for the words of a command line whose last word is being completed.
    func complete(_ words: [String], script: String, cwd: String? = nil) throws -> [String] {
        let quoted = words.map { Completions.quoted($0) }.joined(separator: " ")
        let program = """
            source \(Completions.quoted(script))
            complete -p ferry >/dev/null || exit 3
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            _ferry
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let bash = try #require(TestProcess.which("bash"))
        let out = try TestProcess.run(bash, ["--norc", "--noprofile", "-i", "-c", program], cwd: cwd)
        #expect(out.status == 0, "\(out.stderr)")
        return out.stdout.split(separator: "\n").map(String.init)
    }

    @Test func bashCompletesCommandsOptionsValuesAndPaths() throws {
        let script = work.file("ferry.bash")
        try generate("bash").write(toFile: script, atomically: true, encoding: .utf8)
        #expect(try complete(["ferry", "g"], script: script) == ["get"])
        #expect(try complete(["ferry", "get", "--ov"], script: script) == ["--overwrite"])
        #expect(try complete(["ferry", "get", "URL", "--ov"], script: script) == ["--overwrite"])
        #expect(try complete(["ferry", "s"], script: script).sorted() == ["serve", "sync"])
        #expect(try complete(["ferry", "help", "sy"], script: script) == ["sync"])
        #expect(try complete(["ferry", "--ver"], script: script) == ["--version"])
        #expect(try complete(["ferry", "sync", "--layout", ""], script: script).sorted() == ["date", "tree"])
        #expect(try complete(["ferry", "sync", "--layout", "=", "d"], script: script) == ["date"])
        #expect(try complete(["ferry", "sync", "--l"], script: script) == ["--layout"])
        #expect(try complete(["ferry", "get", "-j", ""], script: script) == [])  // a number: nothing to offer
        // Every option of every command, as the specs have them.
        for spec in CLI.commands.map({ $0.spec }) {
            let offered = try complete(["ferry", spec.name, "--"], script: script)
            #expect(Set(offered) == Set(spec.allOptions.map { "--" + $0.long }), "\(spec.name)")
        }
        // Local paths for arguments and for options naming a file or folder.
        try FileManager.default.createDirectory(atPath: work.file("photos dir"), withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: work.file("photo.jpg")))
        #expect(
            try complete(["ferry", "put", "pho"], script: script, cwd: work.path).sorted() == [
                "photo.jpg", "photos dir",
            ])
        #expect(
            try complete(["ferry", "get", "URL", "-o", "photos"], script: script, cwd: work.path) == ["photos dir"])
    }

    @Test func theZshCompletionParses() throws {
        let script = work.file("_ferry")
        let text = try generate("zsh")
        try text.write(toFile: script, atomically: true, encoding: .utf8)
        #expect(text.hasPrefix("#compdef ferry\n"))
        let get = try #require(CLI.commands.first { $0.spec.name == "get" }?.spec)
        let overwrite = try #require(get.allOptions.first { $0.long == "overwrite" })
        #expect(text.contains("'--overwrite[\(overwrite.help)]'"))
        #expect(
            text.contains(
                "'--layout=[tree: keep the remote folders (default); date: DIR/YYYY-MM-DD/NAME by the day taken; or a folder TEMPLATE]:L:(tree date)'"
            ))
        let zsh = try #require(TestProcess.which("zsh"), "zsh is installed by scripts/setup.sh")
        let parsed = try TestProcess.run(zsh, ["-n", script])
        #expect(parsed.status == 0, "\(parsed.stderr)")
        // Loaded as a completion function, it registers itself for ferry.
        let loaded = try TestProcess.run(
            zsh, ["-f", "-c", "autoload -Uz compinit && compinit -u -D && source \(script) && echo $_comps[ferry]"])
        #expect(loaded.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "_ferry", "\(loaded.stderr)")
    }

    @Test func versionNamesTheLibrariesFerryRunsWith() throws {
        let out = try TestProcess.run(ferry, ["--version"])
        #expect(out.status == 0)
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "ferry \(Ferry.version)")
        let curl = CurlVersion.current
        #expect(lines.contains { $0.hasPrefix("libcurl \(curl.version) (") }, "\(out.stdout)")
        #expect(lines.contains { $0.hasPrefix("libssh2 ") || $0.hasPrefix("libssh ") || $0.contains("none") })
        // The loaded libraries are the ones Debian's -dev packages describe.
        if let pkgConfig = TestProcess.which("pkg-config") {
            let curlDev = try TestProcess.run(pkgConfig, ["--modversion", "libcurl"]).stdout
            #expect(curl.version == curlDev.trimmingCharacters(in: .whitespacesAndNewlines))
            let mhd = try TestProcess.run(pkgConfig, ["--modversion", "libmicrohttpd"]).stdout
            let mhdVersion = mhd.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(lines.contains("libmicrohttpd \(mhdVersion)"), "\(out.stdout)")
        }
        #expect(
            VersionText.render(
                curl: CurlVersion(version: "8.0.0", ssl: nil, libz: nil, libssh: "libssh2/1.11.0", nghttp2: nil),
                microhttpd: "0.9.77")
                == "ferry \(Ferry.version)\nlibcurl 8.0.0 (no TLS)\nlibssh2 1.11.0 (through libcurl)\nlibmicrohttpd 0.9.77\n"
        )
    }
}
