import Foundation

/// A parsed location Ferry can talk to: `flashair://`, `ezshare://`, `ftp://`, `ftps://`,
/// `ftpes://`, `sftp://`, `http://`, `https://`, `dav://`, `davs://`, `file://` or a plain local path.
///
/// The path is stored decoded (`/My Photos/a#1.jpg`); `redacted` never shows a password.
public struct RemoteURL: Sendable, Hashable, CustomStringConvertible {
    /// The protocols Ferry speaks.
    public enum Scheme: String, Sendable, Hashable, CaseIterable {
        /// A FlashAir card, over HTTP (`flashair://HOST/`).
        case flashair
        /// FTP without TLS.
        case ftp
        /// FTP with implicit TLS (port 990).
        case ftps
        /// FTP with explicit TLS (`AUTH TLS` on port 21).
        case ftpes
        /// SFTP over SSH (port 22).
        case sftp
        /// HTTP.
        case http
        /// HTTP over TLS.
        case https
        /// A local folder.
        case file
        /// An ez Share Wi-Fi SD card, over HTTP (`ezshare://HOST/`), read-only.
        case ezshare
        /// A camera through libgphoto2 (`camera:///PATH`, `?port=usb:001,004`, `?model=...`).
        case camera
        /// A camera on Wi-Fi through libgphoto2's PTP/IP driver (`ptpip://ADDRESS[:PORT]/PATH`, port 15740).
        case ptpip
        /// WebDAV over HTTP (`dav://HOST/PATH`; `webdav://` is read as this).
        case dav
        /// WebDAV over HTTPS (`davs://HOST/PATH`; `webdavs://` is read as this).
        case davs

        /// `webdav` and `webdavs`, the names some apps give `dav` and `davs`.
        static func named(_ text: String) -> Scheme? {
            Scheme(rawValue: text) ?? (text == "webdav" ? .dav : text == "webdavs" ? .davs : nil)
        }

        /// HTTP on the wire: paths keep escapes decoding would lose, `?` starts a query.
        var speaksHTTP: Bool { self == .http || self == .https || self == .dav || self == .davs }

        /// A camera through libgphoto2: `?port=` and `?model=` pick it.
        var isCamera: Bool { self == .camera || self == .ptpip }

        /// An SMB share (`smb://[DOMAIN;]USER@HOST[:PORT]/SHARE/PATH`, port 445).
        case smb
    }

    /// The protocol.
    public var scheme: Scheme
    /// Host name or address (IPv6 without brackets); empty for local files.
    public var host: String
    /// Port, when given.
    public var port: Int?
    /// User name, decoded.
    public var user: String?
    /// Password, decoded. Never printed: use `redacted`.
    public var password: String?
    /// Absolute path, decoded, starting with `/`.
    public var path: String {
        didSet { escapedPath = nil }
    }
    /// The path as it goes on the wire, kept only when decoding lost something: an
    /// HTTP path with an escaped `/` (`files/docs%2Freadme.txt`, a name, not a
    /// folder). Forgotten when `path` changes.
    private(set) var escapedPath: String?
    /// HTTP query string without `?`, kept as written (already encoded).
    public var query: String?

    /// Creates a URL from its parts.
    public init(
        scheme: Scheme, host: String = "", port: Int? = nil, user: String? = nil,
        password: String? = nil, path: String = "/", query: String? = nil
    ) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        // Bytes, not Characters: a name starting with a combining mark makes
        // `"/\u{301}x".hasPrefix("/")` false, and the path would gain a second `/`.
        self.path = path.utf8.first == UInt8(ascii: "/") ? path : "/" + path
        self.query = query
    }

    /// Parses a URL or a local path.
    ///
    /// - Throws: `FerryError.invalidURL` for malformed text (bad port, bad
    ///   percent-escape, missing host), `FerryError.unsupportedScheme` for a scheme
    ///   Ferry does not speak.
    public init(parsing text: String) throws(FerryError) {
        try self.init(parsing: text, onePass: true)
    }

    /// `init(parsing:)`, with the one-pass reading of common URLs (`onePass`) or
    /// without it: the full reading alone, which must give the same for every URL
    /// the one-pass reading takes (``RemoteURLBytesTests`` compares the two).
    init(parsing text: String, onePass: Bool) throws(FerryError) {
        // Most URLs (`http://host:port/path`) are read in one pass over their bytes;
        // the rest, and every error, by the full reading below.
        if onePass, let common = RemoteURL.commonParts(text) {
            try self.init(
                scheme: common.scheme, host: common.host, port: common.port, user: nil, password: nil,
                rawPath: common.rawPath, query: common.query, text: text)
            return
        }
        func invalid(_ why: String) -> FerryError {
            FerryError(.invalidURL, target: RemoteURL.redact(text), detail: why)
        }
        // `flashair:PATH` and `flashair:///PATH`: the card in its own access-point
        // mode, which names itself `flashair` (the default of every FlashAir tool).
        if let rest = RemoteURL.defaultCardPath(text) {
            try self.init(parsing: "flashair://" + RemoteURL.defaultCardHost + rest)
            return
        }
        // `camera:///PATH`: the camera libgphoto2 finds (or the one `?port=` names).
        if let rest = RemoteURL.defaultCardPath(text, scheme: "camera") {
            try self.init(parsing: "camera://" + RemoteURL.defaultCameraHost + rest)
            return
        }
        // `ezshare:PATH` and `ezshare:///PATH`: the card on its own access point.
        if let rest = RemoteURL.defaultCardPath(text, scheme: "ezshare") {
            try self.init(parsing: "ezshare://" + RemoteURL.defaultEzShareHost + rest)
            return
        }
        guard let schemeEnd = RemoteURL.schemeSeparator(in: text) else {
            // A local path.
            guard !text.isEmpty else { throw invalid("empty") }
            let absolute =
                text.utf8.first == UInt8(ascii: "/")
                ? text : FileManager.default.currentDirectoryPath + "/" + text
            self.init(scheme: .file, path: absolute)
            return
        }
        let schemeText = text[..<schemeEnd.lowerBound].lowercased()
        guard let scheme = Scheme.named(schemeText) else {
            if schemeText.isEmpty || !schemeText.allSatisfy({ $0.isLetter || "+-.".contains($0) }) {
                throw invalid("no scheme")
            }
            throw FerryError(
                .unsupportedScheme, target: RemoteURL.redact(text),
                detail:
                    "\(schemeText):// is not supported; use flashair, ezshare, camera, ptpip, ftp, ftps, ftpes, sftp, smb, http, https, dav, davs or a local path"
            )
        }
        var rest = Substring(text[schemeEnd.upperBound...])
        var query: String?
        // `smb://HOST/SHARE/PATH?encrypt=required`: SMB names cannot hold `?`, and may hold `#`.
        if scheme == .smb, let q = rest.utf8.firstIndex(of: UInt8(ascii: "?")) {
            query = String(rest[rest.utf8.index(after: q)...])
            rest = rest[..<q]
        }
        if scheme.speaksHTTP || scheme.isCamera {
            if let hash = rest.utf8.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
            if let q = rest.utf8.firstIndex(of: UInt8(ascii: "?")) {
                query = String(rest[rest.utf8.index(after: q)...])
                rest = rest[..<q]
            }
        }
        let authorityEnd = rest.utf8.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        let rawPath = rest[authorityEnd...]
        if scheme == .file {
            guard authority.isEmpty || authority == "localhost" else {
                throw invalid("file URLs name no host")
            }
            guard let p = RemoteURL.percentDecode(rawPath.isEmpty ? "/" : rawPath) else {
                throw invalid("bad percent-escape in path")
            }
            self.init(scheme: .file, path: p)
            return
        }
        var user: String?
        var password: String?
        if let at = authority.utf8.lastIndex(of: UInt8(ascii: "@")) {
            let info = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = info.firstIndex(of: ":") {
                user = RemoteURL.percentDecode(info[..<colon])
                password = RemoteURL.percentDecode(info[info.index(after: colon)...])
                guard user != nil, password != nil else { throw invalid("bad percent-escape in user info") }
            } else {
                user = RemoteURL.percentDecode(info)
                guard user != nil else { throw invalid("bad percent-escape in user name") }
            }
        }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("unclosed [ in host") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            // An IPv6 literal (with an optional %zone); anything else in brackets
            // would not survive being written out and parsed again.
            let literal = host.split(separator: "%", maxSplits: 1).first ?? ""
            guard literal.contains(":"),
                literal.unicodeScalars.allSatisfy({ $0.properties.isASCIIHexDigit || $0 == ":" || $0 == "." }),
                host.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 })
            else { throw invalid("not an IPv6 address in [ ]") }
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw invalid("junk after ]")
            }
        } else if let colon = authority.utf8.lastIndex(of: UInt8(ascii: ":")) {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
            guard !host.utf8.contains(UInt8(ascii: ":")) else {
                throw invalid("an IPv6 address needs brackets, as in ftp://[::1]:21/")
            }
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw invalid("missing host") }
        // ASCII names are checked byte by byte; others (IDN) by their letters.
        guard
            host.utf8.allSatisfy({ RemoteURL.hostByte.contains($0) })
                || host.allSatisfy({ $0.isLetter || $0.isNumber || "-._:~%".contains($0) })
        else { throw invalid("bad character in host") }
        var port: Int?
        if let portText {
            guard let p = Int(portText), (1...65535).contains(p), portText.allSatisfy(\.isNumber) else {
                // `ftp://user:pa/ss@host`: what looks like a port is a piece of the password.
                let shown = RemoteURL.redact(text) == text ? " \"\(portText)\"" : ""
                throw invalid("bad port" + shown)
            }
            port = p
        }
        try self.init(
            scheme: scheme, host: String(host), port: port, user: user, password: password, rawPath: rawPath,
            query: query, text: text)
    }

    /// The end of parsing, shared by both readings: the path decoded and checked.
    private init(
        scheme: Scheme, host: String, port: Int?, user: String?, password: String?, rawPath: Substring,
        query: String?, text: String
    ) throws(FerryError) {
        func invalid(_ why: String) -> FerryError {
            FerryError(.invalidURL, target: RemoteURL.redact(text), detail: why)
        }
        let web = scheme.speaksHTTP
        let path: String
        if !RemoteURL.contains(UInt8(ascii: "%"), in: rawPath) {
            // Nothing to decode: the bytes are the text's own, UTF-8 already.
            path = rawPath.isEmpty ? "/" : String(rawPath)
        } else {
            guard let bytes = RemoteURL.percentDecodeBytes(rawPath) else {
                throw invalid("bad percent-escape in path")
            }
            var decoded = String(validating: bytes, as: UTF8.self)
            if decoded == nil && web {
                // A name in another encoding (Latin-1 on an old server): shown with
                // replacement characters, sent exactly as written.
                decoded = String(decoding: bytes, as: UTF8.self)
            }
            guard let decoded else { throw invalid("bad percent-escape in path") }
            path = decoded
        }
        guard !RemoteURL.contains(0, in: path[...]) else { throw invalid("NUL in path") }
        self.init(scheme: scheme, host: host, port: port, user: user, password: password, path: path, query: query)
        if web, let escaped = RemoteURL.escapedForm(rawPath) {
            escapedPath = escaped
        }
    }

    /// For a raw path that decoding would lose something of (an escaped `/`, bytes
    /// that are not UTF-8): the path escaped the way `percentEncodePath` would,
    /// keeping those; nil when the decoded path says it all.
    private static func escapedForm(_ rawPath: Substring) -> String? {
        // Without an escape decoding loses nothing (the common case, once per URL).
        guard contains(UInt8(ascii: "%"), in: rawPath) else { return nil }
        let pieces = splitAtEscapedSlash(rawPath)
        let decoded = pieces.map { percentDecodeBytes($0) ?? [] }
        guard pieces.count > 1 || decoded.contains(where: { String(validating: $0, as: UTF8.self) == nil })
        else { return nil }
        return decoded.map { percentEncode(bytes: $0, allowed: pathSegmentOrSlash) }.joined(separator: "%2F")
    }

    /// `text` cut at every `%2F` (either case).
    private static func splitAtEscapedSlash(_ text: Substring) -> [Substring] {
        var pieces: [Substring] = []
        var start = text.startIndex
        var i = start
        while i < text.endIndex {
            let rest = text[i...]
            if rest.utf8.count >= 3, rest.hasPrefix("%"), rest.dropFirst().prefix(2).uppercased() == "2F" {
                pieces.append(text[start..<i])
                i = text.index(i, offsetBy: 3)
                start = i
            } else {
                i = text.index(after: i)
            }
        }
        pieces.append(text[start...])
        return pieces
    }

    /// The URL as text with the password replaced by `***`.
    public var redacted: String { render(password: password == nil ? nil : "***") }

    /// The URL with its password shown as `***`.
    public var description: String { redacted }

    /// The last path component, decoded; empty for a folder URL or the root.
    ///
    /// An escaped slash stays escaped (`docs%2Freadme.txt`): it is part of the name.
    public var lastComponent: String {
        if let escapedPath {
            let last = escapedPath.split(separator: "/", omittingEmptySubsequences: true).last ?? ""
            // Pieces that are not UTF-8 stay escaped too.
            return RemoteURL.splitAtEscapedSlash(last).map { RemoteURL.percentDecode($0) ?? String($0) }
                .joined(separator: "%2F")
        }
        if let ascii = RemoteURL.lastASCIIComponent(path) { return ascii }
        return path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? ""
    }

    /// Whether the path ends in `/` (names a folder).
    public var isFolderPath: Bool { path.hasSuffix("/") }

    /// The server alone, as a backend's endpoint keeps it: the root path and no
    /// password. Credentials travel as options, never inside the URL text (which
    /// keeps the user name for messages: "ftp://ann@host/a.txt").
    var server: RemoteURL {
        var u = self
        u.password = nil
        return u.with(path: "/")
    }

    /// The same server with another path.
    public func with(path newPath: String) -> RemoteURL {
        var u = self
        let absolute = newPath.utf8.first == UInt8(ascii: "/") ? newPath : "/" + newPath
        // The same path keeps its escaped form.
        if absolute != path { u.path = absolute }
        u.query = nil
        return u
    }

    /// The URL of `path` on this URL's server, for a file system opened with
    /// this URL: the URL itself, escapes and query kept, for its own path (`get
    /// URL?QUERY`); else ``with(path:)``, without a query.
    func file(at path: String) -> RemoteURL {
        path == self.path ? self : with(path: path)
    }

    /// `host:port` (or host alone), used to group connections per server.
    public var hostKey: String {
        RemoteURL.composeHostKey(scheme: scheme.rawValue, host: host, port: port ?? defaultPort)
    }

    /// The well-known port of the scheme.
    public var defaultPort: Int {
        switch scheme {
        case .http, .flashair, .ezshare, .dav: 80
        case .https, .davs: 443
        case .ftp, .ftpes: 21
        case .ftps: 990
        case .sftp: 22
        case .smb: 445
        case .file, .camera: 0
        case .ptpip: 15740
        }
    }

    /// The URL text with percent-encoded path, for a protocol library. `overrideScheme`
    /// replaces the scheme (flashair -> http). No user info: credentials go separately.
    func wireURL(scheme overrideScheme: String? = nil) -> String {
        RemoteURL.compose(
            scheme: overrideScheme ?? scheme.rawValue, user: nil, shown: nil, host: host, port: port, path: path,
            escapedPath: escapedPath, query: query)
    }

    private func render(password shown: String?) -> String {
        if scheme == .file { return path }
        return RemoteURL.compose(
            scheme: scheme.rawValue, user: user, shown: user == nil ? nil : shown, host: host, port: port, path: path,
            escapedPath: escapedPath, query: query)
    }

    /// The range of the first `://` (plain scanning, no Foundation: runs per URL).
    /// The host name a FlashAir card answers to on its own access point.
    public static let defaultCardHost = "flashair"

    /// The host a `camera:///` URL gets: cameras are named by `?port=` and `?model=`.
    public static let defaultCameraHost = "camera"

    /// The host name an ez Share card answers to on its own access point (192.168.4.1).
    public static let defaultEzShareHost = "ezshare.card"

    /// The path of `flashair:PATH` or `flashair:///PATH` (nil for any other text),
    /// or of the same forms of another card's scheme.
    static func defaultCardPath(_ text: String, scheme: String = "flashair") -> String? {
        let prefix = scheme + ":"
        guard text.utf8.count >= prefix.utf8.count, text.lowercased().hasPrefix(prefix) else { return nil }
        let rest = text.dropFirst(prefix.count)
        if rest.hasPrefix("///") { return String(rest.dropFirst(2)) }
        if rest.hasPrefix("//") { return nil }
        return rest.hasPrefix("/") ? String(rest) : "/" + rest
    }

    static func schemeSeparator(in text: String) -> Range<String.Index>? {
        let u = text.utf8
        var i = u.startIndex
        while i != u.endIndex {
            if u[i] == UInt8(ascii: ":") {
                let a = u.index(after: i)
                if a != u.endIndex, u[a] == UInt8(ascii: "/") {
                    let b = u.index(after: a)
                    if b != u.endIndex, u[b] == UInt8(ascii: "/") { return i..<u.index(after: b) }
                }
            }
            i = u.index(after: i)
        }
        return nil
    }

    /// Best-effort redaction of raw text that may contain `user:password@`.
    ///
    /// A typed password may hold an unescaped `/`, `?`, `#` or `@` (`ftp://u:pa/ss@host/`):
    /// the user information is taken to end at the last `@` before the first `/` that
    /// follows the first `@`. That may hide a little more than a password
    /// (`http://host:80/a@b` shows as `http://host:***@b`), never less.
    public static func redact(_ text: String) -> String {
        guard let schemeEnd = schemeSeparator(in: text) else { return text }
        let rest = text[schemeEnd.upperBound...]
        guard let firstAt = rest.firstIndex(of: "@") else { return text }
        let end = rest[firstAt...].firstIndex(of: "/") ?? rest.endIndex
        guard let at = rest[..<end].lastIndex(of: "@") else { return text }
        let info = rest[..<at]
        guard let colon = info.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }

    static let unreserved = ByteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    static let pathSegmentOrSlash = unreserved.adding("/")
    /// Bytes of a host name written in ASCII.
    static let hostByte = unreserved.adding(":%")

    /// Percent-encodes everything but unreserved characters and `/` (commas, `#`,
    /// `%`, spaces and non-ASCII letters are escaped).
    static func percentEncodePath(_ path: String) -> String {
        percentEncode(path, allowed: pathSegmentOrSlash)
    }

    static func percentEncode(_ text: String, allowed: ByteSet) -> String {
        // Most names need no escape: keep the string as it is.
        if text.utf8.allSatisfy({ allowed.contains($0) }) { return text }
        return percentEncode(bytes: text.utf8, allowed: allowed)
    }

    static func percentEncode<C: Collection<UInt8>>(bytes input: C, allowed: ByteSet) -> String {
        let hex: StaticString = "0123456789ABCDEF"
        var bytes: [UInt8] = []
        bytes.reserveCapacity(input.count * 3)
        for b in input {
            if allowed.contains(b) {
                bytes.append(b)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex.utf8Start[Int(b >> 4)])
                bytes.append(hex.utf8Start[Int(b & 0xF)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Decodes `%XX` escapes (a `+` stays a `+`); nil for a malformed escape or
    /// bytes that are not UTF-8.
    public static func percentDecode<S: StringProtocol>(_ text: S) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        return percentDecodeBytes(text).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// Decodes `%XX` escapes to bytes, UTF-8 or not; nil for a malformed escape.
    static func percentDecodeBytes<S: StringProtocol>(_ text: S) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var i = 0
        func hexValue(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x41...0x46: c - 0x41 + 10
            case 0x61...0x66: c - 0x61 + 10
            default: nil
            }
        }
        while i < utf8.count {
            if utf8[i] == UInt8(ascii: "%") {
                guard i + 2 < utf8.count, let hi = hexValue(utf8[i + 1]), let lo = hexValue(utf8[i + 2])
                else { return nil }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(utf8[i])
                i += 1
            }
        }
        return out
    }
}

/// A set of bytes as a 256-bit map: membership is two instructions, where a
/// `Set<UInt8>` hashes every byte (URL rendering ran per request).
struct ByteSet: Sendable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    init(_ members: String) {
        for b in members.utf8 { insert(b) }
    }

    func adding(_ more: String) -> ByteSet {
        var copy = self
        for b in more.utf8 { copy.insert(b) }
        return copy
    }

    private mutating func insert(_ b: UInt8) {
        let bit = UInt64(1) << UInt64(b & 63)
        switch b >> 6 {
        case 0: words.0 |= bit
        case 1: words.1 |= bit
        case 2: words.2 |= bit
        default: words.3 |= bit
        }
    }

    func contains(_ b: UInt8) -> Bool {
        let word: UInt64
        switch b >> 6 {
        case 0: word = words.0
        case 1: word = words.1
        case 2: word = words.2
        default: word = words.3
        }
        return word & (UInt64(1) << UInt64(b & 63)) != 0
    }
}
