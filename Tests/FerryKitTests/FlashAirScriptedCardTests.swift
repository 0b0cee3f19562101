import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryKit

/// A scripted card: fixed awkward listings from docs/FLASHAIR.md, files in memory, and
/// upload.cgi that records what it was told. One connection at a time (the
/// scripted server serves connections one after another), and a FaultProxy in
/// front to count how many the client opened at once.
private final class ScriptedCard: Sendable {
    struct State {
        /// Listing lines per folder (without the header).
        var listings: [String: [String]] = [:]
        var files: [String: [UInt8]] = [:]
        var uploadDirectory = "/"
        var ftime: String?
        var changed = true
        var uploadsEnabled = true
        /// When false, UPDIR answers SUCCESS but POST stores nothing (a bad path on a real card).
        var storesUploads = true
        var busyPaths: Set<String> = []
        var silentPaths: Set<String> = []
    }
    /// The card's state, shared with the server thread.
    final class Store: Sendable {
        let lock = Mutex(State())
    }
    let store = Store()
    let server: ScriptedHTTPServer
    let proxy: FaultProxy

    init() throws {
        let store = self.store
        server = try ScriptedHTTPServer(idleTimeout: .seconds(3)) { request in
            ScriptedCard.answer(request, store)
        }
        proxy = try FaultProxy(upstreamPort: server.port)
        with { s in
            s.listings["/"] = [
                ",DCIM,0,16,9944,129", ",SD_WLAN,0,16,17071,28040", ",GUPIXINF,0,16,17071,28040",
                ",My,Folder,0,16,17071,28040", ",.hidden,0,18,17071,28040",
            ]
            s.listings["/DCIM"] = ["/DCIM,100__TSB,0,16,9944,129", "/DCIM,0126_1.jpg,70408,32,17071,28040"]
            s.listings["/DCIM/100__TSB"] = [
                "/DCIM/100__TSB,IMG,0001.JPG,5,32,17071,28040",  // comma in the name
                "/DCIM/100__TSB,BAD_MONTH.JPG,1,32,\(0 << 9 | 13 << 5 | 1),0",  // month 13
                "/DCIM/100__TSB,BAD_DAY.JPG,1,32,\(10 << 9 | 1 << 5 | 0),0",  // day 0
                "/DCIM/100__TSB,BIG.MOV,5000000000,32,17071,28040",  // above 4 GiB
                "/DCIM/100__TSB,写真 ü.jpg,3,32,17071,28040",  // non-ASCII
                "/DCIM/100__TSB,FA000001.JPG,10,32,17071,28040",  // the control image
            ]
            s.listings["/My,Folder"] = ["/My,Folder,a,b.txt,4,33,17071,28040", "/My,Folder,Sub,0,16,17071,28040"]
            s.listings["/My,Folder/Sub"] = []
            s.files["/DCIM/100__TSB/IMG,0001.JPG"] = Array("hello".utf8)
            s.files["/DCIM/0126_1.jpg"] = Array(TestData.bytes(70408))
        }
    }

    /// `flashair://127.0.0.1:PROXY/`
    var url: RemoteURL { try! RemoteURL(parsing: "flashair://127.0.0.1:\(proxy.port)/") }

    func fileSystem(tries: Int = 3) -> FlashAirFileSystem {
        var policy = FlashAirFileSystem.RequestPolicy()
        policy.tries = tries
        policy.retryDelay = .milliseconds(50)
        policy.stallTimeout = .seconds(1)
        policy.connectTimeout = .seconds(2)
        return FlashAirFileSystem(url: url, policy: policy)
    }

    /// Runs `body` on the state under its lock.
    func with<T>(_ body: (inout State) -> T) -> T { store.lock.withLock { body(&$0) } }

    static func answer(_ r: ScriptedRequest, _ store: Store) -> ScriptedResponse {
        store.lock.withLock { s -> ScriptedResponse in
            let path = r.path.removingPercentEncoding ?? r.path
            if s.silentPaths.contains(path) { return .silence(for: .seconds(3)) }
            if s.busyPaths.contains(path) { return .text("busy", status: 503) }
            switch path {
            case "/command.cgi":
                switch r.parameter("op") {
                case "100":
                    let lines = s.listings[r.parameter("DIR") ?? ""] ?? []
                    return .text((["WLANSD_FILELIST"] + lines).map { $0 + "\r\n" }.joined())
                case "101":
                    let lines = s.listings[r.parameter("DIR") ?? ""] ?? []
                    return .text("\(lines.filter { !$0.hasSuffix(",18,17071,28040") }.count)")
                case "102":
                    defer { s.changed = false }
                    return .text(s.changed ? "1" : "0")
                case "108": return .text("F19BAW3AW2.00.03")
                case "109": return .text("/DCIM/100__TSB/FA000001.JPG")
                case "121": return .text("12345")
                default: return .text("", status: 400)
                }
            case "/upload.cgi":
                guard s.uploadsEnabled else { return .text("Not Found", status: 404) }
                if r.method == "POST" {
                    guard let part = Multipart.firstFile(r), s.storesUploads else { return .text("SUCCESS") }
                    let dir = s.uploadDirectory == "/" ? "" : s.uploadDirectory
                    s.files[dir + "/" + part.name] = part.data
                    s.listings[s.uploadDirectory, default: []].removeAll { $0.hasPrefix("\(dir),\(part.name),") }
                    s.listings[s.uploadDirectory, default: []].append(
                        "\(dir),\(part.name),\(part.data.count),32,17071,28040")
                    s.changed = true
                    return .text("SUCCESS")
                }
                if let dir = r.parameter("UPDIR") { s.uploadDirectory = dir }
                if let t = r.parameter("FTIME") { s.ftime = t }
                if let del = r.parameter("DEL") {
                    guard s.files.removeValue(forKey: del) != nil else { return .text("ERROR") }
                    let (parent, name) = RemotePath.split(del)
                    let dir = parent == "/" ? "" : parent
                    s.listings[parent]?.removeAll { $0.hasPrefix("\(dir),\(name),") }
                }
                return .text("SUCCESS")
            case "/thumbnail.cgi":
                return .text("no thumbnail", status: 404)
            default:
                if let data = s.files[path] {
                    return ScriptedResponse(status: 200, headers: ["Content-Type": "image/jpeg"], body: data)
                }
                return .text("Not Found", status: 404)
            }
        }
    }
}

/// The first file part of a multipart body: its quoted filename and bytes.
enum Multipart {
    static func firstFile(_ r: ScriptedRequest) -> (field: String, name: String, data: [UInt8])? {
        guard let type = r.headers["content-type"], let b = type.range(of: "boundary=") else { return nil }
        let boundary = Array(("--" + type[b.upperBound...].trimmingCharacters(in: .init(charactersIn: "\""))).utf8)
        let body = r.body
        guard let start = find(boundary, in: body, from: 0) else { return nil }
        guard let headEnd = find(Array("\r\n\r\n".utf8), in: body, from: start) else { return nil }
        let head = String(decoding: body[start..<headEnd], as: UTF8.self)
        guard let end = find(Array("\r\n".utf8) + boundary, in: body, from: headEnd + 4) else { return nil }
        func value(_ key: String) -> String? {
            guard let k = head.range(of: key + "=\"") else { return nil }
            let rest = head[k.upperBound...]
            return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
        }
        guard let filename = value("filename") else { return nil }
        return (value("name") ?? "", filename, Array(body[(headEnd + 4)..<end]))
    }

    static func find(_ needle: [UInt8], in hay: [UInt8], from: Int) -> Int? {
        guard hay.count >= needle.count, from <= hay.count - needle.count else { return nil }
        for i in from...(hay.count - needle.count)
        where hay[i] == needle[0] && Array(hay[i..<(i + needle.count)]) == needle {
            return i
        }
        return nil
    }
}

@Suite(.serialized)
struct FlashAirScriptedCardTests {
    private let card: ScriptedCard
    let out: TempDir

    init() throws {
        card = try ScriptedCard()
        out = try TempDir(prefix: "fa-scripted")
    }

    @Test func listsTheDocumentedExample() async throws {
        let entries = try await card.fileSystem().list("/DCIM")
        #expect(entries.map(\.name) == ["100__TSB", "0126_1.jpg"])
        #expect(entries[0].kind == .directory)
        #expect(entries[0].modified?.iso8601 == "1999-06-24T00:04:02")
        #expect(entries[1].size == 70408)
        #expect(entries[1].modified?.iso8601 == "2013-05-15T13:44:16")
        #expect(entries[1].path == "/DCIM/0126_1.jpg")
    }

    @Test func awkwardEntriesAreAllKept() async throws {
        let entries = try await card.fileSystem().list("/DCIM/100__TSB/")
        let byName = Dictionary(uniqueKeysWithValues: entries.map { ($0.name, $0) })
        #expect(entries.count == 6)
        #expect(byName["IMG,0001.JPG"]?.size == 5)
        #expect(byName["IMG,0001.JPG"]?.path == "/DCIM/100__TSB/IMG,0001.JPG")
        #expect(byName["BAD_MONTH.JPG"] != nil && byName["BAD_MONTH.JPG"]?.modified == nil)
        #expect(byName["BAD_DAY.JPG"] != nil && byName["BAD_DAY.JPG"]?.modified == nil)
        #expect(byName["BIG.MOV"]?.size == 5_000_000_000)
        #expect(byName["写真 ü.jpg"]?.size == 3)
        // The control image (op=109) is a system entry: hidden by default.
        #expect(byName["FA000001.JPG"]?.isHidden == true)
        #expect(byName["IMG,0001.JPG"]?.isHidden == false)
        // DIR went out without the trailing slash.
        let dirs = card.server.requests.compactMap { $0.parameter("DIR") }
        #expect(dirs.contains("/DCIM/100__TSB"))
        #expect(!dirs.contains { $0.count > 1 && $0.hasSuffix("/") })
    }

    @Test func rootListingWithEmptyFolderFieldAndSystemEntries() async throws {
        let entries = try await card.fileSystem().list("/")
        #expect(entries.map(\.name) == ["DCIM", "SD_WLAN", "GUPIXINF", "My,Folder", ".hidden"])
        #expect(entries.map(\.path) == ["/DCIM", "/SD_WLAN", "/GUPIXINF", "/My,Folder", "/.hidden"])
        #expect(entries.filter(\.isHidden).map(\.name) == ["SD_WLAN", "GUPIXINF", ".hidden"])
        let filter = FlashAirEntryFilter(controlImage: "/DCIM/100__TSB/FA000001.JPG")
        #expect(filter.visible(entries).map(\.name) == ["DCIM", "My,Folder"])
    }

    @Test func commaInFolderName() async throws {
        let fs = card.fileSystem()
        let entries = try await fs.list("/My,Folder")
        #expect(entries.map(\.name) == ["a,b.txt", "Sub"])
        #expect(entries[0].isReadOnly)
        #expect(entries[1].path == "/My,Folder/Sub")
        // The comma went out encoded.
        #expect(card.server.requests.contains { $0.query?.contains("DIR=/My%2CFolder") == true })
        #expect(try await fs.list("/My,Folder/Sub").isEmpty)
        let sub = try await fs.stat("/My,Folder/Sub")
        #expect(sub.isDirectory)
    }

    @Test func missingFolderAndFileErrors() async throws {
        let fs = card.fileSystem()
        await #expect(throws: FerryError.self) { try await fs.list("/NOPE") }
        do {
            _ = try await fs.list("/NOPE")
        } catch let e {
            #expect(e.code == .notFound)
        }
        do {
            _ = try await fs.stat("/DCIM/none.jpg")
            Issue.record("stat of a missing file succeeded")
        } catch let e {
            #expect(e.code == .notFound)
        }
        let file = try await fs.stat("/DCIM/0126_1.JPG")  // FAT names ignore case
        #expect(file.size == 70408)
    }

    @Test func countFlagAndLastWrite() async throws {
        let fs = card.fileSystem()
        #expect(try await fs.count("/") == 4)  // the hidden entry is not counted
        #expect(try await fs.count("/DCIM") == 2)
        #expect(try await fs.hasChanged() == true)
        #expect(try await fs.hasChanged() == false)
        #expect(try await fs.lastWriteTime() == .milliseconds(12345))
    }

    @Test func downloadsByPlainPath() async throws {
        let fs = card.fileSystem()
        let dest = out.file("a.jpg")
        let r = try await fs.download("/DCIM/100__TSB/IMG,0001.JPG", to: dest, options: .init()).result
        #expect(r.size == 5)
        #expect(try String(contentsOfFile: dest, encoding: .utf8) == "hello")
        #expect(card.server.requests.contains { $0.path == "/DCIM/100__TSB/IMG%2C0001.JPG" })
    }

    @Test func oneConnectionAtATimeUnderParallelUse() async throws {
        let fs = card.fileSystem()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<4 {
                group.addTask {
                    _ = try await fs.download("/DCIM/0126_1.jpg", to: out.file("p\(i).jpg"), options: .init()).result
                }
                group.addTask { _ = try await fs.list("/DCIM/100__TSB") }
                group.addTask { _ = try await fs.count("/DCIM") }
            }
            try await group.waitForAll()
        }
        #expect(card.proxy.maxConcurrentConnections == 1)
        #expect(card.server.requests.count >= 12)
    }

    @Test func busyCardIsReportedAsNotAnswering() async throws {
        card.with { $0.busyPaths = ["/command.cgi", "/DCIM/0126_1.jpg"] }
        let fs = card.fileSystem(tries: 3)
        do {
            _ = try await fs.list("/DCIM")
            Issue.record("listing a busy card succeeded")
        } catch let e {
            #expect(e.code == .notAnswering)
            #expect(e.description.contains("card not answering after 3 tries"))
            #expect(e.description.contains("503"))
        }
        var options = DownloadOptions()
        options.maxRetries = 2
        options.retryDelay = .milliseconds(20)
        do throws(FerryError) {
            _ = try await fs.download("/DCIM/0126_1.jpg", to: out.file("busy.jpg"), options: options).result
            Issue.record("downloading from a busy card succeeded")
        } catch {
            #expect(error.code == .notAnswering)
            #expect(error.description.contains("card not answering after 3 tries"))
        }
    }

    @Test func silentCardTimesOutAndIsReported() async throws {
        card.with { $0.silentPaths = ["/command.cgi"] }
        let fs = card.fileSystem(tries: 2)
        let started = ContinuousClock.now
        do {
            _ = try await fs.count("/DCIM")
            Issue.record("a silent card answered")
        } catch let e {
            #expect(e.code == .notAnswering)
            #expect(e.description.contains("card not answering after 2 tries"))
        }
        #expect(ContinuousClock.now - started < .seconds(15))
    }

    @Test func uploadSendsTheDocumentedSequence() async throws {
        let fs = card.fileSystem()
        let local = out.file("new photo.jpg")
        let data = TestData.bytes(3000)
        try data.write(to: URL(fileURLWithPath: local))
        // 2021-03-04 05:06:08 local time.
        var c = DateComponents()
        (c.year, c.month, c.day, c.hour, c.minute, c.second) = (2021, 3, 4, 5, 6, 8)
        let mtime = Calendar(identifier: .gregorian).date(from: c)!
        try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: local)

        let r = try await fs.upload(local, to: "/DCIM/", options: .init()).result
        #expect(r.size == 3000)
        #expect(card.with { $0.files["/DCIM/new photo.jpg"] } == Array(data))
        let uploads = card.server.requests.filter { $0.path == "/upload.cgi" }
        #expect(uploads.map { $0.method } == ["GET", "GET", "GET", "POST"])
        #expect(uploads[0].query == "WRITEPROTECT=ON")
        #expect(uploads[1].query == "UPDIR=/DCIM")
        let ftime = try #require(uploads[2].parameter("FTIME"))
        #expect(ftime.count == 10 && ftime.hasPrefix("0x"))
        let fat = try #require(FATDateTime(ftime: ftime))
        #expect(fat.timestamp?.iso8601 == "2021-03-04T05:06:08")
        let part = try #require(Multipart.firstFile(uploads[3]))
        #expect(part.field == "file")
        #expect(part.name == "new photo.jpg")
        // Verified by a listing afterwards.
        let last = card.server.requests.last { $0.path == "/command.cgi" }
        #expect(last?.parameter("op") == "100")

        // Exists now: fail, skip, overwrite.
        await #expect(throws: FerryError.self) { try await fs.upload(local, to: "/DCIM/", options: .init()).result }
        var skip = UploadOptions()
        skip.overwrite = .skip
        #expect(try await fs.upload(local, to: "/DCIM/new photo.jpg", options: skip).result.skipped)
    }

    @Test func uploadThatTheCardDidNotStoreFailsVerification() async throws {
        card.with { $0.storesUploads = false }
        let local = out.file("lost.jpg")
        try TestData.file(local, size: 100)
        do throws(FerryError) {
            _ = try await card.fileSystem().upload(local, to: "/DCIM/lost.jpg", options: .init()).result
            Issue.record("an upload the card dropped succeeded")
        } catch {
            #expect(error.code == .verificationFailed)
        }
    }

    @Test func uploadsDisabled() async throws {
        card.with { $0.uploadsEnabled = false }
        let local = out.file("x.jpg")
        try TestData.file(local, size: 10)
        let fs = card.fileSystem()
        do throws(FerryError) {
            _ = try await fs.upload(local, to: "/DCIM/x.jpg", options: .init()).result
            Issue.record("upload to a card with uploads disabled succeeded")
        } catch {
            #expect(error.code == .unsupportedOperation)
            #expect(error.description.contains("UPLOAD=1"))
        }
    }

    @Test func deleteSendsDELAlone() async throws {
        let fs = card.fileSystem()
        try await fs.delete("/DCIM/100__TSB/IMG,0001.JPG")
        let del = try #require(card.server.requests.last { $0.query?.hasPrefix("DEL=") == true })
        #expect(del.query == "DEL=/DCIM/100__TSB/IMG%2C0001.JPG")
        #expect(card.with { $0.files["/DCIM/100__TSB/IMG,0001.JPG"] } == nil)
        do {
            try await fs.delete("/DCIM/100__TSB")
            Issue.record("rm of a folder succeeded")
        } catch let e {
            #expect(e.code == .unsupportedOperation)
        }
    }

    @Test func renameIsUnsupportedAndThumbnailMissing() async throws {
        let fs = card.fileSystem()
        do {
            try await fs.rename("/DCIM/0126_1.jpg", to: "/DCIM/x.jpg")
            Issue.record("rename succeeded")
        } catch let e {
            #expect(e.code == .unsupportedOperation)
        }
        // The card answers 404 for a file without one: no thumbnail, no error.
        #expect(try await fs.thumbnail("/DCIM/0126_1.jpg") == nil)
    }

    @Test func infoProbesOperations() async throws {
        let info = try await card.fileSystem().info()
        #expect(info.firmware == "F19BAW3AW2.00.03")
        #expect(info.generation == "W-02")
        #expect(info.controlImage == "/DCIM/100__TSB/FA000001.JPG")
        #expect(info.lastWrite == .milliseconds(12345))
        #expect(info.supportedOperations == [108, 109, 121])
        #expect(info.unsupportedOperations.contains(140))
        #expect(info.capacity == nil)
        // op=102 is never probed: it would clear the flag for another poller.
        #expect(!card.server.requests.contains { $0.parameter("op") == "102" })
    }
}
