import FerryKit
import Foundation

/// `ferry cat URL...`: `ferry get URL... -o -`, as `curl URL` and `wget -O - URL`.
enum CatCommand: Command {
    static let spec = CommandSpec(
        name: "cat", summary: "write files to standard output (get -o -)",
        usage: "ferry cat URL... [--retries N]",
        options: [TransferKeys.retries] + connectionOptions,
        minPositionals: 1, maxPositionals: nil,
        details: """
            The same as ferry get URL... -o -: each file is written to standard output
            as it arrives, one after another in the order given; as cat, nothing else is
            printed but errors (on stderr). Nothing is written to disk: no .part and no resume from
            an earlier run (a dropped connection is still continued where the server
            allows it). A pattern (*, ?, [...]) in the last part of a URL writes every
            matching file.
            """)

    static func validate(_ args: ParsedArguments) throws {
        try GetCommand.validate(asGet(args))
    }

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        try await GetCommand.run(asGet(args), console: console, as: "cat")
    }

    /// The arguments of the `get -o -` that `cat` is.
    static func asGet(_ args: ParsedArguments) -> ParsedArguments {
        var get = args
        get.declared.formUnion(GetCommand.spec.options.map(\.long))
        get.values[GetCommand.Keys.output.option.long] = ["-"]
        // As cat: the files and nothing else (errors still go to stderr).
        get.declared.insert(CommonOptions.quiet.option.long)
        get.flags.insert(CommonOptions.quiet.option.long)
        return get
    }
}
