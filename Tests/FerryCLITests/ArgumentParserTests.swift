import Testing

@testable import FerryCLI

@Suite struct ArgumentParserTests {
    let spec = CommandSpec(
        name: "get", summary: "", usage: "",
        options: [
            .init(long: "output", short: "o", takesValue: true, help: ""),
            .init(long: "jobs", short: "j", takesValue: true, help: ""),
            .init(long: "recursive", short: "r", takesValue: false, help: ""),
            .init(long: "json", short: nil, takesValue: false, help: ""),
        ],
        minPositionals: 1, maxPositionals: nil)

    @Test func optionsBeforeAndAfterPositionals() throws {
        let a = try ArgumentParser.parse(["-o", "dir", "http://a/x", "--json", "http://a/y", "-j", "3"], spec: spec)
        #expect(a.positionals == ["http://a/x", "http://a/y"])
        #expect(a.value("output") == "dir")
        #expect(a.value("jobs") == "3")
        #expect(a.has("json"))
    }

    @Test func attachedAndEqualsForms() throws {
        let a = try ArgumentParser.parse(["-j4", "--output=o.bin", "u"], spec: spec)
        #expect(a.value("jobs") == "4")
        #expect(a.value("output") == "o.bin")
    }

    @Test func bundledShortFlagsAndValueAtTheEnd() throws {
        let a = try ArgumentParser.parse(["-rqj", "2", "u"], spec: spec)
        #expect(a.has("recursive") && a.has("quiet"))
        #expect(a.value("jobs") == "2")
    }

    @Test func doubleDashEndsOptions() throws {
        let a = try ArgumentParser.parse(["--", "-weird-name", "--json"], spec: spec)
        #expect(a.positionals == ["-weird-name", "--json"])
        #expect(!a.has("json"))
    }

    @Test func mistakesAreUsageErrors() {
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["--nope", "u"], spec: spec) }
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["-x", "u"], spec: spec) }
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["u", "-o"], spec: spec) }
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["--json=yes", "u"], spec: spec) }
        #expect(throws: UsageError.self) { try ArgumentParser.parse([], spec: spec) }
        #expect(throws: UsageError.self) {
            try ArgumentParser.parse(["-j", "zero", "u"], spec: spec).int("jobs", default: 1, in: 1...9)
        }
    }

    @Test func helpNeedsNoPositionals() throws {
        #expect(try ArgumentParser.parse(["--help"], spec: spec).has("help"))
        #expect(ArgumentParser.help(spec).contains("--output VALUE"))
    }

    @Test func everyCommandHasHelpAndCommonOptions() throws {
        for c in CLI.commands {
            #expect(try ArgumentParser.parse(["--quiet", "--help"], spec: c.spec).has("help"))
            #expect(ArgumentParser.help(c.spec).hasPrefix("usage: ferry \(c.spec.name)"))
        }
    }
}
