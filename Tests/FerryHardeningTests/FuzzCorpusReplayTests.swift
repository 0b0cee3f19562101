import FerryTestSupport
import Foundation
import Testing

@testable import FerryCard
@testable import FerryKit
@testable import FerryServer
@testable import FerryWeb

#if canImport(Glibc)
    import Glibc
#endif

/// Replays every input kept in `Fuzz/corpus` (hand-made seeds, what the fuzzers
/// found, and every input that once crashed, `crash-*`) through every parser that
/// reads outside input, not only the one it was found for, checking the same
/// invariants as the fuzz targets in `Fuzz/Targets`. Fast enough for every CI run;
/// the fuzzing itself is `scripts/fuzz.sh`.
struct FuzzCorpusReplayTests {
    struct Input: CustomStringConvertible {
        var target: String
        var name: String
        var bytes: [UInt8]
        var text: String { String(decoding: bytes, as: UTF8.self) }
        var description: String { "\(target)/\(name)" }

        /// (before, after) the first NUL, as the fuzz targets read two inputs.
        var split: (String?, String) {
            guard let nul = bytes.firstIndex(of: 0) else { return (nil, text) }
            return (
                String(decoding: bytes[..<nul], as: UTF8.self), String(decoding: bytes[(nul + 1)...], as: UTF8.self)
            )
        }
    }

    static let corpusRoot = TestProcess.packageRoot() + "/Fuzz/corpus"

    static let inputs: [Input] = {
        let fm = FileManager.default
        var out: [Input] = []
        for target in ((try? fm.contentsOfDirectory(atPath: corpusRoot)) ?? []).sorted() {
            let folder = corpusRoot + "/" + target
            for name in ((try? fm.contentsOfDirectory(atPath: folder)) ?? []).sorted() {
                guard let data = fm.contents(atPath: folder + "/" + name) else { continue }
                out.append(Input(target: target, name: name, bytes: Array(data)))
            }
        }
        return out
    }()

    static let targets = [
        "FlashAirListing", "FlashAirReply", "FTPList", "FTPMLSD", "FTPReplies", "RemoteURL", "HTTPHeaderLines",
        "ContentRange",
        "ContentDisposition", "EXIFThumbnail", "CaptureDate", "CR3Boxes", "ServerQuery", "ServerRange",
        "ServerHeaderParameters",
        "ServerMultipart", "CardRequest", "WebPath", "WebAccess", "WebRequest", "JPEGDecode", "WebDAVMultistatus",
        "HEIFMeta",
    ]

    @Test func everyFuzzTargetHasACorpus() {
        for target in Self.targets {
            #expect(Self.inputs.contains { $0.target == target }, "no corpus for \(target)")
        }
        #expect(Set(Self.inputs.map(\.target)).isSubset(of: Self.targets), "a corpus folder without a target")
    }

    @Test func flashAirListingsAndReplies() {
        for input in Self.inputs {
            let (first, rest) = input.split
            for (folder, body) in [(first ?? "/DCIM", rest), ("/", input.text), ("/DCIM/100__TSB/", input.text)] {
                let (entries, skipped) = FlashAirListing.parse(body, folder: folder)
                #expect(skipped >= 0)
                let prefix = RemotePath.normalize(folder, keepingServerRoot: false)
                for entry in entries {
                    #expect(!entry.name.isEmpty && !entry.name.contains("/"), "\(input): name \(entry.name)")
                    #expect(entry.name != "." && entry.name != "..", "\(input)")
                    #expect(entry.path == RemotePath.join(prefix, entry.name), "\(input): path \(entry.path)")
                    _ = entry.modified?.iso8601
                }
            }
            let text = input.text
            if let c = FlashAirReply.capacity(text) { #expect(c.sectorSize > 0 && c.freeBytes >= 0, "\(input)") }
            if let n = FlashAirReply.fileCount(text) { #expect(n >= 0, "\(input)") }
            _ = FlashAirReply.updated(text)
            _ = FlashAirReply.lastWriteMilliseconds(text)
            if let q = FlashAirReply.timeZoneQuarterHours(text) { #expect((-56...56).contains(q), "\(input)") }
            if let t = FATDateTime(ftime: text) { #expect(FATDateTime(ftime: t.ftime) == t, "\(input)") }
        }
    }

    @Test func ftpListings() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        for input in Self.inputs {
            let (first, body) = input.split
            let folder = first ?? "/pub"
            let prefix = FTPListingParser.folderPrefix(folder)
            let list = FTPListingParser.parseLIST(body, folder: folder, now: now)
            let mlsd = FTPListingParser.parseMLSD(body, folder: folder)
            for entry in list.entries + mlsd.entries {
                #expect(!entry.name.isEmpty, "\(input)")
                #expect(!entry.name.contains("/") && !entry.name.contains("\0"), "\(input): name \(entry.name)")
                #expect(entry.name != "." && entry.name != "..", "\(input)")
                #expect(entry.path == prefix + entry.name, "\(input): path \(entry.path)")
                #expect(entry.size.map { $0 >= 0 } ?? true, "\(input)")
                _ = entry.modified?.date(floatingIn: .gmt)
            }
            for line in body.split(separator: "\n").prefix(8) {
                _ = FTPListingParser.parseLISTLine(line, folder: folder, now: now)
                if let entry = FTPListingParser.parseMLSDLine(line, folder: folder) {
                    let parts = entry.path.split(separator: "/")
                    #expect(
                        entry.path.utf8.first == UInt8(ascii: "/") && !parts.contains("..") && !parts.contains("."),
                        "\(input)")
                }
            }
        }
    }

    @Test func webDAVReplies() {
        for input in Self.inputs {
            if let reply = try? WebDAVMultistatus.parse(input.bytes) {
                for r in reply.responses {
                    #expect(r.path.utf8.first == UInt8(ascii: "/") && !r.path.contains("\0"), "\(input): \(r.path)")
                    #expect(r.size.map { $0 >= 0 } ?? true, "\(input)")
                }
            }
            _ = WebDAVMultistatus.errorText(input.bytes)
        }
    }

    @Test func urls() {
        for input in Self.inputs {
            let text = input.text
            _ = RemoteURL.redact(text)
            guard let url = try? RemoteURL(parsing: text) else { continue }
            #expect(url.path.utf8.first == UInt8(ascii: "/"), "\(input)")
            if let port = url.port { #expect((1...65535).contains(port), "\(input)") }
            if url.scheme != .file {
                #expect(!url.host.isEmpty && !url.path.contains("\0"), "\(input)")
                let again = try? RemoteURL(parsing: url.redacted)
                #expect(again?.host == url.host && again?.path == url.path && again?.port == url.port, "\(input)")
            }
            if let password = url.password, !password.isEmpty, let user = url.user,
                !(url.query ?? "").contains(password)
            {
                #expect(!url.redacted.contains(user + ":" + password + "@"), "\(input): password shown")
            }
        }
    }

    @Test func httpResponseHeaders() {
        for input in Self.inputs {
            var headers = FerryKit.HTTPHeaders()
            for line in input.bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
                (Array(line) + [0x0A]).withUnsafeBytes { headers.consume(line: $0) }
            }
            for value in [input.text, headers["content-range"] ?? ""] {
                if let range = ContentRange(value) {
                    #expect(range.start <= range.end && range.end < (range.total ?? .max), "\(input)")
                }
            }
            for value in [input.text, headers["content-disposition"] ?? ""] {
                if let name = ContentDisposition.filename(value) {
                    #expect(!name.isEmpty && name != "." && name != "..", "\(input)")
                    #expect(!name.contains("/") && !name.contains("\\"), "\(input): \(name)")
                    #expect(!name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(input)")
                }
            }
        }
    }

    @Test func exifThumbnails() {
        for input in Self.inputs {
            guard let thumbnail = EXIFThumbnail.extract(fromJPEG: input.bytes) else { continue }
            #expect(thumbnail.jpeg.starts(with: [0xFF, 0xD8]) && thumbnail.jpeg.count <= input.bytes.count, "\(input)")
            if let o = thumbnail.orientation { #expect((1...8).contains(o), "\(input)") }
        }
    }

    @Test func captureDatesAndOrientations() {
        for input in Self.inputs {
            if let o = ExifOrientation.read(from: input.bytes) { #expect((1...8).contains(o), "\(input)") }
            guard let date = CaptureDate.read(from: input.bytes) else { continue }
            #expect(date.local.zone == .floating && (0..<1_000_000_000).contains(date.nanoseconds), "\(input)")
            if let offset = date.utcOffsetSeconds { #expect(abs(offset) <= 18 * 3600, "\(input)") }
            _ = date.description
        }
        // The seeds' shapes: little- and big-endian JPEG, raw files, a loop, impossible dates.
        let seeds = Dictionary(
            uniqueKeysWithValues: Self.inputs.filter { $0.target == "CaptureDate" }.map { ($0.name, $0.bytes) })
        #expect(seeds["seed-00"].flatMap(CaptureDate.read(from:))?.description == "2024-06-01T23:45:12.25+02:00")
        #expect(seeds["seed-01"].flatMap(CaptureDate.read(from:))?.utcOffsetSeconds == -19_800)
        #expect(seeds["seed-02"].flatMap(CaptureDate.read(from:))?.nanoseconds == 123_456_789)
        #expect(seeds["seed-03"].flatMap(CaptureDate.read(from:)) != nil, "a looping IFD0 still has its Exif IFD")
        #expect(seeds["seed-04"].flatMap(CaptureDate.read(from:)) == nil)
        let impossible = seeds["seed-05"].flatMap(CaptureDate.read(from:))
        #expect(impossible == nil)
        #expect(seeds["seed-00"].flatMap(ExifOrientation.read(from:)) == 6)
    }

    /// `HEIF.scan` on every input, as `Fuzz/Targets/HEIFMeta` checks it: whole, and as the first
    /// bytes of a larger file; whatever it finds lies inside the file and inside its limits.
    @Test func heifMeta() {
        var found = 0
        for input in Self.inputs {
            let b = input.bytes
            for fileSize in [b.count, b.count + 1_000_000] {
                switch HEIF.scan(b, fileSize: fileSize) {
                case .found(let layout):
                    found += 1
                    #expect(layout.metaEnd <= b.count && layout.metaEnd <= HEIF.maxMetaLength, "\(input)")
                    #expect(layout.thumbnails.count <= HEIF.maxThumbnails, "\(input)")
                    for t in layout.thumbnails {
                        #expect(t.width > 0 && t.height > 0 && t.item != layout.primary, "\(input): \(t)")
                        #expect(t.extents.count <= HEIF.maxExtents, "\(input)")
                        var end = 0
                        for e in t.extents {
                            #expect(e.lowerBound >= end && e.lowerBound < e.upperBound && e.upperBound <= fileSize)
                            end = e.upperBound
                        }
                    }
                case .needs(let n):
                    #expect(n > b.count && n <= min(fileSize, HEIF.maxMetaLength), "\(input): needs \(n)")
                case .elsewhere, .invalid: break
                }
            }
        }
        // The corpus holds HEIF files the scan reads (the real heif-enc one among them).
        #expect(found > 0)
    }

    /// The CR3 box walker and `CR3.scan` on every input, as `Fuzz/Targets/CR3Boxes` checks them,
    /// and the seeds' shapes: a CR3 read whole, with a 64-bit moov size, cut short, without CMT2.
    @Test func cr3Boxes() {
        for input in Self.inputs {
            let b = input.bytes
            var at = 0
            for box in ISOBMFF.boxes(in: b, from: 0, to: b.count) {
                #expect(box.offset == at && box.payload <= box.end && box.end <= b.count, "\(input): \(box)")
                at = box.end
                if CR3.isPreviewBox(box), let jpeg = CR3.previewJPEG(in: Array(b[box.offset...]), box: box) {
                    #expect(box.payload <= jpeg.lowerBound && jpeg.upperBound <= box.end, "\(input)")
                }
            }
            switch CR3.scan(b, fileSize: b.count) {
            case .found(let m):
                for r in [m.ifd0, m.exif, m.thumbnail].compactMap({ $0 }) {
                    #expect(r.upperBound <= b.count, "\(input)")
                }
            case .needs(let n): #expect(n > b.count, "\(input)")
            case .invalid: break
            }
            // As a prefix of a larger file: asks for more, never past the limit.
            if case .needs(let n) = CR3.scan(b, fileSize: b.count + 1_000_000) {
                #expect(n > b.count && n <= CR3.maxMetadataLength, "\(input): needs \(n)")
            }
        }
        let seeds = Dictionary(
            uniqueKeysWithValues: Self.inputs.filter { $0.target == "CR3Boxes" }.map { ($0.name, $0.bytes) })
        #expect(seeds.count >= 6)
        #expect(seeds["seed-00"].flatMap(CaptureDate.read(from:))?.description == "2024-06-01T23:45:12+02:00")
        #expect(seeds["seed-00"].flatMap(ExifOrientation.read(from:)) == 6)
        #expect(seeds["seed-01"].flatMap(ExifOrientation.read(from:)) == 3, "a 64-bit moov size")
        if let cut = seeds["seed-03"], case .needs(let n) = CR3.scan(cut, fileSize: 10_000) {
            #expect(n > cut.count && n < 10_000, "cut short: read to the Canon box's end, \(n)")
        } else {
            Issue.record("seed-03: a cut CR3 does not ask for more")
        }
        #expect(seeds["seed-04"].flatMap(CaptureDate.read(from:)) == nil, "no CMT2")
        #expect(seeds["seed-05"].map { CR3.scan($0, fileSize: $0.count) } == .invalid, "moov past the end")
        if let whole = seeds["seed-00"], case .found(let m) = CR3.scan(whole, fileSize: whole.count) {
            #expect(
                m.thumbnail.map { Array(whole[$0]) } == [0xFF, 0xD8, 0xFF, 0xFE, 0, 7] + Array("thumb".utf8) + [
                    0xFF, 0xD9,
                ])
            let preview = ISOBMFF.boxes(in: whole, from: 0, to: whole.count).first(where: CR3.isPreviewBox)
            #expect(preview.flatMap { CR3.previewJPEG(in: Array(whole[$0.offset...]), box: $0) } != nil)
        } else {
            Issue.record("seed-00 is not read as a CR3")
        }
    }

    @Test func serverRequestParsing() {
        let sizes: [Int64] = [0, 1, 100, .max]
        for input in Self.inputs {
            let text = input.text
            let request = HTTPRequest(method: "GET", target: text)
            #expect(request.rawPath + (request.rawQuery.map { "?" + $0 } ?? "") == text, "\(input)")
            _ = request.query("op")
            for size in sizes {
                if case .partial(let lower, let upper) = ByteRange.decide(range: text, size: size) {
                    #expect(0 <= lower && lower <= upper && upper < size, "\(input): \(lower)-\(upper)/\(size)")
                }
            }
            _ = ByteRange.ifRangeMatches(text, etag: "\"1-2-3\"", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT")
            let parameters = HeaderParameters(parsing: text)
            #expect(parameters.value == parameters.value.lowercased(), "\(input)")
            _ = MultipartParser.boundary(fromContentType: text)
            _ = MultipartParser.parseHeaders(input.bytes)
        }
    }

    @Test func multipartBodiesWholeAndInPieces() throws {
        let dir = try TempDir(prefix: "replay-multipart")
        let limits = MultipartParser.Limits(maxPartHeaderSize: 64, maxFieldSize: 128, maxParts: 6)
        func parse(_ body: ArraySlice<UInt8>, piece: Int) -> String {
            guard let parser = try? MultipartParser(boundary: "b0undary", directory: dir.path, limits: limits) else {
                return "no parser"
            }
            do throws(MultipartError) {
                var offset = body.startIndex
                while offset < body.endIndex {
                    let end = min(offset + piece, body.endIndex)
                    try parser.feed(Data(body[offset..<end]))
                    offset = end
                }
                return try parser.finish().map { part in
                    var bytes = Data()
                    switch part.content {
                    case .data(let data): bytes = data
                    case .file(let path, _):
                        bytes = FileManager.default.contents(atPath: path) ?? Data()
                        unlink(path)
                    }
                    return "\(part.name ?? "-")|\(part.filename ?? "-")|\(Array(bytes))"
                }.joined(separator: "\n")
            } catch {
                return "failed: \(error.code)"
            }
        }
        for input in Self.inputs where !input.bytes.isEmpty {
            let body = input.bytes.dropFirst()
            let whole = parse(body, piece: .max / 2)
            for piece in [1, 2, 3, 7, 64] {
                #expect(parse(body, piece: piece) == whole, "\(input) in pieces of \(piece)")
            }
            #expect(
                (try? FileManager.default.contentsOfDirectory(atPath: dir.path))?.isEmpty == true, "\(input) left files"
            )
        }
    }

    @Test func cardRequestsStayInsideTheCard() throws {
        let base = try TempDir(prefix: "replay-card")
        let secret = "REPLAY-OUTSIDE-SECRET"
        let fm = FileManager.default
        let card = base.file("card")
        try fm.createDirectory(atPath: base.file("outside/victims"), withIntermediateDirectories: true)
        try secret.write(toFile: base.file("outside/secret.txt"), atomically: true, encoding: .utf8)
        func makeCard() throws {
            try? fm.removeItem(atPath: card)
            try fm.createDirectory(atPath: card + "/DCIM/100__TSB", withIntermediateDirectories: true)
            try Data(SampleJPEG.withThumbnail()).write(to: URL(fileURLWithPath: card + "/DCIM/100__TSB/A.JPG"))
            try "inside too".write(toFile: card + "/DCIM/100__TSB/B.TXT", atomically: true, encoding: .utf8)
            symlink("../outside", card + "/link-out")
            symlink("../outside/secret.txt", card + "/link-file")
            symlink(base.file("outside"), card + "/DCIM/abs-out")
            symlink("100__TSB", card + "/DCIM/inside")
            symlink("nowhere", card + "/dangling")
        }
        try makeCard()
        let realCard = CardRoot.realPath(card)!
        for input in Self.inputs {
            let (first, rest) = input.split
            let target = first ?? rest
            guard !URLTarget.split(target).path.contains("%00") else { continue }  // 400 before any handler
            var headers: FerryServer.HTTPHeaders = [:]
            if first != nil { headers.add(name: "Range", value: rest) }
            let handler = CardHandler(root: try CardRoot(card), configuration: FlashAirCardConfiguration())
            let response = handler.handle(HTTPRequest(method: "GET", target: target, headers: headers))
            #expect((100...599).contains(response.status), "\(input)")
            switch response.body {
            case .file(let path, _):
                #expect(
                    (CardRoot.realPath(path) ?? path).utf8.starts(with: (realCard + "/").utf8),
                    "\(input) served \(path)")
            case .data(let data):
                #expect(!String(decoding: data, as: UTF8.self).contains(secret), "\(input) leaked")
            case .text(let text):
                #expect(!text.contains(secret) && !text.contains("secret.txt") && !text.contains("victims"), "\(input)")
            case .empty:
                break
            }
            #expect(try fm.contentsOfDirectory(atPath: base.path).sorted() == ["card", "outside"], "\(input)")
            #expect(try fm.contentsOfDirectory(atPath: base.file("outside")).sorted() == ["secret.txt", "victims"])
            #expect(try fm.contentsOfDirectory(atPath: base.file("outside/victims")).isEmpty, "\(input)")
            if target.contains("upload.cgi") { try makeCard() }
        }
    }

    @Test func webPathsAndAccess() {
        let token = "0123456789abcdef0123456789abcdef"
        for input in Self.inputs {
            let text = input.text
            if let clean = WebPath.clean(text) {
                #expect(
                    clean.utf8.first == UInt8(ascii: "/") && !clean.contains("//") && WebPath.clean(clean) == clean,
                    "\(input)")
                for part in clean.split(separator: "/") {
                    #expect(part != "." && part != ".." && WebPath.isValidName(String(part)), "\(input)")
                }
            }
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let first = lines.first.map(String.init) ?? ""
            var headers = FerryServer.HTTPHeaders()
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers.add(
                    name: String(line[..<colon]),
                    value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            let parts = first.split(separator: " ", maxSplits: 1)
            let request = HTTPRequest(
                method: parts.count == 2 ? String(parts[0]) : "GET", target: String(parts.last ?? "/"),
                headers: headers)
            for guardToken in [nil, token] {
                let access = AccessGuard(token: guardToken)
                if let redirect = access.tokenRedirect(request), redirect.status == 303 {
                    let location = redirect.headers["Location"] ?? ""
                    #expect(
                        location.utf8.first == UInt8(ascii: "/") && !location.utf8.starts(with: "//".utf8),
                        "\(input): \(location)")
                }
                if access.check(request, needsToken: true) == nil {
                    if guardToken == nil {
                        #expect(AccessGuard.isLoopbackHost(headers["Host"] ?? ""), "\(input)")
                    } else {
                        let offered =
                            headers["X-Ferry-Token"] ?? AccessGuard.cookie(AccessGuard.cookieName, in: headers)
                        #expect(offered == token, "\(input)")
                    }
                }
            }
        }
    }

    @Test func jpegDecodesAreBounded() {
        for input in Self.inputs where input.bytes.starts(with: [0xFF, 0xD8]) {
            guard let decoded = try? JPEGCodec.decode(data: input.bytes, minSide: 256) else { continue }
            #expect(decoded.image.pixels.count == decoded.image.width * decoded.image.height * 3, "\(input)")
            #expect(decoded.image.width * decoded.image.height <= 50_000_000, "\(input)")
        }
    }

    @Test func webRequestsStayInsideTheRoot() async throws {
        let base = try TempDir(prefix: "replay-web")
        let secret = "REPLAY-WEB-SECRET"
        let fm = FileManager.default
        let root = base.file("root")
        try fm.createDirectory(atPath: base.file("outside/victims"), withIntermediateDirectories: true)
        try secret.write(toFile: base.file("outside/secret.jpg"), atomically: true, encoding: .utf8)
        func makeRoot() throws {
            try? fm.removeItem(atPath: root)
            try fm.createDirectory(atPath: root + "/DCIM/100FERRY", withIntermediateDirectories: true)
            let jpeg = try JPEGCodec.encode(RGBImage(width: 16, height: 16, pixels: .init(repeating: 0x80, count: 768)))
            try Data(jpeg).write(to: URL(fileURLWithPath: root + "/DCIM/100FERRY/A.JPG"))
            try "inside".write(toFile: root + "/DCIM/100FERRY/B.TXT", atomically: true, encoding: .utf8)
            symlink("../outside", root + "/link-out")
            symlink("../outside/secret.jpg", root + "/link-file.jpg")
            symlink(base.file("outside"), root + "/DCIM/abs-out")
            symlink("100FERRY", root + "/DCIM/inside")
            symlink("nowhere", root + "/dangling")
        }
        try makeRoot()
        var configuration = WebConfiguration(source: try RemoteURL(parsing: "file://" + root))
        configuration.cacheDirectory = base.file("cache")
        let api = try WebAPI(configuration: configuration)
        defer { api.cleanUp() }
        let realRoot = try #require(WebSource.realPath(root))
        for input in Self.inputs where input.target.hasPrefix("Web") || input.target == "CardRequest" {
            let text = input.text
            let firstLine = text.prefix { $0 != "\n" }
            let body = text.dropFirst(firstLine.count + 1)
            let parts = firstLine.split(separator: " ", maxSplits: 1)
            let method = parts.count == 2 ? String(parts[0]) : "GET"
            let target = String(parts.last ?? "/")
            guard !URLTarget.split(target).path.contains("%00") else { continue }
            let request = HTTPRequest(
                method: method, target: target,
                headers: ["Host": "127.0.0.1:8080", "Origin": "http://127.0.0.1:8080"],
                body: body.isEmpty ? .none : .data(Data(body.utf8)))
            let response = await api.handle(request)
            switch response.body {
            case .file(let path, _):
                let real = WebSource.realPath(path) ?? path
                #expect(
                    real.utf8.starts(with: (realRoot + "/").utf8)
                        || real.utf8.starts(with: (api.assets.folder + "/").utf8),
                    "\(input): \(path)")
            case .data(let data):
                let text = String(decoding: data, as: UTF8.self)
                #expect(!text.contains(secret), "\(input) leaked")
                if (200..<300).contains(response.status) {
                    #expect(!text.contains("secret.jpg") && !text.contains("victims"), "\(input): \(text)")
                }
            case .text(let text):
                #expect(!text.contains(secret), "\(input) leaked")
            case .empty:
                break
            }
            #expect(try fm.contentsOfDirectory(atPath: base.file("outside")).sorted() == ["secret.jpg", "victims"])
            #expect(try fm.contentsOfDirectory(atPath: base.file("outside/victims")).isEmpty, "\(input)")
            if method != "GET" { try makeRoot() }
        }
    }

    @Test func ftpReplies() {
        let password = "Replay-S3cret-Pw"
        for input in Self.inputs {
            for piece in [1, 7, Int.max / 2] {
                var log = FTPReplyLog()
                var offset = 0
                var sent = 0
                while offset < input.bytes.count {
                    let end = min(input.bytes.count, offset + piece)
                    input.bytes[offset..<end].withUnsafeBytes { log.consumeIncoming($0) }
                    offset = end
                    log.consumeOutgoing(sent % 2 == 0 ? "PASS " + password : "LIST /pub")
                    sent += 1
                }
                for reply in log.replies {
                    #expect((0...999).contains(reply.code), "\(input)")
                    #expect(!(reply.command ?? "").contains(password), "\(input): PASS argument kept")
                    _ = FerryError.ftp(reply, operation: "list", target: "/pub")
                }
                _ = log.failure
            }
            for line in input.text.split(separator: "\n").prefix(4) {
                let path = String(line)
                #expect(RemotePath.normalize(path).utf8.first == UInt8(ascii: "/"), "\(input)")
                if (try? FTPEndpoint.validate(path, operation: "list", display: path)) != nil {
                    let argument = FTPEndpoint.serverPath(path, entryPath: "/home/ferry")
                    #expect(!argument.utf8.contains(0x0D) && !argument.utf8.contains(0x0A), "\(input)")
                }
            }
        }
    }
}
