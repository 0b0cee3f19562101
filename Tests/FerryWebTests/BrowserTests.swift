import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The UI in a real browser: `Tests/browser/test_ui.py` drives headless
/// Chromium with selenium (from `.build/test-venv`, made by scripts/setup.sh)
/// against `ferry card` + `ferry serve` started here (see
/// ``ServeFixture/browsing(slowRate:slowLatencyMilliseconds:)``). Screenshots go
/// to `.build/test-artifacts/`.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct BrowserTests {
    static let root = TestProcess.packageRoot()
    static let python = root + "/.build/test-venv/bin/python"
    static let script = root + "/Tests/browser/test_ui.py"

    @Test func folderListAndViewerInChromium() async throws {
        let missing = [Self.python, "/usr/bin/chromium", "/usr/bin/chromedriver"].filter {
            !FileManager.default.isExecutableFile(atPath: $0)
        }
        try #require(missing.isEmpty, "missing \(missing.joined(separator: ", ")): run scripts/setup.sh")
        let (out, logs) = try await onThread { () throws -> (TestProcess.Output, String) in
            // This thread draws the card's photos: lower its priority too (on Linux,
            // PRIO_PROCESS with 0 names the calling thread only).
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            let started = ContinuousClock.now
            let fixture = try ServeFixture.browsing()
            print("browser tests: card folder and servers ready in \(ContinuousClock.now - started)")
            let artifacts = Self.root + "/.build/test-artifacts"
            // Nice: timing-sensitive suites run in parallel with Chromium.
            let out = try TestProcess.run(
                "/usr/bin/nice",
                [
                    "-n", "10", Self.python, Self.script, "--url", fixture.url, "--slow-url", fixture.slowURL,
                    "--local-url", fixture.localURL,
                    "--root", fixture.root, "--artifacts", artifacts,
                ])
            return (out, fixture.logs)
        }
        print(out.stdout)
        if !out.stderr.isEmpty { print(out.stderr) }
        #expect(out.status == 0, "browser checks failed:\n\(out.stdout)\n\(out.stderr)\nserver logs:\n\(logs)")
        #expect(out.stdout.contains(" passed, 0 failed"))
    }

    static let orientationScript = root + "/Tests/browser/test_orientation.py"

    /// Eight photos in the eight Exif orientations on `ferry card`, `ferry serve` on it:
    /// `Tests/browser/test_orientation.py` checks Chromium's own rendering of the
    /// originals against the tiles and the viewer, and takes the portrait screenshots.
    @Test func portraitPhotosStandUpInChromium() async throws {
        let missing = [Self.python, "/usr/bin/chromium", "/usr/bin/chromedriver"].filter {
            !FileManager.default.isExecutableFile(atPath: $0)
        }
        try #require(missing.isEmpty, "missing \(missing.joined(separator: ", ")): run scripts/setup.sh")
        let (out, logs) = try await onThread { () throws -> (TestProcess.Output, String) in
            let fixture = try ServeFixture(prefix: "ferry-ui-orient") { root in
                try OrientedSamples.writeEight(into: root + "/DCIM/100FERRY", width: 1600, height: 1200)
            } launch: { launch in
                try launch.serve("serve", try launch.card("card", launch.folder + "/card"))
            }
            let out = try TestProcess.run(
                "/usr/bin/nice",
                [
                    "-n", "10", Self.python, Self.orientationScript, "--url", fixture.url,
                    "--artifacts", Self.root + "/.build/test-artifacts",
                ])
            return (out, fixture.logs)
        }
        print(out.stdout)
        if !out.stderr.isEmpty { print(out.stderr) }
        #expect(out.status == 0, "browser checks failed:\n\(out.stdout)\n\(out.stderr)\nserver logs:\n\(logs)")
        #expect(out.stdout.contains("4 passed, 0 failed"))
    }

    static let importScript = root + "/Tests/browser/test_import.py"

    /// Import, selection, the import panel, one connection shared with an import,
    /// and the phone and desktop layouts: `Tests/browser/test_import.py` against
    /// ``ServeFixture/importing(photos:photoBytes:)``. Screenshots at 1280x800 and
    /// 390x844 go to `.build/test-artifacts/`.
    @Test func importAndLayoutsInChromium() async throws {
        let missing = [Self.python, "/usr/bin/chromium", "/usr/bin/chromedriver"].filter {
            !FileManager.default.isExecutableFile(atPath: $0)
        }
        try #require(missing.isEmpty, "missing \(missing.joined(separator: ", ")): run scripts/setup.sh")
        let (out, logs) = try await onThread { () throws -> (TestProcess.Output, String) in
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            let fixture = try ServeFixture.importing()
            let out = try TestProcess.run(
                "/usr/bin/nice",
                [
                    "-n", "10", Self.python, Self.importScript, "--url", fixture.url, "--card-url", fixture.cardURL,
                    "--root", fixture.root, "--imported", fixture.importDirectory,
                    "--ferry", TestProcess.ferryExecutable(), "--artifacts", Self.root + "/.build/test-artifacts",
                ])
            return (out, fixture.logs)
        }
        print(out.stdout)
        if !out.stderr.isEmpty { print(out.stderr) }
        #expect(out.status == 0, "browser checks failed:\n\(out.stdout)\n\(out.stderr)\nserver logs:\n\(logs)")
        #expect(out.stdout.contains(" passed, 0 failed"))
    }
}
