import Foundation
import Synchronization

/// An ez Share Wi-Fi SD card (or `ferry card --kind ezshare`) as a read-only
/// remote file system: `ezshare://HOST[:PORT]/PATH` (the host `ezshare.card`
/// when left out).
///
/// Lists through `GET /dir?dir=A:%5C...` (`EzShareListing`), downloads through
/// `GET /download?file=...` with the HTTP backend's download attempts (`Range`
/// + `If-Range` resumes, the `.part` and journal contract), and asks
/// `GET /client?command=version` for the firmware. Paths are the long names
/// the card shows; every request names the 8.3 alias from the card's own link,
/// found by listing the parent folders (and remembered). Links name the card's
/// own address (`http://192.168.4.1/...`): only their parameter is kept, and
/// every request goes to the host this file system was opened with.
///
/// Sizes in listings are KB rounded up, so entries carry no size; a download is
/// complete when the card's `Content-Length` says so. The card takes one
/// connection at a time: the engine's limit for it is 1.
///
/// ```swift
/// let card = EzShareFileSystem(url: try RemoteURL(parsing: "ezshare://192.168.4.1/DCIM"))
/// for entry in try await card.list("/DCIM/100CANON") { print(entry.name) }
/// ```
public struct EzShareFileSystem: RemoteFileSystem {
    /// The card's URL; its path is the starting folder.
    public let url: RemoteURL
    /// Timeouts and retries for listings and the version.
    public let policy: FlashAirFileSystem.RequestPolicy
    let engine: CurlEngine
    private let links: Links

    /// What the card's links said, by Ferry path: listed folders fill it.
    final class Links: Sendable {
        let known = Mutex<[String: EzShareListing.Entry]>([:])
    }

    /// Opens a card. It always gets one connection: the card serves no more.
    public init(url: RemoteURL, policy: FlashAirFileSystem.RequestPolicy = .init()) {
        self.init(url: url, engine: .shared, policy: policy)
    }

    init(url: RemoteURL, engine: CurlEngine, policy: FlashAirFileSystem.RequestPolicy = .init()) {
        self.url = url
        self.engine = engine
        self.policy = policy
        self.links = Links()
        engine.setHostLimit(url.hostKey, 1)
        engine.setHostPolicy(url.hostKey, .oneConnectionCard)
    }

    var cgi: FlashAirCGI { FlashAirCGI(url: url, engine: engine, policy: policy) }

    func shown(_ path: String) -> String { url.with(path: path).redacted }

    /// A card reads ranges and describes itself, one request at a time.
    public var capabilities: RemoteCapabilities { [.cardInfo, .rangeReads, .oneConnection] }

    // MARK: Listing

    /// Lists one folder in the card's order, without `.` and `..`.
    ///
    /// - Throws: `notFound` for a missing folder or a file, `badListing` for a
    ///   page that is no ez Share listing, `notAnswering` for a card that does not answer.
    public func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        let folder = RemotePath.normalize(path, keepingServerRoot: false)
        let dir = try await directoryLink(folder, operation: "list")
        return try await listing(folder, dir: dir, operation: "list")
    }

    /// Asks for the page of `dir` and remembers its links under `folder`.
    private func listing(_ folder: String, dir: [UInt8], operation: String) async throws(FerryError) -> [RemoteEntry] {
        let reply = try await cgi.get(
            "dir", query: "dir=" + EzShareListing.encodeParameter(dir), operation: operation, target: folder)
        if reply.status == 404 {
            throw FerryError(
                .notFound, operation: operation, target: shown(folder), serverCode: 404, serverText: reply.reason,
                detail: "no /dir page: is this an ez Share card?")
        }
        guard (200..<300).contains(reply.status) else {
            throw FerryError.http(
                status: reply.status, reason: reply.reason, operation: operation, target: shown(folder))
        }
        let page = EzShareListing.parse(reply.body)
        guard page.hasListing, !(page.entries.isEmpty && page.skippedLines > 0 && page.totalEntries == nil) else {
            let text = String(decoding: reply.body.prefix(80), as: UTF8.self)
            throw FerryError(
                .badListing, operation: operation, target: shown(folder),
                detail: "the reply is not an ez Share folder page: \(text)")
        }
        var entries: [RemoteEntry] = []
        var found: [String: EzShareListing.Entry] = [:]
        for item in page.entries where !item.isDotEntry {
            let child = RemotePath.join(folder, item.name)
            found[child] = item
            entries.append(
                RemoteEntry(
                    name: item.name, path: child, kind: item.isDirectory ? .directory : .file, size: nil,
                    modified: item.modified))
        }
        links.known.withLock { $0.merge(found) { _, new in new } }
        return entries
    }

    /// Describes a file or folder by listing its parent folder.
    public func stat(_ path: String) async throws(FerryError) -> RemoteEntry {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        if p == "/" { return RemoteEntry(name: "/", path: "/", kind: .directory) }
        let item = try await entry(p, operation: "stat")
        return RemoteEntry(
            name: item.name, path: p, kind: item.isDirectory ? .directory : .file, size: nil, modified: item.modified)
    }

    /// The card's entry for a path: remembered, or found by listing its parent
    /// (by the long name, else ignoring case, else by the 8.3 alias).
    private func entry(_ p: String, operation: String) async throws(FerryError) -> EzShareListing.Entry {
        if let known = links.known.withLock({ $0[p] }) { return known }
        let (parent, name) = RemotePath.split(p)
        let parentDir = try await directoryLink(parent, operation: operation)
        let entries: [RemoteEntry]
        do {
            entries = try await listing(parent, dir: parentDir, operation: operation)
        } catch  where error.code == .notFound && error.serverCode == nil {
            throw FerryError(.notFound, operation: operation, target: shown(p))
        }
        let known = links.known.withLock { $0 }
        if let match = FlashAirFileSystem.find(name, in: entries), let item = known[match.path] {
            if match.path != p { links.known.withLock { $0[p] = item } }
            return item
        }
        // `IMG_00~1.JPG` for `IMG_0001 long name.JPG`: the alias the link names.
        let alias = entries.lazy.compactMap { known[$0.path] }.first { item in
            let last = item.link.split(separator: UInt8(ascii: "\\")).last.map(Array.init) ?? []
            return GB18030.decode(last).compare(name, options: .caseInsensitive) == .orderedSame
        }
        guard let alias else { throw FerryError(.notFound, operation: operation, target: shown(p)) }
        links.known.withLock { $0[p] = alias }
        return alias
    }

    /// The card's `dir` for a folder: `A:` for the root, else the folder's link.
    private func directoryLink(_ folder: String, operation: String) async throws(FerryError) -> [UInt8] {
        if folder == "/" { return EzShareListing.root }
        let lookup = { () async throws(FerryError) in try await entry(folder, operation: operation) }
        return try await ListedEntry.folder(
            operation: operation, shown: shown(folder), isDirectory: \.isDirectory, lookup
        ).link
    }

    /// The card's `file` for a file.
    private func fileLink(_ path: String, operation: String) async throws(FerryError) -> [UInt8] {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        let item = try await entry(p, operation: operation)
        guard !item.isDirectory else {
            throw FerryError(
                .unsupportedOperation, operation: operation, target: shown(p), detail: "is a folder; use -r")
        }
        return item.link
    }

    /// `ezshare://HOST:PORT/download?file=...` for a file's link (sent as `http`).
    func downloadURL(_ link: [UInt8]) -> RemoteURL {
        var target = url.with(path: "/download")
        target.user = nil
        target.password = nil
        target.query = "file=" + EzShareListing.encodeParameter(link)
        return target
    }

    // MARK: Downloads

    /// Starts downloading a file (`GET /download?file=` with the 8.3 alias).
    ///
    /// Resumes with `Range` + `If-Range`; the file is complete when the card's
    /// `Content-Length` says so (listings give only KB).
    public func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
        let destination = LocalDestination.prepare(destination, options)
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        // The name the journal keeps (as sync recognises its own parts).
        let display = shown(p)
        return Transfer.start(source: display, destination: destination) { transfer async throws(FerryError) in
            let link = try await fileLink(p, operation: "download")
            let source = HTTPDownloadAttempt.source(
                url: downloadURL(link), engine: engine, wireScheme: "http", display: display,
                gaveUp: FlashAirFileSystem.cardError)
            return try await DownloadDriver.run(source, to: destination, options: options, transfer: transfer)
        }
    }

    /// Reads one byte range of a file (`GET /download` with `Range`).
    public func data(at path: String, range: Range<Int64>) async throws(FerryError) -> Data {
        try await memoryFile(path).data(range: range)
    }

    /// Reads a whole file, refusing one over `limit` before its body.
    public func data(at path: String, limit: Int) async throws(FerryError) -> Data {
        try await memoryFile(path).data(limit: limit)
    }

    private func memoryFile(_ path: String) -> HTTPMemoryRead.File {
        HTTPMemoryRead.File(shown: shown(path), engine: engine, wireScheme: "http") { () async throws(FerryError) in
            downloadURL(try await fileLink(path, operation: "read"))
        }
    }

    // MARK: The card

    /// The firmware (`GET /client?command=version`: `LZ1801EDPG:1.0.0:2016-03-19:72 ...`).
    ///
    /// - Throws: `notFound` when the host has no `/client` (not an ez Share card).
    public func info() async throws(FerryError) -> FlashAirInfo {
        let reply = try await cgi.get("client", query: "command=version", operation: "info", target: "/")
        guard reply.status == 200 else {
            if reply.status == 404 {
                throw FerryError(
                    .notFound, operation: "info", target: shown("/"), serverCode: 404, serverText: reply.reason,
                    detail: "no /client: is this an ez Share card?")
            }
            throw FerryError.http(status: reply.status, reason: reply.reason, operation: "info", target: shown("/"))
        }
        var info = FlashAirInfo()
        info.firmware = EzShareFileSystem.version(in: GB18030.decode(reply.body))
        return info
    }

    /// The text of `<version>` in the card's XML reply; nil without one.
    static func version(in xml: String) -> String? {
        guard let open = xml.range(of: "<version>"),
            let close = xml.range(of: "</version>", range: open.upperBound..<xml.endIndex)
        else { return nil }
        let text = xml[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : HTTPIndexParser.decodeEntities(text)
    }

    // MARK: Read-only

    private func readOnly(_ operation: String, _ path: String) -> FerryError {
        FerryError(
            .unsupportedOperation, operation: operation, target: shown(path),
            detail: "ez Share cards are read-only over Wi-Fi: change files in the camera or a card reader")
    }

    /// A transfer that fails: the card takes no uploads.
    public func upload(_ source: String, to path: String, options: UploadOptions) -> Transfer {
        Transfer.failed(readOnly("upload", path), source: source, destination: shown(path))
    }

    /// Throws `unsupportedOperation`: the card deletes nothing.
    public func delete(_ path: String) async throws(FerryError) { throw readOnly("delete", path) }

    /// Throws `unsupportedOperation`: the card creates no folders.
    public func makeDirectory(_ path: String, createParents: Bool) async throws(FerryError) {
        throw readOnly("mkdir", path)
    }

    /// Throws `unsupportedOperation`: the card removes no folders.
    public func removeDirectory(_ path: String) async throws(FerryError) { throw readOnly("rmdir", path) }

    /// Throws `unsupportedOperation`: the card renames nothing.
    public func rename(_ path: String, to newPath: String, replacing: Bool) async throws(FerryError) {
        throw readOnly("rename", path)
    }

    /// False: the card takes no changes.
    public func acceptsChanges() async throws(FerryError) -> Bool? { false }
}
