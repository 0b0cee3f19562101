import FerryTestSupport
import Foundation
import Testing

/// The UI in a real browser: `Tests/browser/test_ui.py` drives headless
/// Chromium with selenium (from `.build/test-venv`, made by scripts/setup.sh)
/// against `ferry card` + `ferry serve` started here (see ``ServeFixture``). Screenshots go to `.build/test-artifacts/`.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct BrowserTests {
    static let root = TestProcess.packageRoot()
    static let python = root + "/.build/test-venv/bin/python"
    static let script = root + "/Tests/browser/test_ui.py"

    @Test func folderListAndViewerInChromium() throws {
        let missing = [Self.python, "/usr/bin/chromium", "/usr/bin/chromedriver"].filter {
            !FileManager.default.isExecutableFile(atPath: $0)
        }
        try #require(missing.isEmpty, "missing \(missing.joined(separator: ", ")): run scripts/setup.sh")
        let fixture = try ServeFixture()
        let artifacts = Self.root + "/.build/test-artifacts"
        let out = try TestProcess.run(
            Self.python,
            [
                Self.script, "--url", fixture.url, "--slow-url", fixture.slowURL, "--local-url", fixture.localURL,
                "--root", fixture.root, "--artifacts", artifacts,
            ])
        print(out.stdout)
        if !out.stderr.isEmpty { print(out.stderr) }
        #expect(out.status == 0, "browser checks failed:\n\(out.stdout)\n\(out.stderr)\nserver logs:\n\(fixture.logs)")
        #expect(out.stdout.contains(" passed, 0 failed"))
    }
}
