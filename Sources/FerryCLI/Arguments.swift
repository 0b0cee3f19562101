/// A command-line usage mistake; the CLI prints it with the command's usage and exits 2.
struct UsageError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// What one command accepts: boolean flags, options with a value, and how many
/// positional arguments.
struct CommandSpec: Sendable {
    /// A flag or option: long name without `--`, optional one-letter short name.
    struct Option: Sendable {
        var long: String
        var short: Character?
        var takesValue: Bool
        var help: String
        var valueName: String = "VALUE"
        /// The only values accepted, when they are a fixed set (completion offers them).
        var choices: [String] = []
    }

    var name: String
    var summary: String
    var usage: String
    var options: [Option]
    var minPositionals: Int
    var maxPositionals: Int?
    var details: String = ""

    /// Options every command accepts.
    static let common: [Option] = [
        Option(long: "quiet", short: "q", takesValue: false, help: "print no progress"),
        Option(long: "help", short: "h", takesValue: false, help: "show this help"),
    ]

    var allOptions: [Option] { options + CommandSpec.common }
}

/// Parsed arguments of one command.
struct ParsedArguments: Sendable, Equatable {
    var positionals: [String] = []
    var flags: Set<String> = []
    var values: [String: [String]] = [:]

    func has(_ flag: String) -> Bool { flags.contains(flag) }
    func value(_ name: String) -> String? { values[name]?.last }

    /// An integer option within `range`, or `defaultValue` when absent.
    func int(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = value(name) else { return defaultValue }
        guard let n = Int(text), range.contains(n) else {
            throw UsageError(
                message: "--\(name) wants a number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
        }
        return n
    }
}

/// The one hand-written argument parser. Options may come before or after the
/// positional arguments; `--` ends options; `--name=value`, `--name value`,
/// `-j4`, `-j 4` and bundled short flags (`-rq`) are accepted.
enum ArgumentParser {
    static func parse(_ args: [String], spec: CommandSpec) throws -> ParsedArguments {
        var out = ParsedArguments()
        let options = spec.allOptions
        var i = 0
        var onlyPositionals = false
        func option(long: String) throws -> CommandSpec.Option {
            guard let o = options.first(where: { $0.long == long }) else {
                throw UsageError(message: "unknown option --\(long) for '\(spec.name)'")
            }
            return o
        }
        func record(_ o: CommandSpec.Option, value: String?) {
            if o.takesValue {
                out.values[o.long, default: []].append(value ?? "")
            } else {
                out.flags.insert(o.long)
            }
        }
        while i < args.count {
            let arg = args[i]
            i += 1
            if onlyPositionals || arg == "-" || !arg.hasPrefix("-") {
                out.positionals.append(arg)
                continue
            }
            if arg == "--" {
                onlyPositionals = true
                continue
            }
            if arg.hasPrefix("--") {
                let body = arg.dropFirst(2)
                let name: String
                var inline: String?
                if let eq = body.firstIndex(of: "=") {
                    name = String(body[..<eq])
                    inline = String(body[body.index(after: eq)...])
                } else {
                    name = String(body)
                }
                let o = try option(long: name)
                if o.takesValue {
                    if inline == nil {
                        guard i < args.count else { throw UsageError(message: "--\(name) needs a value") }
                        inline = args[i]
                        i += 1
                    }
                    record(o, value: inline)
                } else {
                    guard inline == nil else { throw UsageError(message: "--\(name) takes no value") }
                    record(o, value: nil)
                }
                continue
            }
            // Short options, possibly bundled; a value-taking one ends the bundle.
            var rest = Substring(arg.dropFirst())
            while let c = rest.first {
                rest = rest.dropFirst()
                guard let o = options.first(where: { $0.short == c }) else {
                    throw UsageError(message: "unknown option -\(c) for '\(spec.name)'")
                }
                if o.takesValue {
                    var value = String(rest)
                    if value.isEmpty {
                        guard i < args.count else { throw UsageError(message: "-\(c) needs a value") }
                        value = args[i]
                        i += 1
                    }
                    record(o, value: value)
                    break
                }
                record(o, value: nil)
            }
        }
        if out.has("help") { return out }
        if out.positionals.count < spec.minPositionals {
            throw UsageError(message: "'\(spec.name)' needs more arguments")
        }
        if let max = spec.maxPositionals, out.positionals.count > max {
            throw UsageError(message: "'\(spec.name)' takes at most \(max) argument\(max == 1 ? "" : "s")")
        }
        return out
    }

    /// The help text of one command.
    static func help(_ spec: CommandSpec) -> String {
        var s = "usage: \(spec.usage)\n\n\(spec.summary)\n"
        if !spec.details.isEmpty { s += "\n\(spec.details)\n" }
        s += "\noptions:\n"
        for o in spec.allOptions {
            var left = "  "
            left += o.short.map { "-\($0), " } ?? "    "
            left += "--\(o.long)"
            if o.takesValue { left += " \(o.valueName)" }
            s += left.padding(toLength: max(left.count + 2, 28), withPad: " ", startingAt: 0) + o.help + "\n"
        }
        return s
    }
}
