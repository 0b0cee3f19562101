import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// Where `ferry serve` finds its page: `PREFIX/share/ferry/Web` beside an
/// installed `PREFIX/bin/ferry` (the Debian package), else SwiftPM's bundle.
struct StaticAssetsLocationTests {
    let prefix: TempDir
    let fm = FileManager.default
    /// PREFIX/share/ferry/Web as the lookup spells it (resolved, no doubled slashes).
    var expected: String { URL(fileURLWithPath: prefix.file("share/ferry/Web")).resolvingSymlinksInPath().path }

    init() throws {
        prefix = try TempDir(prefix: "ferry-prefix")
        try fm.createDirectory(atPath: prefix.file("bin"), withIntermediateDirectories: true)
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: prefix.file("bin/ferry")))
    }

    func installPage() throws {
        try fm.createDirectory(atPath: prefix.file("share/ferry/Web"), withIntermediateDirectories: true)
        try Data("<!doctype html><title>installed</title>".utf8).write(
            to: URL(fileURLWithPath: prefix.file("share/ferry/Web/index.html")))
    }

    @Test func anInstalledBinaryUsesShareFerryWeb() throws {
        try installPage()
        let folder = StaticAssets.locateFolder(executable: prefix.file("bin/ferry"))
        #expect(folder == expected)
        // Any page address gets the installed index.html.
        let page = StaticAssets(folder: folder).response(for: "/DCIM/100__TSB")
        #expect(page.status == 200)
        #expect(page.body == .file(path: expected + "/index.html", contentType: "text/html; charset=utf-8"))
    }

    /// "Add to Home screen" finds a web app manifest with an icon (issue 28 item 7).
    @Test func theWebAppManifestIsServedAsOne() throws {
        let folder = StaticAssets.locateFolder(executable: prefix.file("bin/ferry"))
        let manifest = StaticAssets(folder: folder).response(for: "/manifest.webmanifest")
        #expect(manifest.status == 200)
        #expect(
            manifest.body
                == .file(path: folder + "/manifest.webmanifest", contentType: "application/manifest+json"))
        let json =
            try JSONSerialization.jsonObject(
                with: try Data(contentsOf: URL(fileURLWithPath: folder + "/manifest.webmanifest"))) as? [String: Any]
        #expect(json?["display"] as? String == "standalone" && json?["start_url"] as? String == "/")
        let index = try String(contentsOfFile: folder + "/index.html", encoding: .utf8)
        #expect(index.contains("rel=\"manifest\" href=\"/manifest.webmanifest\""))
    }

    @Test func aSymbolicLinkToTheBinaryIsFollowed() throws {
        try installPage()
        let elsewhere = try TempDir(prefix: "ferry-link")
        try fm.createSymbolicLink(atPath: elsewhere.file("ferry"), withDestinationPath: prefix.file("bin/ferry"))
        #expect(StaticAssets.installedFolder(executable: elsewhere.file("ferry")) == expected)
    }

    @Test func withoutAnInstalledPageTheBuildsBundleIsUsed() throws {
        #expect(StaticAssets.installedFolder(executable: prefix.file("bin/ferry")) == nil)
        let folder = StaticAssets.locateFolder(executable: prefix.file("bin/ferry"))
        #expect(folder.hasSuffix("Ferry_FerryWeb.resources/Web"), "\(folder)")
        #expect(fm.fileExists(atPath: folder + "/index.html"))
        // An empty share/ferry/Web (a half-removed package) is not taken either.
        try fm.createDirectory(atPath: prefix.file("share/ferry/Web"), withIntermediateDirectories: true)
        #expect(StaticAssets.installedFolder(executable: prefix.file("bin/ferry")) == nil)
    }
}
