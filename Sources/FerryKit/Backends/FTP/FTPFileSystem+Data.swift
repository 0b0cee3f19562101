import CCurl
import Foundation

extension FTPFileSystem {
    /// Ranges start with `REST`; the data connection is closed once the range is read.
    public var capabilities: RemoteCapabilities { [.rangeReads] }

    /// Reads one byte range: `REST` to its start, `RETR`, and `ABOR` with the data
    /// connection closed as soon as the range is in.
    ///
    /// FTP cannot ask for a range's end: the server sends until `ABOR`, and what
    /// it wrote into its socket buffers by then it counts as sent (over loopback,
    /// vsftpd wrote up to the whole 2.4 MB file for a 64 KiB read). Ferry keeps
    /// only the range, and libcurl closes the control connection after the cut.
    public func data(at path: String, range: Range<Int64>) async throws(FerryError) -> Data {
        Data(try await read(path, range: range, operation: "read"))
    }

    func read(_ path: String, range: Range<Int64>, operation: String) async throws(FerryError) -> [UInt8] {
        let p = RemotePath.normalize(path)
        let display = endpoint.display(p)
        try FTPEndpoint.validate(p, operation: operation, display: display)
        guard range.lowerBound >= 0 else { throw FerryError.badRange(range, operation: operation, target: display) }
        if range.isEmpty { return [] }
        let capacity = Int(min(range.upperBound - range.lowerBound, Int64(Int32.max)))
        let job = CurlMemoryJob(
            FTPMemoryReply(), hostKey: endpoint.hostKey, capacity: capacity, start: range.lowerBound,
            tlsSessionCache: endpoint.tlsSessionCache)
        endpoint.configure(job.easy, path: p, stallTimeout: .seconds(30))
        job.easy.set(CURLOPT_RANGE, "\(range.lowerBound)-\(range.lowerBound + Int64(capacity) - 1)")
        let c = await endpoint.engine.perform(job)
        if c.interrupted { throw FerryError(.cancelled, operation: operation, target: display) }
        if c.code == .ok || job.filled { return job.body }
        // REST past the end: some servers refuse it (554), others send nothing.
        if let rest = job.reply.log.lastReply(verb: "REST"), rest.code >= 500, range.lowerBound > 0,
            let size = try? await entry(p).size, size <= range.lowerBound
        {
            return []
        }
        // libcurl counts a range that ran past the end of the file as a partial file.
        if c.code == .partialFile, let done = job.reply.log.lastReply(verb: "RETR"),
            done.code == 226 || done.code == 250
        {
            return job.body
        }
        throw FerryError.ftp(c, log: job.reply.log, operation: operation, target: display)
    }
}

/// What FTP adds to a read into memory (`CurlMemoryJob`): the server's replies
/// (`FTPReplyLog`, followed as every FTP job follows them); libcurl's `REST`
/// starts the body at the asked byte, so the body is always the asked bytes.
struct FTPMemoryReply: MemoryReadReply {
    private(set) var log = FTPReplyLog()

    func configure(_ job: CurlJob) { job.enableDebug() }

    func header(_ line: UnsafeRawBufferPointer) {}

    mutating func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer, job: CurlJob) {
        job.followFTP(&log, type, text)
    }

    func body(askedFrom start: Int64) -> MemoryReadBody { .asked(total: nil) }
}
