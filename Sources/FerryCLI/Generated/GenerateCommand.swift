import FerryKit
import Foundation

/// `ferry __generate man|bash|zsh|fish`: the man page and the shell completions,
/// written from the same ``CommandSpec``s the parser and `--help` use, so they
/// cannot drift from the CLI. Hidden: `scripts/package.sh` calls it at build time.
enum GenerateCommand {
    static let name = "__generate"

    /// What can be generated, by argument.
    static let kinds = ["man", "bash", "zsh", "fish"]

    static func run(_ args: [String], console: Console) -> Int32 {
        let commands = CLI.commands.map { $0.spec }
        switch args.first {
        case "man" where args.count == 1:
            console.out(ManPage.render(commands: commands, date: ManPage.buildDate()))
        case "bash" where args.count == 1:
            console.out(Completions.bash(commands: commands))
        case "zsh" where args.count == 1:
            console.out(Completions.zsh(commands: commands))
        case "fish" where args.count == 1:
            console.out(Completions.fish(commands: commands))
        default:
            console.error("usage: ferry \(name) \(kinds.joined(separator: "|"))")
            return 2
        }
        return 0
    }
}
