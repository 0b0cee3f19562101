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
