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
        await main(arguments, console: Console())
    }

    /// Runs `ferry` with `arguments`, writing to `console` (a test's, to run a
    /// command in-process and read what it printed).
    static func main(_ arguments: [String], console: Console) async -> Int32 {
        var args = Array(arguments.dropFirst())
        // Options before the command (`ferry -v get URL`, as curl and lftp take
        // them) go with the command.
        var leading: [String] = []
        while let a = args.first, leadingOptions.contains(a) {
            leading.append(a)
            args.removeFirst()
        }
        guard let first = args.first else {
            if !leading.isEmpty {
                console.error(
                    "ferry: \(leading.joined(separator: " ")) goes with a command (ferry get URL -v). "
                        + "See 'ferry --help'; ferry -V prints the version.")
            } else {
                console.error(overview())
            }
            return 2
        }
        if first == "--help" || first == "-h" {
            // `ferry --help get` is `ferry help get`.
            if args.count > 1 { return help(args[1], console: console) }
            console.out(overview() + "\n")
            return 0
        }
        if first == "--version" || first == "-V" {
            console.out(VersionText.render())
            return 0
        }
        if first == GenerateCommand.name { return GenerateCommand.run(Array(args.dropFirst()), console: console) }
        if first == "help" {
            guard args.count > 1 else {
                console.out(overview() + "\n")
                return 0
            }
            return help(args[1], console: console)
        }
        args.removeFirst()
        args = leading + args
        let json = args.contains("--json")
        guard let c = command(named: first) else {
            if json {
                console.json(JSONFailure(command: nil, error: unknownCommand(first), errorCode: "usage", exitCode: 2))
            }
            console.error(unknownCommand(first))
            return 2
        }
        let parsed: ParsedArguments
        do {
            parsed = try ArgumentParser.parse(args, spec: c.spec)
        } catch {
            if json {
                console.json(JSONFailure(command: first, error: "\(error)", errorCode: "usage", exitCode: 2))
            }
            console.error("ferry \(first): \(sentence("\(error)"))\nusage: \(c.spec.usage)\nSee 'ferry help \(first)'.")
            return 2
        }
        if parsed.has(CommonOptions.help) {
            console.out(ArgumentParser.help(c.spec))
            return 0
        }
        let settings: RequestSettings
        do {
            settings = try requestSettings(parsed, console: console)
        } catch {
            console.error("ferry \(first): \(sentence("\(error)"))\nusage: \(c.spec.usage)")
            return 2
        }
        return await RequestSettings.$current.withValue(settings) {
            await run(c, first, parsed, console: console)
        }
    }

    /// Options that may come before the command name.
    static let leadingOptions: Set<String> = ["-v", "--verbose", "-q", "--quiet", "--json"]

    /// `ferry help NAME`.
    static func help(_ name: String, console: Console) -> Int32 {
        guard let c = command(named: name) else {
            console.error(unknownCommand(name))
            return 2
        }
        console.out(ArgumentParser.help(c.spec))
        return 0
    }

    /// Runs one parsed command; its failure is one message (a JSON object on
    /// stdout with `--json`) and the exit code.
    static func run(
        _ c: any Command.Type, _ name: String, _ parsed: ParsedArguments, console: Console, asked: Bool = false
    ) async -> Int32 {
        let json = parsed.has(CommonOptions.json)
        do {
            try c.validate(parsed)
            return try await c.run(parsed, console: console)
        } catch let e as UsageError {
            if json { console.json(JSONFailure(command: name, error: e.message, errorCode: "usage", exitCode: 2)) }
            console.error("ferry \(name): \(sentence(e.message))\nusage: \(c.spec.usage)")
            return 2
        } catch var e as FerryError {
            if e.code == .authenticationFailed, !asked, let login = PasswordPrompt.loginWithoutPassword(parsed) {
                // Refused without a password: ask on a terminal and run once more, as curl -u user does.
                if let user = login.user, PasswordPrompt.ask(user: user, host: login.host) != nil {
                    return await run(c, name, parsed, console: console, asked: true)
                }
                e.detail = [e.detail, PasswordPrompt.hint(user: login.user, host: login.host)].compactMap { $0 }
                    .joined(separator: "; ")
            }
            let code = exitCode(for: e)
            if json {
                console.json(
                    JSONFailure(
                        command: name, error: Hints.describe(e), errorCode: e.code.description, exitCode: code,
                        target: e.target, serverCode: e.serverCode))
            }
            console.error("ferry \(name): \(sentence(Hints.describe(e)))")
            return code
        } catch {
            if json {
                console.json(JSONFailure(command: name, error: "\(error)", errorCode: "unexpected", exitCode: 1))
            }
            console.error("ferry \(name): \(sentence("\(error)"))")
            return 1
        }
    }

    /// A message as one sentence: with a full stop unless it ends with one, `?` or `!`.
    static func sentence(_ text: String) -> String {
        guard let last = text.last, !".?!".contains(last) else { return text }
        return text + "."
    }

    /// The exit code of a command that failed with `error`: 2 for a URL Ferry
    /// cannot use (bad usage), 1 for every failed operation, an `unexpected`
    /// error (one FerryKit has no code for) included.
    static func exitCode(for error: FerryError) -> Int32 {
        switch error.code {
        case .invalidURL, .unsupportedScheme, .invalidTemplate: 2
        case .unexpected: 1
        default: 1
        }
    }

    /// The exit code after Ctrl-C (128 + SIGINT), as shells report it.
    static let interruptedExitCode: Int32 = 130

    static func unknownCommand(_ name: String) -> String {
        let text = "ferry: no command '\(name)'"
        if name.hasPrefix("-") {
            // An option where the command belongs (`ferry -x`): no command name is near it.
            return text + ": a command comes first (ferry get URL \(name)). See 'ferry --help'."
        }
        if let near = Suggestion.nearest(to: name, in: commands.map { $0.spec.name }) {
            return text + "; did you mean '\(near)'? See 'ferry --help'."
        }
        return text + ". See 'ferry --help'."
    }

    static func command(named name: String) -> (any Command.Type)? {
        commands.first { $0.spec.name == name }
    }

    static func overview() -> String {
        var s = """
            ferry \(Ferry.version): browse remote storage and move files between it and your disk
            (FlashAir and ez Share cards, cameras, FTP/FTPS, SFTP, SMB, HTTP/HTTPS, WebDAV, local folders).

            usage: ferry COMMAND [ARGUMENTS] [OPTIONS]

            commands:

            """
        for c in commands {
            s += "  " + c.spec.name.padding(toLength: 8, withPad: " ", startingAt: 0) + c.spec.summary + "\n"
        }
        s += """

            'ferry help COMMAND' describes one command; 'man ferry' has the options
            every command takes (-v, --json, --quiet, connections and timeouts) and
            the environment (FERRY_USER, FERRY_PASSWORD, ~/.netrc, FERRY_KEY_PASSPHRASE,
            FERRY_SSH_TRANSPORT, FERRY_SMB_THREADS, SSH_AUTH_SOCK, CURL_CA_BUNDLE, SSL_CERT_FILE).
            Exit codes: 0 success, 1 an operation failed, 2 bad usage or bad URL, 130 interrupted
            (Ctrl-C).
            """
        return s
    }
}

/// One `ferry` subcommand.
protocol Command {
    static var spec: CommandSpec { get }
    /// The usage mistakes the options alone show (options that exclude or need
    /// each other, values out of range), as ``UsageError``s: checked before `run`,
    /// without a server or a file.
    static func validate(_ args: ParsedArguments) throws
    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32
}

extension Command {
    /// No checks beyond the parser's.
    static func validate(_ args: ParsedArguments) throws {}
}

/// A failure with `--json`: one object on stdout, beside the message on stderr.
struct JSONFailure: Encodable {
    var type = "error"
    var command: String?
    var error: String
    var errorCode: String
    var exitCode: Int32
    var target: String?
    var serverCode: Int?
}
