import FerryKit
import Foundation

/// The `ferry` command line: dispatches to one command and returns the exit code
/// (0 success, 1 an operation failed, 2 bad usage or bad URL).
public enum CLI {
    /// Commands in `ferry --help` order.
    static var commands: [any Command.Type] {
        [
            ListCommand.self, GetCommand.self, CatCommand.self, PutCommand.self, RemoveCommand.self,
            MakeDirectoryCommand.self,
            RemoveDirectoryCommand.self, MoveCommand.self, InfoCommand.self, SyncCommand.self, CardCommand.self,
            ServeCommand.self, DemoCommand.self,
        ]
    }

    /// Runs `ferry` with `arguments` (the first one is the program name).
    public static func main(_ arguments: [String]) async -> Int32 {
        let console = Console()
        var args = Array(arguments.dropFirst())
        guard let first = args.first else {
            console.error(overview())
            return 2
        }
        if first == "--help" || first == "-h" {
            console.out(overview() + "\n")
            return 0
        }
        if first == "--version" {
            console.out(VersionText.render())
            return 0
        }
        if first == GenerateCommand.name { return GenerateCommand.run(Array(args.dropFirst()), console: console) }
        if first == "help" {
            guard args.count > 1 else {
                console.out(overview() + "\n")
                return 0
            }
            guard let c = command(named: args[1]) else {
                console.error(unknownCommand(args[1]))
                return 2
            }
            console.out(ArgumentParser.help(c.spec))
            return 0
        }
        args.removeFirst()
        guard let c = command(named: first) else {
            console.error(unknownCommand(first))
            return 2
        }
        let parsed: ParsedArguments
        do {
            parsed = try ArgumentParser.parse(args, spec: c.spec)
        } catch {
            console.error("ferry \(first): \(error)\nusage: \(c.spec.usage)\nsee 'ferry help \(first)'")
            return 2
        }
        if parsed.has(CommonOptions.help) {
            console.out(ArgumentParser.help(c.spec))
            return 0
        }
        do {
            return try await c.run(parsed, console: console)
        } catch let e as UsageError {
            console.error("ferry \(first): \(e)\nusage: \(c.spec.usage)")
            return 2
        } catch let e as FerryError {
            console.error("ferry \(first): \(Hints.describe(e))")
            return exitCode(for: e)
        } catch {
            console.error("ferry \(first): \(error)")
            return 1
        }
    }

    /// The exit code of a command that failed with `error`: 2 for a URL Ferry
    /// cannot use (bad usage), 1 for every failed operation, an `unexpected`
    /// error (one FerryKit has no code for) included.
    static func exitCode(for error: FerryError) -> Int32 {
        switch error.code {
        case .invalidURL, .unsupportedScheme: 2
        case .unexpected: 1
        default: 1
        }
    }

    /// The exit code after Ctrl-C (128 + SIGINT), as shells report it.
    static let interruptedExitCode: Int32 = 130

    static func unknownCommand(_ name: String) -> String {
        var text = "ferry: no command '\(name)'"
        if let near = Suggestion.nearest(to: name, in: commands.map { $0.spec.name }) {
            text += "; did you mean '\(near)'?"
        }
        return text + " See 'ferry --help'"
    }

    static func command(named name: String) -> (any Command.Type)? {
        commands.first { $0.spec.name == name }
    }

    static func overview() -> String {
        var s = """
            ferry \(Ferry.version): browse remote storage and move files between it and your disk
            (FlashAir and ez Share cards, FTP/FTPS, SFTP, HTTP/HTTPS).

            usage: ferry COMMAND [ARGUMENTS] [OPTIONS]

            commands:

            """
        for c in commands {
            s += "  " + c.spec.name.padding(toLength: 8, withPad: " ", startingAt: 0) + c.spec.summary + "\n"
        }
        s += """

            'ferry help COMMAND' describes one command. Exit codes: 0 success,
            1 an operation failed, 2 bad usage or bad URL, 130 interrupted (Ctrl-C).
            """
        return s
    }
}

/// One `ferry` subcommand.
protocol Command {
    static var spec: CommandSpec { get }
    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32
}
