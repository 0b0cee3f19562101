import Foundation

/// Every `--json` line (`Console.json`): one value as one line of JSON, byte for
/// byte what `JSONEncoder` with `.sortedKeys` and `.withoutEscapingSlashes`
/// writes, and a line feed.
///
/// An object whose fields are scalars (strings, Booleans, integers, Doubles, nil)
/// is written by ``FlatJSONEncoder`` from the type's own `Encodable` conformance,
/// so each line's fields are stated once, in its struct: `JSONEncoder` cost more
/// a line than the rest of a file's work in the CLI (bench/RESULTS.md, issue 19,
/// branch cli, and issue 27). Anything else (arrays, nested objects, `Float`,
/// `Date`, `Data`, `URL`, `Decimal`) is left to `JSONEncoder` itself.
/// JSONLineTests compares both with `JSONEncoder`.
enum JSONLine {
    /// The line, or nil where `JSONEncoder` fails too (a Double that is not finite).
    static func encode<T: Encodable>(_ value: T) -> String? {
        if let line = FlatJSONEncoder.line(value) { return line }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return nil }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// An optional field written as `null` when nil (a synthesized `Encodable` leaves
/// a nil field out): `ls --json`'s `size` and `modified`.
@propertyWrapper
struct JSONNullable<Value: Encodable>: Encodable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if let wrappedValue { try c.encode(wrappedValue) } else { try c.encodeNil() }
    }
}

/// Writes a value that encodes as one object of scalar fields as one compact
/// JSON line, keys in `JSONEncoder`'s `.sortedKeys` order (their UTF-8 bytes) and
/// slashes unescaped; nil (``line(_:)``) for any other shape, and for a key that
/// would need escaping (a quote, a backslash, a control character).
final class FlatJSONEncoder: Encoder {
    /// A shape this encoder leaves to `JSONEncoder`.
    struct Unsupported: Error {}

    /// One field, `"key":value`, in ``bytes``.
    private struct Field {
        /// The key's first 8 bytes, big-endian, zero-padded: most keys are ordered by it alone.
        var prefix: UInt64
        var range: Range<Int>
        /// The key's length in bytes (it starts after the opening quote).
        var keyCount: Int
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    // One encoder writes one line on one thread, and no access to these overlaps
    // another: unchecked, as the local buffer of a struct would be (the runtime's
    // checks of a class's stored properties cost more than the writing).

    /// The fields' text, in the order they were encoded.
    @exclusivity(unchecked) private var bytes = JSONBytes()
    /// The fields, sorted by key.
    @exclusivity(unchecked) private var fields: [Field] = []
    /// Whether the value asked for an object (a keyed container) at the top.
    @exclusivity(unchecked) private var opened = false
    /// A field's value is being encoded by its own `encode(to:)` (an Optional, a
    /// dictionary's value): the one value its single-value container may write.
    @exclusivity(unchecked) private var expectingValue = false
    /// A shape this encoder does not write was asked for.
    @exclusivity(unchecked) private var unsupported = false

    private init() {
        bytes.text.reserveCapacity(256)
        fields.reserveCapacity(16)
    }

    /// `value` as one line, or nil when it is not one object of scalar fields.
    static func line<T: Encodable>(_ value: T) -> String? {
        let encoder = FlatJSONEncoder()
        guard (try? value.encode(to: encoder)) != nil, encoder.opened, !encoder.unsupported else { return nil }
        return encoder.text()
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if expectingValue { unsupported = true } else { opened = true }
        return KeyedEncodingContainer(Object<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        unsupported = true
        return Value(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        if !expectingValue { unsupported = true }
        return Value(encoder: self)
    }

    /// Writes `"key":` and the value `write` writes, and files the field under its key.
    fileprivate func field(_ key: String, _ write: (inout JSONBytes) throws -> Void) throws {
        guard !unsupported else { throw Unsupported() }
        let start = bytes.count
        let prefix = try withBytes {
            let prefix = try $0.key(key)
            try write(&$0)
            return prefix
        }
        try file(Field(prefix: prefix, range: start..<bytes.count, keyCount: key.utf8.count))
    }

    /// A field whose value is not a scalar itself (an Optional, a dictionary's
    /// value): written by its own `encode(to:)`, which must write one scalar.
    fileprivate func field<T: Encodable>(_ key: String, nested value: T) throws {
        guard !unsupported else { throw Unsupported() }
        let start = bytes.count
        let prefix = try withBytes { try $0.key(key) }
        try nested(value)
        try file(Field(prefix: prefix, range: start..<bytes.count, keyCount: key.utf8.count))
    }

    /// Files the field just written in key order (fields mostly come in order
    /// or nearly so: it moves down from the end).
    private func file(_ new: Field) throws {
        fields.append(new)
        var i = fields.count - 1
        while i > 0 {
            let before = fields[i - 1]
            if before.prefix < new.prefix { break }
            if before.prefix == new.prefix {
                let order = bytes.text.withUnsafeBufferPointer { text in
                    let a = text[(before.range.lowerBound + 1)..<(before.range.lowerBound + 1 + before.keyCount)]
                    let b = text[(new.range.lowerBound + 1)..<(new.range.lowerBound + 1 + new.keyCount)]
                    return a.elementsEqual(b) ? 0 : a.lexicographicallyPrecedes(b) ? -1 : 1
                }
                if order == 0 { throw Unsupported() }
                if order < 0 { break }
            }
            fields.swapAt(i - 1, i)
            i -= 1
        }
    }

    fileprivate func nested<T: Encodable>(_ value: T) throws {
        // JSONEncoder gives these types their own strategies.
        if T.self == Date.self || T.self == Data.self || T.self == URL.self || T.self == Decimal.self {
            throw Unsupported()
        }
        let start = bytes.count
        expectingValue = true
        defer { expectingValue = false }
        try value.encode(to: self)
        if bytes.count == start { throw Unsupported() }
    }

    /// Writes one scalar where one is expected, once.
    fileprivate func scalar(_ write: (inout JSONBytes) throws -> Void) throws {
        guard !unsupported, expectingValue else { throw Unsupported() }
        expectingValue = false
        try withBytes(write)
    }

    /// The text, as a local buffer while `body` writes (appending to a class's
    /// stored array checks it byte by byte).
    private func withBytes<R>(_ body: (inout JSONBytes) throws -> R) rethrows -> R {
        var local = JSONBytes()
        swap(&local, &bytes)
        defer { swap(&local, &bytes) }
        return try body(&local)
    }

    /// `{`, the fields in key order, `}` and a line feed.
    private func text() -> String {
        let count = fields.reduce(max(fields.count - 1, 0) + 3) { $0 + $1.range.count }
        return String(unsafeUninitializedCapacity: count) { line in
            bytes.text.withUnsafeBufferPointer { text in
                var at = 0
                line[at] = UInt8(ascii: "{")
                for (i, f) in fields.enumerated() {
                    if i > 0 {
                        at += 1
                        line[at] = UInt8(ascii: ",")
                    }
                    _ = UnsafeMutableBufferPointer(rebasing: line[(at + 1)...]).initialize(
                        from: UnsafeBufferPointer(rebasing: text[f.range]))
                    at += f.range.count
                }
                line[at + 1] = UInt8(ascii: "}")
                line[at + 2] = UInt8(ascii: "\n")
                return at + 3
            }
        }
    }

    /// The object's fields: scalars written as they come; any other value by its
    /// own `encode(to:)` (an Optional's asks for a single-value container).
    private struct Object<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: FlatJSONEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws {
            try encoder.field(key.stringValue) { $0.literal("null") }
        }
        mutating func encode(_ value: Bool, forKey key: Key) throws {
            try encoder.field(key.stringValue) { value ? $0.literal("true") : $0.literal("false") }
        }
        mutating func encode(_ value: String, forKey key: Key) throws {
            try encoder.field(key.stringValue) { $0.string(value) }
        }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            try encoder.field(key.stringValue) { try $0.number(value) }
        }
        mutating func encode(_ value: Float, forKey key: Key) throws { throw Unsupported() }
        mutating func encode(_ value: Int, forKey key: Key) throws { try whole(Int64(value), key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { try whole(Int64(value), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { try whole(Int64(value), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try whole(Int64(value), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { try whole(Int64(value), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { try whole(UInt64(value), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { try whole(UInt64(value), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { try whole(UInt64(value), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { try whole(UInt64(value), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { try whole(UInt64(value), key) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try encoder.field(key.stringValue, nested: value)
        }

        private func whole(_ value: Int64, _ key: Key) throws {
            try encoder.field(key.stringValue) { $0.integer(value) }
        }
        private func whole(_ value: UInt64, _ key: Key) throws {
            try encoder.field(key.stringValue) { $0.integer(value) }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            encoder.unsupported = true
            return KeyedEncodingContainer(Object<NestedKey>(encoder: encoder))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            encoder.unsupported = true
            return Value(encoder: encoder)
        }

        mutating func superEncoder() -> any Encoder {
            encoder.unsupported = true
            return encoder
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder() }
    }

    /// One field's scalar. Also the (refusing) container of an array: an array
    /// goes to `JSONEncoder`, as ``unsupported`` makes every write here throw.
    private struct Value: SingleValueEncodingContainer, UnkeyedEncodingContainer {
        let encoder: FlatJSONEncoder
        var codingPath: [any CodingKey] { [] }
        var count: Int { 0 }

        mutating func encodeNil() throws { try encoder.scalar { $0.literal("null") } }
        mutating func encode(_ value: Bool) throws {
            try encoder.scalar { value ? $0.literal("true") : $0.literal("false") }
        }
        mutating func encode(_ value: String) throws { try encoder.scalar { $0.string(value) } }
        mutating func encode(_ value: Double) throws { try encoder.scalar { try $0.number(value) } }
        mutating func encode(_ value: Float) throws { throw Unsupported() }
        mutating func encode(_ value: Int) throws { try whole(Int64(value)) }
        mutating func encode(_ value: Int8) throws { try whole(Int64(value)) }
        mutating func encode(_ value: Int16) throws { try whole(Int64(value)) }
        mutating func encode(_ value: Int32) throws { try whole(Int64(value)) }
        mutating func encode(_ value: Int64) throws { try whole(Int64(value)) }
        mutating func encode(_ value: UInt) throws { try whole(UInt64(value)) }
        mutating func encode(_ value: UInt8) throws { try whole(UInt64(value)) }
        mutating func encode(_ value: UInt16) throws { try whole(UInt64(value)) }
        mutating func encode(_ value: UInt32) throws { try whole(UInt64(value)) }
        mutating func encode(_ value: UInt64) throws { try whole(UInt64(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws { try encoder.nested(value) }

        private func whole(_ value: Int64) throws { try encoder.scalar { $0.integer(value) } }
        private func whole(_ value: UInt64) throws { try encoder.scalar { $0.integer(value) } }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            encoder.unsupported = true
            return KeyedEncodingContainer(Object<NestedKey>(encoder: encoder))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            encoder.unsupported = true
            return self
        }

        mutating func superEncoder() -> any Encoder {
            encoder.unsupported = true
            return encoder
        }
    }
}

/// JSON text as `JSONEncoder` writes its scalars.
struct JSONBytes {
    var text: [UInt8] = []
    var count: Int { text.count }

    mutating func literal(_ s: StaticString) {
        text.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    mutating func integer(_ value: Int64) {
        if value < 0 { text.append(UInt8(ascii: "-")) }
        integer(value.magnitude)
    }

    /// The decimal digits, written from a buffer on the stack (`String(value)`
    /// cost five times as much).
    mutating func integer(_ value: UInt64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var v = value
            var at = 20
            repeat {
                at -= 1
                digits[at] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
                v /= 10
            } while v > 0
            text.append(contentsOf: UnsafeBufferPointer(rebasing: digits[at...]))
        }
    }

    /// A Double: its shortest description without a trailing `.0`; one that is
    /// not finite JSONEncoder refuses.
    mutating func number(_ value: Double) throws {
        guard value.isFinite else { throw FlatJSONEncoder.Unsupported() }
        let d = value.description.utf8
        if d.count > 2 && d.last == UInt8(ascii: "0") && d[d.index(d.endIndex, offsetBy: -2)] == UInt8(ascii: ".") {
            text.append(contentsOf: d.dropLast(2))
        } else {
            text.append(contentsOf: d)
        }
    }

    /// `"key":`, and the key's first 8 bytes as a big-endian number for ordering.
    /// A key that would need escaping is left to `JSONEncoder`.
    mutating func key(_ key: String) throws -> UInt64 {
        var key = key
        return try key.withUTF8 { k in
            if k.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                throw FlatJSONEncoder.Unsupported()
            }
            var prefix: UInt64 = 0
            for i in 0..<min(8, k.count) { prefix |= UInt64(k[i]) &<< (56 &- 8 &* UInt64(i)) }
            text.append(UInt8(ascii: "\""))
            text.append(contentsOf: k)
            literal("\":")
            return prefix
        }
    }

    /// A string, its quote, backslash and control characters escaped as
    /// `JSONEncoder` escapes them; runs without any copied at once.
    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { u in
            text.append(UInt8(ascii: "\""))
            var run = 0
            for i in 0..<u.count {
                let b = u[i]
                guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") else { continue }
                text.append(contentsOf: UnsafeBufferPointer(rebasing: u[run..<i]))
                escape(b)
                run = i + 1
            }
            text.append(contentsOf: UnsafeBufferPointer(rebasing: u[run...]))
            text.append(UInt8(ascii: "\""))
        }
    }

    private mutating func escape(_ b: UInt8) {
        let hex: StaticString = "0123456789abcdef"
        switch b {
        case UInt8(ascii: "\""): literal("\\\"")
        case UInt8(ascii: "\\"): literal("\\\\")
        case 0x0A: literal("\\n")
        case 0x0D: literal("\\r")
        case 0x09: literal("\\t")
        case 0x08: literal("\\b")
        case 0x0C: literal("\\f")
        default:
            literal("\\u00")
            text.append(hex.utf8Start[Int(b >> 4)])
            text.append(hex.utf8Start[Int(b & 0xF)])
        }
    }
}
