import FerryServer
import Foundation

/// The page's own files (HTML, CSS, JavaScript), shipped as the target's
/// `Web` resource folder: no build step, no third-party scripts.
///
/// Any path that is not one of those files gets `index.html`, so a reloaded
/// or bookmarked address (`/?path=/DCIM`) opens the page.
struct StaticAssets: Sendable {
    /// The resource folder.
    let folder: String
    private let files: Set<String>

    init(folder: String = StaticAssets.locateFolder()) {
        self.folder = folder
        files = Set((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
    }

    /// Where the page's files are: `PREFIX/share/ferry/Web` for an installed
    /// `PREFIX/bin/ferry` (the Debian package's /usr/share/ferry/Web, as Debian keeps
    /// architecture-independent data), else SwiftPM's resource bundle, which it
    /// looks for next to the executable and then in the build folder.
    static func locateFolder(executable: String? = Bundle.main.executablePath) -> String {
        if let executable, let installed = installedFolder(executable: executable) { return installed }
        return Bundle.module.resourceURL?.appendingPathComponent("Web").path ?? "Web"
    }

    /// `PREFIX/share/ferry/Web` for `PREFIX/bin/ferry` (symbolic links followed), when it holds the page.
    static func installedFolder(executable: String) -> String? {
        let bin = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
        let folder = bin.deletingLastPathComponent().appendingPathComponent("share/ferry/Web").path
        return FileManager.default.fileExists(atPath: folder + "/index.html") ? folder : nil
    }

    /// The Content-Security-Policy of the page: only its own scripts and styles (and its own
    /// `/api/file` for the viewer's `<video>`: without `media-src` the browser refuses to play it).
    static let policy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; media-src 'self'; "
        + "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    /// Answers a request for a page file.
    func response(for path: String) -> HTTPResponse {
        let name = String(path.dropFirst())
        let file = files.contains(name) && WebPath.isValidName(name) ? name : "index.html"
        var response = HTTPResponse.file(folder + "/" + file, contentType: Self.contentType(file))
        response.headers.add(name: "Cache-Control", value: "no-cache")
        response.headers.add(name: "X-Content-Type-Options", value: "nosniff")
        if file.hasSuffix(".html") {
            response.headers.add(name: "Content-Security-Policy", value: Self.policy)
            response.headers.add(name: "X-Frame-Options", value: "DENY")
            response.headers.add(name: "Referrer-Policy", value: "same-origin")
        }
        return response
    }

    private static func contentType(_ name: String) -> String {
        switch MediaType.fileExtension(name) {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        case "webmanifest": "application/manifest+json"
        default: "application/octet-stream"
        }
    }
}
