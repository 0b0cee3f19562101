import FerryTestSupport
import Foundation
import Testing

@testable import FerryCLI

/// From the terminal to the phone in one step (issue 28 item 7): `ferry serve`
/// prints a QR code of the page's address, token and all, that a QR reader
/// (zbarimg, from Debian's zbar-tools) decodes to exactly that address.
@Suite(.serialized)
struct ServeQRTests {
    let work: TempDir

    init() throws { work = try TempDir(prefix: "serve-qr") }

    /// The modules as a PGM image, 8 pixels a module, with a 4-module quiet zone.
    func pgm(_ modules: [[Bool]], at path: String) throws {
        let scale = 8
        let size = (modules.count + 8) * scale
        var pixels = [UInt8](repeating: 255, count: size * size)
        for (y, row) in modules.enumerated() {
            for (x, dark) in row.enumerated() where dark {
                for dy in 0..<scale {
                    for dx in 0..<scale { pixels[((y + 4) * scale + dy) * size + (x + 4) * scale + dx] = 0 }
                }
            }
        }
        var data = Data("P5\n\(size) \(size)\n255\n".utf8)
        data.append(contentsOf: pixels)
        try data.write(to: URL(fileURLWithPath: path))
    }

    func decode(_ modules: [[Bool]]) throws -> String {
        let zbarimg = try #require(TestProcess.which("zbarimg"), "zbarimg is missing: run scripts/setup.sh")
        try pgm(modules, at: work.file("qr.pgm"))
        let out = try TestProcess.run(zbarimg, ["--quiet", "--raw", work.file("qr.pgm")])
        return out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theRenderingReadsBackAndDecodes() throws {
        let url = "http://192.0.2.7:8000/?token=Zx81-abc_DEF.~"
        let modules = try #require(TerminalQR.modules(url))
        let text = TerminalQR.render(modules)
        #expect(TerminalQR.parse(text) == modules)
        #expect(try decode(modules) == url)
    }

    @Test func servePrintsAQRCodeOfItsAddress() throws {
        try FileManager.default.createDirectory(atPath: work.file("photos"), withIntermediateDirectories: true)
        let ferry = TestProcess.ferryExecutable()
        let serve = try ServerProcess(
            ferry,
            [
                "serve", work.file("photos"), "--port", "0", "--qr", "--token", "qr-test-token", "--cache",
                work.file("c"),
            ],
            logPath: work.file("serve.log"))
        defer { serve.stop() }
        let deadline = Date().addingTimeInterval(15)
        while !serve.log.contains("▀") && Date() < deadline { usleep(50_000) }
        let log = serve.log
        let url = try #require(
            log.split(separator: "\n").first { $0.hasPrefix("ferry serve: open ") }.map {
                String($0.dropFirst("ferry serve: open ".count))
            }, "\(log)")
        #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/?token=qr-test-token"), "\(url)")
        let qr = log.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { $0.contains("█") || $0.contains("▀") || $0.contains("▄") }.joined(separator: "\n")
        let modules = TerminalQR.parse(qr)
        #expect(!modules.isEmpty, "\(log)")
        #expect(try decode(modules) == url)
    }
}
