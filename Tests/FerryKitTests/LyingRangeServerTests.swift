import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// A server that lies about ranges is met the same way by a read into memory
/// (`data(at:range:)`, `HTTPMemoryRead`) and by a download resuming a `.part`
/// (`HTTPDownloadDecision`): both judge the answer with `HTTPRangeReply`. Where
/// the download starts over, the read refuses the bytes; where the download takes
/// them, the read does too. Each lie is scripted on 127.0.0.1.
@Suite(.serialized)
struct LyingRangeServerTests {
    /// How the server answers a request with `Range: bytes=START-...`.
    enum Lie: String, CaseIterable, Sendable {
        /// `200` and the whole file.
        case ignoresRange
        /// `206` and the whole file, labelled as such (`bytes 0-2999/3000`).
        case wrongStart
        /// `206` and the asked bytes, with no `Content-Range`.
        case noContentRange
        /// `206` with a multipart body (and, wrongly, a top-level `Content-Range`).
        case multipart
        /// `416` naming a size past the asked start.
        case refusesAnExistingRange
        /// `304` to a plain GET.
        case notModified
    }

    static let data = Array(TestData.bytes(3000, seed: 11))
    static let etag = "\"v1\""
    let out: TempDir
    let server: ScriptedHTTPServer

    init() throws {
        out = try TempDir(prefix: "lying-range")
        server = try ScriptedHTTPServer { request in
            let data = LyingRangeServerTests.data
            let whole = ScriptedResponse(headers: ["ETag": LyingRangeServerTests.etag], body: data)
            guard let range = request.headers["range"] else { return whole }
            let start = Int(range.dropFirst("bytes=".count).prefix { $0 != "-" })!
            let asked = Array(data[min(start, data.count)...])
            let tagged = ["ETag": LyingRangeServerTests.etag]
            switch Lie(rawValue: String(request.path.dropFirst().prefix { $0 != "/" })) {
            case .ignoresRange?:
                return whole
            case .wrongStart?:
                return ScriptedResponse(
                    status: 206, headers: tagged.merging(["Content-Range": "bytes 0-2999/3000"]) { $1 }, body: data)
            case .noContentRange?:
                return ScriptedResponse(status: 206, headers: tagged, body: asked)
            case .multipart?:
                var body = Array("--SEP\r\nContent-Range: bytes \(start)-2999/3000\r\n\r\n".utf8) + asked
                body += Array("\r\n--SEP--\r\n".utf8)
                return ScriptedResponse(
                    status: 206,
                    headers: tagged.merging([
                        "Content-Type": "multipart/byteranges; boundary=SEP",
                        "Content-Range": "bytes \(start)-2999/3000",
                    ]) { $1 }, body: body)
            case .refusesAnExistingRange?:
                return ScriptedResponse(status: 416, headers: ["Content-Range": "bytes */3000"])
            case .notModified?:
                return ScriptedResponse(status: 304, headers: tagged)
            case nil:
                // The honest server: 206 of the asked bytes, 416 past the end.
                guard start < data.count else {
                    return ScriptedResponse(status: 416, headers: ["Content-Range": "bytes */3000"])
                }
                return ScriptedResponse(
                    status: 206, headers: tagged.merging(["Content-Range": "bytes \(start)-2999/3000"]) { $1 },
                    body: asked)
            }
        }
    }

    /// Reads `range` of `path` into memory.
    func read(_ path: String, _ range: Range<Int64>) async -> Result<[UInt8], FerryError> {
        do throws(FerryError) {
            let url = try RemoteURL(parsing: server.url(path))
            let fs = try Ferry.fileSystem(for: url)
            return .success(Array(try await fs.data(at: url.path, range: range)))
        } catch {
            return .failure(error)
        }
    }

    /// Downloads `path` over a `.part` that holds the file's first `kept` bytes
    /// (and a journal with its ETag), so the download asks for bytes from `kept`.
    func resume(_ path: String, kept: Int) async throws -> (Result<TransferResult, FerryError>, [UInt8]?) {
        let dest = out.file(String(path.dropFirst()).replacingOccurrences(of: "/", with: "-"))
        try Data(Self.data[..<kept]).write(to: URL(fileURLWithPath: dest + ".part"))
        var journal = DownloadJournal(source: server.url(path), bootID: DownloadJournal.currentBootID)
        journal.etag = Self.etag
        try journal.save(to: dest + ".part.journal")
        var options = DownloadOptions()
        options.retryDelay = .milliseconds(20)
        options.maxRetries = 1
        let result: Result<TransferResult, FerryError>
        do throws(FerryError) {
            result = .success(
                try await Ferry.download(try RemoteURL(parsing: server.url(path)), to: dest, options: options).result)
        } catch {
            result = .failure(error)
        }
        return (result, try? Array(Data(contentsOf: URL(fileURLWithPath: dest))))
    }

    @Test func theHonestServerGivesTheRangeToBoth() async throws {
        #expect(try await read("/honest/f.bin", 1000..<1100).get() == Array(Self.data[1000..<1100]))
        #expect(try await read("/honest/f.bin", 3000..<3100).get() == [])
        let (result, contents) = try await resume("/honest/f.bin", kept: 1000)
        #expect(contents == Self.data)
        #expect(try result.get().restarts == 0)
        #expect(try result.get().bytesTransferred == 2000)
        // Asked past the end of a complete part: the 416 says it is complete.
        let (done, whole) = try await resume("/honest/complete.bin", kept: 3000)
        #expect(whole == Self.data)
        #expect(try done.get().bytesTransferred == 0)
    }

    @Test func aServerThatIgnoresRangeIsSkippedByTheReadAndRestartedByTheDownload() async throws {
        #expect(try await read("/ignoresRange/f.bin", 1000..<1100).get() == Array(Self.data[1000..<1100]))
        let (result, contents) = try await resume("/ignoresRange/f.bin", kept: 1000)
        #expect(contents == Self.data)
        // The whole file came again in the one attempt, from its first byte.
        #expect(try result.get().bytesTransferred == 3000)
        #expect(try result.get().retries == 0)
    }

    /// The lies after which no byte of the body may be used: the read refuses
    /// with the server's status and why; the download starts over (and, the
    /// server answering plain GETs honestly, ends with the right file).
    @Test(arguments: [
        (Lie.wrongStart, "asked for bytes from 1000, got them from 0"),
        (Lie.noContentRange, "206 without a valid Content-Range"),
        (Lie.multipart, "206 with a multipart body"),
        (Lie.refusesAnExistingRange, "refused as past the end of 3000 bytes"),
    ])
    func aRangeThatIsNotTheAskedBytesIsRefusedByBoth(lie: Lie, why: String) async throws {
        let path = "/\(lie.rawValue)/f.bin"
        let status = lie == .refusesAnExistingRange ? 416 : 206
        if let e = await #expect(throws: FerryError.self, performing: { _ = try await read(path, 1000..<1100).get() }) {
            #expect(
                e.code == .protocolError && e.serverCode == status && e.description.contains(why)
                    && e.description.contains("f.bin"), "\(e)")
        }
        let (result, contents) = try await resume(path, kept: 1000)
        #expect(contents == Self.data)
        #expect(try result.get().restarts == 1)
        #expect(server.requests.filter { $0.path == path && $0.headers["range"] == nil }.count == 1)
    }

    @Test func theReadsErrorNamesTheFileTheServersAnswerAndWhy() async {
        guard case .failure(let wrong) = await read("/wrongStart/f.bin", 1000..<1100),
            case .failure(let past) = await read("/refusesAnExistingRange/f.bin", 1000..<1100)
        else {
            Issue.record("both reads should fail")
            return
        }
        #expect(
            wrong.description
                == "read \(server.url("/wrongStart/f.bin")): 206 Partial Content (asked for bytes from 1000, "
                + "got them from 0; Content-Range: bytes 0-2999/3000)")
        #expect(
            past.description
                == "read \(server.url("/refusesAnExistingRange/f.bin")): 416 Range Not Satisfiable (asked for "
                + "bytes from 1000, refused as past the end of 3000 bytes)")
    }

    @Test func aStatusThatIsNoAnswerToARangeIsTheSameErrorForBoth() async throws {
        let path = "/notModified/f.bin"
        let read = await read(path, 1000..<1100)
        let (download, contents) = try await resume(path, kept: 1000)
        guard case .failure(let r) = read, case .failure(let d) = download else {
            Issue.record("both should fail: \(read), \(download)")
            return
        }
        #expect(r.code == .protocolError && r.serverCode == 304)
        #expect((d.code, d.serverCode, d.serverText) == (r.code, r.serverCode, r.serverText))
        #expect(contents == nil)
        // The part is kept for a later resume.
        let part = out.file("notModified-f.bin") + ".part"
        #expect(FileManager.default.fileExists(atPath: part))
    }
}
