import FerryTestSupport
import Foundation
import Testing

@testable import FerryCLI
@testable import FerryKit

/// The per-file `--json` lines are written by hand (JSONLine.swift); they must be
/// byte for byte what `JSONEncoder` (sorted keys, unescaped slashes) writes.
@Suite struct JSONLineTests {
    static func encoded<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
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
            #expect(r.jsonLine == (try Self.encoded(r)))
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
            #expect(p.jsonLine == (try Self.encoded(p)))

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
            #expect(j.jsonLine == (try Self.encoded(j)))
        }
    }
}
