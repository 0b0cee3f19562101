import FerryTestSupport
import Foundation
import Testing

@testable import FerryCLI
@testable import FerryKit

/// The `--json` lines are written by `FlatJSONEncoder` (JSONLine.swift) where
/// they are objects of scalars; they must be byte for byte what `JSONEncoder`
/// (sorted keys, unescaped slashes) writes, and every other shape is left to it.
@Suite struct JSONLineTests {
    static func encoded<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
    }

    /// The line the flat encoder itself writes (not JSONEncoder's through `JSONLine`).
    static func direct<T: Encodable>(_ value: T) throws -> String {
        try #require(FlatJSONEncoder.line(value))
    }

    static let texts = [
        "", "a.jpg", "http://127.0.0.1:8080/f0001.bin", "/home/ann/Fotos/IMG 0001.JPG", "quote \" and \\ back",
        "tab\tnew\nline\rcr\u{8}bs\u{C}ff", "esc\u{1B}[2J bell\u{7} nul\u{0} us\u{1F} del\u{7F}", "ümlaut 日本 🎉",
        "line\u{2028}sep\u{2029}", "a/b/c", "c1\u{85}\u{9B}", "e\u{301}",
    ]

    static func doubles(_ rng: inout SeededRandom) -> [Double] {
        var values: [Double] = [
            0, -0.0, 1, -1, 0.5, 0.1, 1e-7, 123_456_789, 1e15, 1e16, 1.5e17, 9_007_199_254_740_993, 1e300, 5e-324,
            0.001, 12.3, 65_536.7, 0.123456789012345678, 3.0e-5, 99.9, 100, 1234.5,
        ]
        for _ in 0..<3000 {
            let exponent = Double(Int(rng.next() % 40) - 20)
            let mantissa = Double(rng.next() % 1_000_000) / 1000
            values.append(mantissa * pow(10, exponent))
            values.append((Double(rng.next() % 100_000) / 10).rounded() / 10)
            values.append(Double(rng.next() % 10_000_000) / 1000)
        }
        return values
    }

    @Test func resultLinesAreWhatJSONEncoderWrites() throws {
        var rng = SeededRandom(seed: 0x9E37_79B9_7F4A_7C15)
        var compared = 0
        for (i, seconds) in Self.doubles(&rng).enumerated() {
            let text = Self.texts[i % Self.texts.count]
            var r = JSONResult(failed: FerryError(.notFound, target: text))
            r.ok = i % 2 == 0
            r.source = text
            r.destination = Self.texts[(i + 3) % Self.texts.count]
            r.seconds = i % 5 == 0 ? nil : seconds
            r.size = i % 3 == 0 ? nil : Int64(rng.next() % 1_000_000_000_000)
            r.bytesTransferred = i % 4 == 0 ? nil : Int64(i)
            r.bytesSent = i % 6 == 0 ? Int64(-i) : nil
            r.resumedFrom = i % 7 == 0 ? 0 : nil
            r.skipped = i % 2 == 0 ? nil : i % 3 == 0
            r.state = i % 9 == 0 ? "already-here" : nil
            r.error = i % 2 == 0 ? nil : text
            r.errorCode = i % 2 == 0 ? nil : "not-found"
            r.serverCode = i % 8 == 0 ? 550 : nil
            r.recovery = i % 10 == 0 ? "replace-or-keep" : nil
            #expect(try Self.direct(r) == (try Self.encoded(r)))
            compared += 1
        }
        #expect(compared > 9000)
    }

    @Test func progressAndSyncLinesAreWhatJSONEncoderWrites() throws {
        var rng = SeededRandom(seed: 0x1234_5678)
        let transfer = Transfer(source: "ftp://h/a", destination: "a")
        for (i, value) in Self.doubles(&rng).enumerated() {
            var p = JSONProgress(transfer: transfer, progress: transfer.currentProgress)
            p.source = Self.texts[i % Self.texts.count]
            p.destination = Self.texts[(i + 1) % Self.texts.count]
            p.bytes = Int64(i * 1000)
            p.total = i % 2 == 0 ? nil : Int64(i * 4000)
            p.fraction = i % 3 == 0 ? nil : value / 1e6
            p.bytesPerSecond = (value * 10).rounded() / 10
            p.etaSeconds = i % 4 == 0 ? nil : value
            #expect(try Self.direct(p) == (try Self.encoded(p)))

            let item = SyncItem(
                remotePath: Self.texts[(i + 2) % Self.texts.count], destination: "d", size: i % 2 == 0 ? nil : 42,
                modified: nil, action: i % 2 == 0 ? .download : .downloadChanged)
            var j = JSONItem(
                type: i % 3 == 0 ? "imported" : "planned", item: item, shown: Self.texts[i % Self.texts.count])
            j.modified = i % 5 == 0 ? "2024-05-01T10:00:00" : nil
            j.bytesTransferred = i % 2 == 0 ? Int64(i) : nil
            j.resumedFrom = i % 3 == 0 ? 7 : nil
            j.seconds = i % 4 == 0 ? nil : value
            j.error = i % 6 == 0 ? Self.texts[(i + 4) % Self.texts.count] : nil
            j.errorCode = i % 6 == 0 ? "server-error" : nil
            j.serverCode = i % 7 == 0 ? 421 : nil
            j.reason = i % 8 == 0 ? "read-only" : nil
            #expect(try Self.direct(j) == (try Self.encoded(j)))
        }
    }

    @Test func theOtherCLILinesAreWrittenDirectlyToo() throws {
        var rng = SeededRandom(seed: 77)
        for (i, text) in Self.texts.enumerated() {
            let failure = JSONFailure(
                command: i % 2 == 0 ? nil : "get", error: text, errorCode: "usage", exitCode: Int32(i),
                target: i % 3 == 0 ? text : nil, serverCode: i % 4 == 0 ? 550 : nil)
            #expect(try Self.direct(failure) == (try Self.encoded(failure)))
            let run = JSONRunSummary(
                RunSummary(
                    verb: text, transferred: i, bytes: Int64(rng.next() % 1_000_000_000), seconds: Double(i) / 7,
                    alreadyHere: i % 3, differs: i % 2, kept: 1, failed: i % 5, interrupted: i % 2 == 0))
            #expect(try Self.direct(run) == (try Self.encoded(run)))
            let start = JSONPassStart(pass: i, source: text, sourceKey: Self.texts[(i + 1) % Self.texts.count])
            #expect(try Self.direct(start) == (try Self.encoded(start)))
            let done = ["type": "done", "action": text, "target": Self.texts[(i + 5) % Self.texts.count]]
            #expect(try Self.direct(done) == (try Self.encoded(done)))
            // `ls -R --json`: size and modified written as null when unknown.
            let entry = ListCommand.row(
                RemoteEntry(
                    name: text, path: "/" + text, kind: i % 2 == 0 ? .file : .directory,
                    size: i % 3 == 0 ? nil : Int64(i),
                    modified: i % 4 == 0 ? nil : RemoteTimestamp(utc: Date(timeIntervalSince1970: Double(i) * 1e8)),
                    symlinkTarget: i % 5 == 0 ? text : nil, isHidden: i % 2 == 1))
            let line = try Self.direct(entry)
            #expect(line == (try Self.encoded(entry)))
            if i % 3 == 0 { #expect(line.contains("\"size\":null")) }
        }
    }

    /// Keys given in any order, with digits, upper case, `_`, common prefixes,
    /// non-ASCII, and from two containers of one value.
    struct Keys: Encodable {
        struct Key: CodingKey {
            var stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }
        var names: [String]

        func encode(to encoder: any Encoder) throws {
            let half = names.count / 2
            var first = encoder.container(keyedBy: Key.self)
            for (i, n) in names[..<half].enumerated() { try first.encode(i, forKey: Key(stringValue: n)) }
            var second = encoder.container(keyedBy: Key.self)
            for n in names[half...] { try second.encode(n, forKey: Key(stringValue: n)) }
        }
    }

    @Test func keysAreSortedAsJSONEncoderSortsThem() throws {
        var rng = SeededRandom(seed: 5)
        var names = [
            "a10", "a9", "B", "Z", "_x", "aB", "ab", "aa", "b", "bytes", "bytesPerSecond", "bytesSent", "modified",
            "modifiedPrecision", "modifiedPrecisionX", "e", "é", "f", "日本", "", "a", "a/b",
            "abcdefgh", "abcdefghi", "abcdefgg",
        ]
        for _ in 0..<200 {
            for i in names.indices.reversed() { names.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
            let value = Keys(names: names)
            #expect(try Self.direct(value) == (try Self.encoded(value)))
        }
    }

    struct Nested: Encodable {
        struct Inner: Encodable { var a = 1 }
        var inner = Inner()
    }
    struct WithFloat: Encodable { var f: Float = 0.1 }
    struct WithDate: Encodable { var d = Date(timeIntervalSince1970: 1_700_000_000.25) }
    struct WithURL: Encodable { var u = URL(string: "http://127.0.0.1/a b")! }
    struct WithArray: Encodable {
        var type = "summary"
        var deleted = ["a", "b/c"]
    }
    struct NotFinite: Encodable { var x = Double.infinity }

    @Test func otherShapesAreLeftToJSONEncoder() throws {
        #expect(FlatJSONEncoder.line(Nested()) == nil)
        #expect(JSONLine.encode(Nested()) == (try Self.encoded(Nested())))
        #expect(FlatJSONEncoder.line(WithFloat()) == nil)
        #expect(JSONLine.encode(WithFloat()) == (try Self.encoded(WithFloat())))
        #expect(FlatJSONEncoder.line(WithDate()) == nil)
        #expect(JSONLine.encode(WithDate()) == (try Self.encoded(WithDate())))
        #expect(FlatJSONEncoder.line(WithURL()) == nil)
        #expect(JSONLine.encode(WithURL()) == (try Self.encoded(WithURL())))
        #expect(FlatJSONEncoder.line(WithArray()) == nil)
        #expect(JSONLine.encode(WithArray()) == (try Self.encoded(WithArray())))
        #expect(FlatJSONEncoder.line(["a", "b"]) == nil)
        #expect(JSONLine.encode(["a", "b"]) == (try Self.encoded(["a", "b"])))
        #expect(FlatJSONEncoder.line("text") == nil)
        #expect(JSONLine.encode("text") == (try Self.encoded("text")))
        // Keys that need escaping, and the same key twice: JSONEncoder's rules, not this encoder's.
        for names in [["a", "quote\""], ["back\\slash", "b"], ["nul\u{0}", "a"], ["tab\t"]] {
            #expect(FlatJSONEncoder.line(Keys(names: names)) == nil)
            #expect(JSONLine.encode(Keys(names: names)) == (try Self.encoded(Keys(names: names))))
        }
        let twice = Keys(names: ["k", "k"])
        #expect(FlatJSONEncoder.line(twice) == nil)
        #expect(JSONLine.encode(twice) == (try Self.encoded(twice)))
        // JSONEncoder writes no line for a Double that is not finite; neither does this.
        #expect(FlatJSONEncoder.line(NotFinite()) == nil)
        #expect(JSONLine.encode(NotFinite()) == nil)
    }
}
