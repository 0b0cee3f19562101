import CCurl
import Foundation
import Synchronization

/// One PUT to a temporary name: of the whole local file, or of the piece from
/// `offset` to `end` with its `Content-Range` (`WebDAVRangedPut`).
final class WebDAVPutJob: LocalFileUploadJob, @unchecked Sendable {
    let offset: Int64
    /// A piece: it carries `Content-Range`.
    var ranged: Bool { offset > 0 || end < size }
    private(set) var headers = HTTPHeaders()
    private var reply = CappedBody(limit: 64 << 10)
    /// The error body, for the server's words.
    var body: [UInt8] { reply.bytes }

    init(
        fs: WebDAVFileSystem, target: RemoteURL, fd: Int32, sourcePath: String, offset: Int64, end: Int64,
        size: Int64, transfer: Transfer, stallTimeout: Duration
    ) {
        self.offset = offset
        super.init(
            hostKey: target.hostKey, fd: fd, sourcePath: sourcePath, offset: offset, size: size, end: end,
            transfer: transfer)
        fs.configure(easy, target, headers: ranged ? ["Content-Range: bytes \(offset)-\(end - 1)/\(size)"] : [])
        easy.set(CURLOPT_UPLOAD, 1)
        easy.set(CURLOPT_INFILESIZE_LARGE, large: end - offset)
        easy.setTimeouts(connect: .seconds(15), stall: stallTimeout)
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        _ = reply.append(bytes)
        return true
    }

    override func didReceiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        headers.consume(line: line)
        return true
    }

    /// The final status.
    var status: Int { headers.status != 0 ? headers.status : easy.info(CURLINFO_RESPONSE_CODE) }
}

/// WebDAV's steps of the one upload algorithm (`ResumableUpload`, docs/DESIGN.md,
/// "Transfers: the contract"): PUTs to `.NAME.ferry-part` (in pieces with
/// `Content-Range` where the server takes them, `WebDAVRangedPut`; else the
/// whole file), PROPFIND to see what the server holds, MOVE into place with
/// `Overwrite: F` unless the policy allows replacing what was there. No partial
/// file is ever under the final name. An interrupted upload goes on from the
/// pieces the server holds; on a server without ranged PUTs it is sent again whole.
///
/// A PUT's refusal comes back as a status with the server's words, not as a
/// libcurl error: the driver's look at what the server holds afterwards
/// (`entry` of the temporary name) reports it, from the last PUT's reply. A
/// missing folder (`409`, or nginx's `500` where the folder is not there) with
/// `createParents` is made, and the file tried again from the upload's budget.
struct WebDAVUploadTarget: ResumableUploadTarget {
    let fs: WebDAVFileSystem
    let createParents: Bool
    /// The last PUT's reply, per temporary path.
    private let lastPut = LastPut()

    var engine: CurlEngine { fs.engine }
    /// Until a server refused or ignored a ranged PUT.
    var appends: Bool { fs.rangedPut.support != .no }

    init(fs: WebDAVFileSystem, createParents: Bool) {
        self.fs = fs
        self.createParents = createParents
    }

    func display(_ path: String) -> String { fs.display(path) }

    func entry(_ path: String) async throws(FerryError) -> RemoteEntry {
        try await fs.stat(path)
    }

    /// The PUT's own answer: a refusal is thrown, a missing folder made first
    /// when `createParents` (then the error is transient: the file goes again);
    /// after a piece, what the server holds (looked up once, for both uses).
    func checkAnswer(_ path: String) async throws(FerryError) -> Int64? {
        guard let job = lastPut.take(path) else { return nil }
        // A ranged PUT's answer also says whether the server takes them: one
        // that wrote the piece as the whole file left a temporary of the wrong
        // bytes, which the whole file now replaces.
        let ok = (200..<300).contains(job.status)
        let held = ok && job.ranged ? try await UploadSteps.remoteLength(path, of: self) : nil
        let verdict = WebDAVRangedPut.verdict(
            status: job.status, ranged: job.ranged, offset: job.offset, end: job.end, held: held)
        switch verdict {
        case .wrote:
            // Only a piece after the first shows the range was followed.
            if job.offset > 0 { fs.rangedPut.learn(.yes) }
            return held
        case .sizeUnknown:
            fs.rangedPut.learn(.no)
            throw FerryError(
                .verificationFailed, operation: "upload", target: fs.display(path),
                detail: "the server does not say how much of the file it holds; sending the whole file",
                isTransient: true)
        case .noRanges:
            fs.rangedPut.learn(.no)
            let what = ok ? "wrote it as the whole file (\(held ?? 0) bytes)" : "answered \(job.status)"
            throw FerryError(
                .verificationFailed, operation: "upload", target: fs.display(path),
                detail: "the server does not take a PUT at an offset (Content-Range): it \(what); "
                    + "sending the whole file again", isTransient: true)
        case .leftover:
            fs.rangedPut.learn(.yes)
            await remove(path)
            throw FerryError(
                .verificationFailed, operation: "upload", target: fs.display(path),
                detail: "an earlier upload's longer leftover was there (\(held ?? 0) bytes); removed it, "
                    + "sending the file again", isTransient: true)
        case .failed:
            break
        }
        if job.status >= 300 {
            let refused = WebDAVFileSystem.failure(
                status: job.status, reason: job.headers.reason, body: job.body, method: "PUT", operation: "upload",
                target: fs.display(path), user: fs.settings.credentials?.user)
            // 409 is WebDAV's word for a missing folder; nginx says 500 (its
            // open() failed), sabre/dav 1.8 404. The folder is looked up first:
            // a 409 for another reason must not be tried again.
            let parent = RemotePath.parent(of: path)
            var missing = false
            if createParents && [404, 409, 500].contains(job.status) && parent != "/" {
                missing = (try? await fs.stat(parent)) == nil
            }
            if missing {
                try await fs.makeDirectory(parent, createParents: true)
                var again = refused
                again.isTransient = true
                again.detail = "the folder was missing; made it"
                throw again
            }
            throw refused
        }
        return nil
    }

    /// A leftover's last bytes, by a `Range` request.
    func read(_ path: String, range: ClosedRange<Int64>) async -> [UInt8]? {
        guard let data = try? await fs.data(at: path, range: range.lowerBound..<(range.upperBound + 1)),
            data.count == range.count
        else { return nil }
        return [UInt8](data)
    }

    func uploadJob(
        to path: String, from offset: Int64, source: String, fd: Int32, size: Int64, options: UploadOptions,
        transfer: Transfer
    ) -> WebDAVPutJob {
        let support = fs.rangedPut.support
        precondition(offset == 0 || support != .no, "a server without ranged PUTs gets the whole file")
        let end = WebDAVRangedPut.end(from: offset, size: size, support: support, piece: fs.uploadPiece)
        let job = WebDAVPutJob(
            fs: fs, target: fs.target(path), fd: fd, sourcePath: source, offset: offset, end: end, size: size,
            transfer: transfer, stallTimeout: options.stallTimeout)
        lastPut.set(job, for: path)
        return job
    }

    func failure(_ completion: CurlCompletion, of job: WebDAVPutJob, target: String) -> FerryError {
        HTTPFileSystem.failure(
            completion, headers: job.headers, bodyStarted: !job.body.isEmpty, operation: "upload", target: target)
    }

    func rename(_ temporary: String, to path: String, replacing: Bool) async throws(FerryError) {
        try await fs.move(temporary, path, operation: "upload", replacing: replacing)
    }

    /// DELETE of the temporary file, best effort.
    func remove(_ temporary: String) async {
        try? await fs.remove(fs.target(temporary), operation: "upload", headers: ["Depth: 0"])
    }

    /// The last PUT job of each temporary path, kept until its result is read.
    private final class LastPut: Sendable {
        private let jobs = Mutex<[String: WebDAVPutJob]>([:])

        func set(_ job: WebDAVPutJob, for path: String) { jobs.withLock { $0[path] = job } }

        func take(_ path: String) -> WebDAVPutJob? { jobs.withLock { $0.removeValue(forKey: path) } }
    }
}
