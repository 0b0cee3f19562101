import Testing

@testable import FerryCLI

@Suite struct ArgumentParserTests {
    static let output = ValueOption("output", short: "o", help: "")
    static let jobs = ValueOption("jobs", short: "j", help: "")
    static let recursive = Flag("recursive", short: "r", help: "")
    static let json = Flag("json", help: "")
    let spec = CommandSpec(
        name: "get", summary: "", usage: "", options: [output, jobs, recursive, json], minPositionals: 1,
        maxPositionals: nil)

    @Test func optionsBeforeAndAfterPositionals() throws {
        let a = try ArgumentParser.parse(["-o", "dir", "http://a/x", "--json", "http://a/y", "-j", "3"], spec: spec)
        #expect(a.positionals == ["http://a/x", "http://a/y"])
        #expect(a.value(Self.output) == "dir")
        #expect(a.value(Self.jobs) == "3")
        #expect(a.has(Self.json))
    }

    @Test func attachedAndEqualsForms() throws {
        let a = try ArgumentParser.parse(["-j4", "--output=o.bin", "u"], spec: spec)
        #expect(a.value(Self.jobs) == "4")
        #expect(a.value(Self.output) == "o.bin")
    }

    @Test func bundledShortFlagsAndValueAtTheEnd() throws {
        let a = try ArgumentParser.parse(["-rqj", "2", "u"], spec: spec)
        #expect(a.has(Self.recursive) && a.has(CommonOptions.quiet))
        #expect(a.value(Self.jobs) == "2")
    }

    @Test func doubleDashEndsOptions() throws {
        let a = try ArgumentParser.parse(["--", "-weird-name", "--json"], spec: spec)
        #expect(a.positionals == ["-weird-name", "--json"])
        #expect(!a.has(Self.json))
    }

    @Test func mistakesAreUsageErrors() {
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["--nope", "u"], spec: spec) }
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["-x", "u"], spec: spec) }
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["u", "-o"], spec: spec) }
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["--json=yes", "u"], spec: spec) }
        #expect(throws: UsageError.self) { try ArgumentParser.parse([], spec: spec) }
        #expect(throws: UsageError.self) {
            try ArgumentParser.parse(["-j", "zero", "u"], spec: spec).value(
                ValueOption("jobs", help: "", default: 1, in: 1...9))
        }
    }

    @Test func helpNeedsNoPositionals() throws {
        #expect(try ArgumentParser.parse(["--help"], spec: spec).has(CommonOptions.help))
        #expect(ArgumentParser.help(spec).contains("--output VALUE"))
    }

    @Test func everyCommandHasHelpAndCommonOptions() throws {
        for c in CLI.commands {
            #expect(try ArgumentParser.parse(["--quiet", "--help"], spec: c.spec).has(CommonOptions.help))
            #expect(ArgumentParser.help(c.spec).hasPrefix("usage: ferry \(c.spec.name)"))
        }
    }
}
