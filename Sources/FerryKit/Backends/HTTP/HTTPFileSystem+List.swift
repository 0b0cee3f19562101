import CCurl
import Foundation

/// Folders over HTTP(S): the page a server generates for a URL ending in `/`
/// (nginx `autoindex`, Apache `mod_autoindex`, lighttpd, Python `http.server`,
/// Caddy `browse`), read by `HTTPIndexParser`.
extension HTTPFileSystem {
    /// The largest folder page read (about 150,000 entries of nginx's html).
    static let maxIndexBytes = 32 << 20

    /// Lists the folder `path` from its index page.
    ///
    /// - Throws: `badListing` ("not a folder listing") when the page is no index
    ///   Ferry knows, the server's own status for a page it refuses.
    public func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        let folder = path.hasSuffix("/") ? path : path + "/"
        let page = try await fetchPage(folder, operation: "list")
        guard let index = page.index else {
            throw HTTPFileSystem.notAListing(page.target, contentType: page.contentType)
        }
        return index.entries.map { e in
            RemoteEntry(
                name: e.name, path: folder + e.name, kind: e.isDirectory ? .directory : .file, size: e.size,
                modified: e.modified)
        }
    }

    /// `stat` of a URL ending in `/`: a folder when its page is an index, nil otherwise
    /// (a page such as `index.html`, which is then described as a file).
    func statFolder(_ path: String) async throws(FerryError) -> RemoteEntry? {
        let page: IndexPage
        do {
            page = try await fetchPage(path, operation: "stat")
        } catch  where error.code == .badListing {
            return nil  // a page too large to be an index: a file
        }
        guard page.index != nil else { return nil }
        let name = url.with(path: path).lastComponent
        return RemoteEntry(name: name.isEmpty ? "/" : name, path: path, kind: .directory)
    }

    static func notAListing(_ target: String, contentType: String?) -> FerryError {
        let page = contentType.map { "a \($0.split(separator: ";").first.map(String.init) ?? $0) page" } ?? "a page"
        return FerryError(
            .badListing, operation: "list", target: target, serverText: "not a folder listing",
            detail:
                "the server sent \(page) that is no directory index Ferry reads (nginx autoindex, Apache, "
                + "lighttpd, python http.server, Caddy browse); give the URL of a file, "
                + "or turn on the server's folder listing")
    }

    /// GETs a folder page and parses it.
    private func fetchPage(_ path: String, operation: String) async throws(FerryError) -> IndexPage {
        let target = url.with(path: path)
        let shown = target.redacted
        let job = HTTPRequestJob(hostKey: target.hostKey, maxBody: HTTPFileSystem.maxIndexBytes)
        HTTPFileSystem.configure(job.easy, url: target, settings: settings)
        // Index pages compress well; libcurl decodes whatever the server picks.
        job.easy.set(CURLOPT_ACCEPT_ENCODING, "")
        // A slow server may take long to send a big page, but not stall.
        job.easy.setTimeouts(connect: .seconds(15), stall: .seconds(60))
        let status = try await HTTPFileSystem.performWholeReply(
            job, on: engine, operation: operation, target: shown,
            tooLarge: ("folder page too large", "over \(HTTPFileSystem.maxIndexBytes >> 20) MB; list a smaller folder"))
        if status >= 400 {
            throw FerryError.http(status: status, reason: job.headers.reason, operation: operation, target: shown)
        }
        // Relative links are relative to where redirects led (`/photos` -> `/photos/`).
        var page = target
        if let effective = job.easy.info(string: CURLINFO_EFFECTIVE_URL),
            let final = try? RemoteURL(parsing: effective), final.host.lowercased() == target.host.lowercased()
        {
            page = final
        }
        let type = job.headers["Content-Type"]
        return IndexPage(
            target: shown, contentType: type, index: HTTPIndexParser.parse(job.body, contentType: type, page: page))
    }
}

/// A folder URL's page: where it was, its type, and its entries when it is an index.
struct IndexPage {
    var target: String
    var contentType: String?
    var index: (format: HTTPIndexParser.Format, entries: [HTTPIndexEntry])?
}
