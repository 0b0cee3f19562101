import CCurl
import Foundation

/// One PUT of a whole local file (WebDAV has no standard way to append).
final class WebDAVPutJob: LocalFileUploadJob, @unchecked Sendable {
    private(set) var headers = HTTPHeaders()
    private var reply = CappedBody(limit: 64 << 10)
    /// The error body, for the server's words.
    var body: [UInt8] { reply.bytes }

    init(
        fs: WebDAVFileSystem, target: RemoteURL, fd: Int32, sourcePath: String, size: Int64, transfer: Transfer,
        stallTimeout: Duration
    ) {
        super.init(hostKey: target.hostKey, fd: fd, sourcePath: sourcePath, offset: 0, size: size, transfer: transfer)
        fs.configure(easy, target)
        easy.set(CURLOPT_UPLOAD, 1)
        easy.set(CURLOPT_INFILESIZE_LARGE, large: size)
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

/// Drives one WebDAV upload (DESIGN.md, "Transfers: the contract"), in the
/// steps FTP's and SFTP's uploaders take:
///
/// 1. The overwrite policy decides first (PROPFIND of the destination).
/// 2. The bytes go to `.NAME.ferry-part` beside the destination (PUT), then
///    MOVE puts it in place, with `Overwrite: F` unless the policy allows
///    replacing what was there: no partial file is ever under the final name.
/// 3. An interrupted PUT is sent again whole (WebDAV has no standard append);
///    each try is checked against the size the server then holds.
/// 4. Every step draws on one `UploadBudget`.
struct WebDAVUploader: Sendable {
    let fs: WebDAVFileSystem
    let source: String
    let path: String
    let options: UploadOptions
    let transfer: Transfer

    private var display: String { fs.display(path) }

    func run() async throws(FerryError) -> TransferResult {
        let started = ContinuousClock.now
        let (fd, size) = try UploadSteps.open(source, transfer: transfer)
        defer { OS.close(fd) }
        var budget = UploadBudget(maxRetries: options.maxRetries, retryDelay: options.retryDelay)
        let existing = try await budget.retrying(transfer) { () async throws(FerryError) in
            try await UploadSteps.existing { () async throws(FerryError) in try await fs.stat(path) }
        }
        if let skipped = try UploadSteps.decide(
            existing: existing, options: options, source: source, display: display, started: started)
        {
            return skipped
        }
        do {
            try await put(size: size, fd: fd, budget: &budget)
        } catch  where error.serverCode == 409 && options.createParents {
            // The folder is missing (409 Conflict): made once, then the file again.
            // Asked only then, so a tree's files cost no extra request each.
            try await budget.retrying(transfer) { () async throws(FerryError) in
                try await fs.makeDirectory(FTPEndpoint.parent(of: path), createParents: true)
            }
            try await put(size: size, fd: fd, budget: &budget)
        }
        try await budget.retrying(transfer) { () async throws(FerryError) in
            try await fs.move(
                FTPUploader.temporaryPath(for: path), path, operation: "upload", replacing: existing != nil)
        }
        return UploadSteps.result(
            source: source, destination: display, size: size, resumedFrom: 0, budget: budget, started: started)
    }

    /// PUTs the whole file to its temporary name (`UploadSteps.send`), each try
    /// checked against the size the server then holds.
    private func put(size: Int64, fd: Int32, budget: inout UploadBudget) async throws(FerryError) {
        let temporary = FTPUploader.temporaryPath(for: path)
        let remote = fs.target(temporary)
        let shown = remote.redacted
        var last: WebDAVPutJob?
        try await UploadSteps.send(
            size: size, from: 0, remote: shown, destination: display, engine: fs.engine, transfer: transfer,
            budget: &budget,
            makeJob: { _ in
                let job = WebDAVPutJob(
                    fs: fs, target: remote, fd: fd, sourcePath: source, size: size, transfer: transfer,
                    stallTimeout: options.stallTimeout)
                last = job
                return job
            },
            failure: { completion, _ in .curl(completion, operation: "upload", target: shown) },
            continuation: { () async throws(FerryError) in 0 },
            storedLength: { () async throws(FerryError) in
                if let job = last, job.status >= 300 {
                    throw WebDAVFileSystem.failure(
                        status: job.status, reason: job.headers.reason, body: job.body, method: "PUT",
                        operation: "upload", target: shown, user: fs.settings.credentials?.user)
                }
                return try await fs.stat(temporary).size
            })
    }
}
