import Foundation

/// A name or folder template for imports, as Rapid Photo Downloader and
/// Lightroom offer them: `{taken:%Y}/{taken:%Y-%m-%d}` for folders,
/// `{taken:%Y%m%d-%H%M%S}_{name}` for names.
///
/// Tokens (unknown ones are an error when the template is parsed):
///
/// | token | value |
/// |---|---|
/// | `{taken:FORMAT}` | the date taken (Exif `DateTimeOriginal`, else the source's time), strftime `FORMAT` (`%Y %m %d %H %M %S %y %b %j ...`) |
/// | `{today:FORMAT}` | the day of the import, strftime |
/// | `{name}`, `{stem}`, `{ext}` | the original name, without its extension, the extension (as written) |
/// | `{folder}` | the source folder's name (`100CANON`) |
/// | `{make}`, `{model}` | the camera (Exif `Make`, `Model`; `unknown` when not recorded) |
/// | `{seq}`, `{seq:N}` | the file's number in this import (from 1; `N` digits, zero-padded) |
/// | `{dayseq}`, `{dayseq:N}` | the file's number among this import's files of the same day taken |
/// | `{tag}` | the job code given with the import (`--tag wedding`); empty when none |
///
/// A rendered name never holds `/` (nor NUL); a folder template's `/` make
/// folders, and no component may be `.` or `..`.
public struct NameTemplate: Sendable, Hashable, CustomStringConvertible {
    /// The template as written.
    public let text: String
    let parts: [Part]

    enum Part: Sendable, Hashable {
        case literal(String)
        case taken(String)
        case today(String)
        case name, stem, ext, folder, make, model, tag
        case seq(Int)
        case daySeq(Int)
    }

    /// What a template is rendered from.
    public struct Context: Sendable, Hashable {
        /// The date taken, or the source's time, as the camera's clock showed it.
        public var taken: RemoteTimestamp
        /// The day of the import (local time).
        public var today: Date
        /// The original file name.
        public var name: String
        /// The source folder's name.
        public var folder: String
        /// The camera.
        public var camera: CameraFacts?
        /// The file's number in this import, from 1.
        public var sequence: Int
        /// The file's number among this import's files of its day, from 1.
        public var daySequence: Int
        /// The job code.
        public var tag: String?

        /// A context.
        public init(
            taken: RemoteTimestamp, today: Date = Date(), name: String, folder: String, camera: CameraFacts? = nil,
            sequence: Int = 1, daySequence: Int = 1, tag: String? = nil
        ) {
            self.taken = taken
            self.today = today
            self.name = name
            self.folder = folder
            self.camera = camera
            self.sequence = sequence
            self.daySequence = daySequence
            self.tag = tag
        }
    }

    /// The template as written.
    public var description: String { text }

    /// Parses a template.
    ///
    /// - Throws: `FerryError` `.invalidTemplate` naming what is wrong.
    public init(_ text: String) throws(FerryError) {
        self.text = text
        parts = try NameTemplate.parse(text)
    }

    /// Whether the template asks for what only the photo's bytes tell (its date
    /// taken or camera): then the file is read once it is downloaded.
    public var readsThePhoto: Bool {
        parts.contains {
            switch $0 {
            case .taken, .make, .model, .daySeq: true
            default: false
            }
        }
    }

    static func parse(_ text: String) throws(FerryError) -> [Part] {
        func bad(_ why: String) -> FerryError {
            FerryError(.invalidTemplate, operation: "template", target: text, detail: why)
        }
        var parts: [Part] = []
        var literal = ""
        var rest = Substring(text)
        while let c = rest.first {
            rest = rest.dropFirst()
            if c == "}" { throw bad("a '}' without its '{'") }
            guard c == "{" else {
                literal.append(c)
                continue
            }
            guard let close = rest.firstIndex(of: "}") else { throw bad("a '{' without its '}'") }
            let token = rest[..<close]
            rest = rest[rest.index(after: close)...]
            if !literal.isEmpty {
                parts.append(.literal(literal))
                literal = ""
            }
            let (word, argument): (Substring, String?) = {
                guard let colon = token.firstIndex(of: ":") else { return (token, nil) }
                return (token[..<colon], String(token[token.index(after: colon)...]))
            }()
            func digits() throws(FerryError) -> Int {
                guard let argument else { return 0 }
                guard let n = Int(argument), (0...9).contains(n) else {
                    throw bad("{\(token)}: the number of digits is 0 to 9")
                }
                return n
            }
            switch word {
            case "taken": parts.append(.taken(argument ?? "%Y-%m-%d"))
            case "today": parts.append(.today(argument ?? "%Y-%m-%d"))
            case "name": parts.append(.name)
            case "stem": parts.append(.stem)
            case "ext": parts.append(.ext)
            case "folder": parts.append(.folder)
            case "make": parts.append(.make)
            case "model": parts.append(.model)
            case "tag": parts.append(.tag)
            case "seq": parts.append(.seq(try digits()))
            case "dayseq": parts.append(.daySeq(try digits()))
            default:
                throw bad(
                    "no token {\(token)}; there are {taken:FORMAT}, {today:FORMAT}, {name}, {stem}, {ext}, {folder}, "
                        + "{make}, {model}, {seq}, {dayseq}, {tag}")
            }
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        return parts
    }

    /// The template's text for `context`; each token's value has `/` and NUL
    /// replaced by `_`, so only a folder template's own `/` make folders.
    public func render(_ context: Context) -> String {
        var out = ""
        let (stem, ext): (String, String) = {
            let n = context.name
            guard let dot = n.lastIndex(of: "."), dot != n.startIndex else { return (n, "") }
            return (String(n[..<dot]), String(n[n.index(after: dot)...]))
        }()
        func value(_ s: String) -> String {
            String(s.map { $0 == "/" || $0 == "\0" ? "_" : $0 })
        }
        for part in parts {
            switch part {
            case .literal(let s): out += s
            case .taken(let format): out += value(NameTemplate.strftime(format, context.taken))
            case .today(let format):
                out += value(NameTemplate.strftime(format, RemoteTimestamp(local: context.today)))
            case .name: out += value(context.name)
            case .stem: out += value(stem)
            case .ext: out += value(ext)
            case .folder: out += value(context.folder)
            case .make: out += value(context.camera?.make ?? "unknown")
            case .model: out += value(context.camera?.model ?? "unknown")
            case .tag: out += value(context.tag ?? "")
            case .seq(let n): out += NameTemplate.padded(context.sequence, n)
            case .daySeq(let n): out += NameTemplate.padded(context.daySequence, n)
            }
        }
        return out
    }

    static func padded(_ v: Int, _ digits: Int) -> String {
        let s = String(v)
        return s.count >= digits ? s : String(repeating: "0", count: digits - s.count) + s
    }

    /// strftime over the timestamp's own fields (a camera's clock: no zone is applied).
    static func strftime(_ format: String, _ t: RemoteTimestamp) -> String {
        var tm = tm()
        tm.tm_year = Int32(t.year - 1900)
        tm.tm_mon = Int32(t.month - 1)
        tm.tm_mday = Int32(t.day)
        tm.tm_hour = Int32(t.hour)
        tm.tm_min = Int32(t.minute)
        tm.tm_sec = Int32(t.second)
        // Day of the week and of the year, for %a %A %j %u %w.
        var copy = tm
        copy.tm_isdst = 0
        _ = timegm(&copy)
        tm.tm_wday = copy.tm_wday
        tm.tm_yday = copy.tm_yday
        var buffer = [CChar](repeating: 0, count: 256)
        let n = Foundation.strftime(&buffer, buffer.count, format, &tm)
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Checks a rendered folder path: relative, no empty, `.` or `..` component.
    static func isSafeFolder(_ path: String) -> Bool {
        guard !path.hasPrefix("/") else { return false }
        return path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy {
            !$0.isEmpty && $0 != "." && $0 != ".."
        }
    }
}
