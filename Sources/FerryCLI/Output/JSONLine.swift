/// The per-file `--json` lines (`result`, `progress`, sync's file lines) written
/// directly, as `JSONEncoder` with sorted keys and unescaped slashes writes them:
/// the encoder cost more a line than the rest of a file's work in the CLI
/// (bench/RESULTS.md, issue 19, branch cli). JSONLineTests compares every form
/// with `JSONEncoder`'s output.
struct JSONLineWriter {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var first = true

    init() { bytes.reserveCapacity(256) }

    /// The object, closed, and a line feed.
    mutating func line() -> String {
        bytes.append(UInt8(ascii: "}"))
        bytes.append(UInt8(ascii: "\n"))
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func key(_ name: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Fields must come in the order `JSONEncoder`'s `.sortedKeys` gives; nil leaves one out.
    mutating func field(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    mutating func field(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }

    mutating func field<I: BinaryInteger>(_ name: StaticString, _ value: I?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func field(_ name: StaticString, _ value: Double?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: JSONLineWriter.number(value).utf8)
    }

    /// A Double as `JSONEncoder` writes it: its shortest description, without a
    /// trailing `.0`.
    static func number(_ value: Double) -> String {
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    private mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        let hex: StaticString = "0123456789abcdef"
        for b in value.utf8 {
            switch b {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0..<0x20:
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(hex.utf8Start[Int(b >> 4)])
                bytes.append(hex.utf8Start[Int(b & 0xF)])
            default: bytes.append(b)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONResult {
    /// This line as `JSONEncoder` writes it (keys sorted).
    var jsonLine: String {
        var w = JSONLineWriter()
        w.field("bytesSent", bytesSent)
        w.field("bytesTransferred", bytesTransferred)
        w.field("destination", destination)
        w.field("error", error)
        w.field("errorCode", errorCode)
        w.field("ok", ok)
        w.field("recovery", recovery)
        w.field("resumedFrom", resumedFrom)
        w.field("seconds", seconds)
        w.field("serverCode", serverCode)
        w.field("size", size)
        w.field("skipped", skipped)
        w.field("source", source)
        w.field("state", state)
        w.field("type", type)
        return w.line()
    }
}

extension JSONProgress {
    /// This line as `JSONEncoder` writes it (keys sorted).
    var jsonLine: String {
        var w = JSONLineWriter()
        w.field("bytes", bytes)
        w.field("bytesPerSecond", bytesPerSecond)
        w.field("destination", destination)
        w.field("etaSeconds", etaSeconds)
        w.field("fraction", fraction)
        w.field("source", source)
        w.field("total", total)
        w.field("type", type)
        return w.line()
    }
}

extension JSONItem {
    /// This line as `JSONEncoder` writes it (keys sorted).
    var jsonLine: String {
        var w = JSONLineWriter()
        w.field("action", action)
        w.field("bytesTransferred", bytesTransferred)
        w.field("destination", destination)
        w.field("error", error)
        w.field("errorCode", errorCode)
        w.field("modified", modified)
        w.field("path", path)
        w.field("reason", reason)
        w.field("resumedFrom", resumedFrom)
        w.field("seconds", seconds)
        w.field("serverCode", serverCode)
        w.field("size", size)
        w.field("type", type)
        return w.line()
    }
}
