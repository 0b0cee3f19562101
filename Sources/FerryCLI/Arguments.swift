/// A command-line usage mistake; the CLI prints it with the command's usage and exits 2.
struct UsageError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// A typed option key: a command declares its options once as keys; the keys
/// generate the spec and the help text, and they are the only way to look an
/// option up (`args.has(Options.recursive)`), so a misspelt name cannot compile.
protocol OptionKey: Sendable {
    var option: CommandSpec.Option { get }
}

/// An option without a value (`--recursive`, `-r`).
struct Flag: OptionKey {
    let option: CommandSpec.Option

    init(_ long: String, short: Character? = nil, help: String) {
        option = CommandSpec.Option(long: long, short: short, takesValue: false, help: help)
    }
}

/// An option with a value (`--output DEST`, `-o DEST`, `--jobs N`) of type
/// `Value`: it carries how its text is read and what it is when not given, and
/// the help text says that default (`(default 4)`) from the value itself, so the
/// help and the behaviour cannot drift apart.
struct ValueOption<Value: Sendable>: OptionKey {
    let option: CommandSpec.Option
    /// The value when the option is not given.
    let defaultValue: Value
    /// Reads the option's text; a ``UsageError`` says what it wants.
    let read: @Sendable (String) throws -> Value

    /// An option read by `read`, `defaultValue` when absent. With `shownDefault`,
    /// the help ends `(default SHOWN)`, or `(default SHOWN; NOTE)` with a `note`.
    init(
        _ long: String, short: Character? = nil, help: String, valueName: String = "VALUE", choices: [String] = [],
        default defaultValue: Value, shownDefault: String? = nil, note: String? = nil,
        read: @escaping @Sendable (String) throws -> Value
    ) {
        var text = help
        if let shownDefault { text += " (default \(shownDefault)\(note.map { "; " + $0 } ?? ""))" }
        option = CommandSpec.Option(
            long: long, short: short, takesValue: true, help: text, valueName: valueName, choices: choices)
        self.defaultValue = defaultValue
        self.read = read
    }

    /// An option read by `value`, which gives nil for text that is not one: the
    /// usage error is then `--NAME wants WANTS, not "TEXT"`.
    init(
        _ long: String, short: Character? = nil, help: String, valueName: String = "VALUE", choices: [String] = [],
        default defaultValue: Value, shownDefault: String? = nil, note: String? = nil, wants: String,
        value: @escaping @Sendable (String) -> Value?
    ) {
        self.init(
            long, short: short, help: help, valueName: valueName, choices: choices, default: defaultValue,
            shownDefault: shownDefault, note: note
        ) { text in
            guard let v = value(text) else {
                throw UsageError(message: "--\(long) wants \(wants), not \"\(text)\"")
            }
            return v
        }
    }
}

extension ValueOption where Value == String? {
    /// Text as given; nil when the option is absent.
    init(_ long: String, short: Character? = nil, help: String, valueName: String = "VALUE", choices: [String] = []) {
        self.init(long, short: short, help: help, valueName: valueName, choices: choices, default: nil) { $0 }
    }
}

extension ValueOption where Value == String {
    /// Text as given; `defaultValue` (shown in the help) when the option is absent.
    init(
        _ long: String, short: Character? = nil, help: String, valueName: String = "VALUE", choices: [String] = [],
        default defaultValue: String, note: String? = nil
    ) {
        self.init(
            long, short: short, help: help, valueName: valueName, choices: choices, default: defaultValue,
            shownDefault: defaultValue, note: note
        ) { $0 }
    }
}

extension ValueOption where Value == Int {
    /// A whole number within `range`; `defaultValue` (shown in the help) when absent.
    init(
        _ long: String, short: Character? = nil, help: String, valueName: String = "N", default defaultValue: Int,
        note: String? = nil, in range: ClosedRange<Int>
    ) {
        self.init(
            long, short: short, help: help, valueName: valueName, default: defaultValue,
            shownDefault: "\(defaultValue)", note: note, wants: ValueOption.number(in: range)
        ) { Int($0).flatMap { range.contains($0) ? $0 : nil } }
    }

    static func number(in range: ClosedRange<Int>) -> String {
        "a number from \(range.lowerBound) to \(range.upperBound)"
    }
}

extension ValueOption where Value == Int? {
    /// A whole number within `range`; nil when absent (the command decides).
    init(_ long: String, short: Character? = nil, help: String, valueName: String = "N", in range: ClosedRange<Int>) {
        self.init(
            long, short: short, help: help, valueName: valueName, default: nil,
            wants: ValueOption<Int>.number(in: range)
        ) { text -> Int?? in
            // Not `Int(text)` as it is: a nil there would be a value (nil), not a refusal.
            guard let n = Int(text), range.contains(n) else { return .none }
            return .some(n)
        }
    }
}

/// What one command accepts: boolean flags, options with a value, and how many
/// positional arguments.
struct CommandSpec: Sendable {
    /// A flag or option: long name without `--`, optional one-letter short name.
    /// (The man page and shell completions are generated from these fields.)
    struct Option: Sendable, Equatable {
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

    init(
        name: String, summary: String, usage: String, options: [any OptionKey], minPositionals: Int,
        maxPositionals: Int?, details: String = ""
    ) {
        self.name = name
        self.summary = summary
        self.usage = usage
        self.options = options.map(\.option)
        self.minPositionals = minPositionals
        self.maxPositionals = maxPositionals
        self.details = details
    }

    /// Options every command accepts.
    static let common: [Option] = [
        CommonOptions.quiet.option, CommonOptions.json.option, CommonOptions.verbose.option, CommonOptions.help.option,
    ]

    /// The command's options, then the common ones it does not declare itself;
    /// a common option whose short letter the command uses for itself (`ls -h`)
    /// keeps only its long name.
    var allOptions: [Option] {
        let shorts = Set(options.compactMap(\.short))
        let longs = Set(options.map(\.long))
        return options
            + CommandSpec.common.filter { !longs.contains($0.long) }.map { o in
                var o = o
                if let s = o.short, shorts.contains(s) { o.short = nil }
                return o
            }
    }
}

/// The options every command accepts.
enum CommonOptions {
    static let quiet = Flag("quiet", short: "q", help: "print no progress")
    static let json = Flag("json", help: "print JSON on standard output (errors too: {\"type\":\"error\",...})")
    static let verbose = Flag(
        "verbose", short: "v", help: "show what Ferry asks and the server answers (passwords masked)")
    static let help = Flag("help", short: "h", help: "show this help")
}

/// Options other tools have that Ferry answers with what it does instead.
enum ForeignOptions {
    static func hint(short: Character) -> String? {
        switch short {
        case "O":
            "ferry saves under the remote file's name already (what curl -O and wget do); -o DEST names another"
        default: nil
        }
    }
}

/// Parsed arguments of one command. Options are looked up by their typed keys;
/// a key the command did not declare is a programming error (asserted).
struct ParsedArguments: Sendable, Equatable {
    var positionals: [String] = []
    var flags: Set<String> = []
    var values: [String: [String]] = [:]
    /// The long names the command declared.
    var declared: Set<String> = []

    private func check(_ key: some OptionKey) {
        assert(
            declared.isEmpty || declared.contains(key.option.long),
            "--\(key.option.long) is looked up but not declared by this command")
    }

    func has(_ flag: Flag) -> Bool {
        check(flag)
        return flags.contains(flag.option.long)
    }

    /// Whether the option is on the command line (a flag set, a value given).
    func given(_ key: some OptionKey) -> Bool {
        check(key)
        return flags.contains(key.option.long) || values[key.option.long] != nil
    }

    /// A text option as given (the last one given), nil when absent.
    func value(_ key: ValueOption<String?>) -> String? {
        check(key)
        return values[key.option.long]?.last
    }

    /// Every text given for a repeatable option, in order (empty when absent).
    func values(_ key: ValueOption<String?>) -> [String] {
        check(key)
        return values[key.option.long] ?? []
    }

    /// The option's value as its type reads it (the last one given), its
    /// default when absent; a usage error when the text is not a value.
    func value<Value>(_ key: ValueOption<Value>) throws -> Value {
        check(key)
        guard let text = values[key.option.long]?.last else { return key.defaultValue }
        return try key.read(text)
    }
}

/// The one hand-written argument parser. Options may come before or after the
/// positional arguments; `--` ends options; `--name=value`, `--name value`,
/// `-j4`, `-j 4` and bundled short flags (`-rq`) are accepted.
enum ArgumentParser {
    static func parse(_ args: [String], spec: CommandSpec) throws -> ParsedArguments {
        var out = ParsedArguments()
        let options = spec.allOptions
        out.declared = Set(options.map(\.long))
        var i = 0
        var onlyPositionals = false
        func option(long: String) throws -> CommandSpec.Option {
            guard let o = options.first(where: { $0.long == long }) else {
                var message = "unknown option --\(long) for '\(spec.name)'"
                if let near = Suggestion.nearest(to: long, in: options.map(\.long)) {
                    message += "; did you mean --\(near)?"
                }
                throw UsageError(message: message)
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
                    if let hint = ForeignOptions.hint(short: c) { throw UsageError(message: "-\(c): \(hint).") }
                    var message = "unknown option -\(c) for '\(spec.name)'"
                    // `-only` meant as `--only`.
                    if arg.count > 2,
                        let near = Suggestion.nearest(to: String(arg.dropFirst()), in: options.map(\.long))
                    {
                        message += "; did you mean --\(near)?"
                    }
                    throw UsageError(message: message)
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
        if out.flags.contains(CommonOptions.help.option.long) { return out }
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

/// "Did you mean": the closest known word by edit distance, when close enough.
enum Suggestion {
    static func nearest(to word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(word.lowercased(), $0)) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        // Two edits for names of four or more letters, one for shorter ones; a
        // prefix of a longer name (`--over` for `--overwrite`) also counts.
        let limit = word.count >= 4 ? 2 : 1
        if best.1 <= limit { return best.0 }
        if word.count >= 3, let prefixed = candidates.first(where: { $0.hasPrefix(word) }) { return prefixed }
        return nil
    }

    /// Levenshtein distance (with adjacent transpositions counted as one edit).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
