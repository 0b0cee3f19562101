import Foundation

/// How a download behaves.
public struct DownloadOptions: Sendable, Hashable {
    /// What to do when the destination file exists.
    public var overwrite: OverwritePolicy = .fail
    /// Continue from a matching `.part` file left by an earlier run.
    public var resume: Bool = true
    /// Attempts in a row that may fail without progress before giving up. It
    /// also sets the transfer's whole budget: at most `5 + 4 * maxRetries`
    /// attempts made again (retries and restarts together), so that a server
    /// that cuts every connection after a few bytes still ends the download.
    public var maxRetries: Int = 5
    /// First back-off delay; it doubles after each failed attempt (capped at 30 s).
    public var retryDelay: Duration = .milliseconds(500)
    /// Give up on a connection that sends nothing for this long.
    public var stallTimeout: Duration = .seconds(30)
    /// Give up on a connection attempt after this long.
    public var connectTimeout: Duration = .seconds(15)
    /// Verify TLS certificates (turn off only for a known self-signed test server).
    public var verifyTLS: Bool = true
    /// Create the destination's missing parent folders (a leading `~` is always
    /// expanded to the home folder).
    /// Missing folders are made only inside an existing folder other than `/`:
    /// `/nonexistent/dir/FILE` fails as `notFound` naming `/nonexistent`.
    public var createParents: Bool = true
    /// Compute the SHA-256 of the file's bytes as they stream
    /// (``TransferResult/sha256``): no second read, except of the bytes a resume
    /// kept from before. `ferry sync` records it in its history, and deletes a
    /// source's file only when its local copy still has it.
    public var computeChecksum: Bool = false
    /// What the file is, however its source's address is spelt (`ferry sync`
    /// gives its history key, a card's CID or the server, and the path): a `.part`
    /// left by a download with the same identity is resumed even when the address
    /// differs (`localhost` against `127.0.0.1`, another port from DHCP or the
    /// card's own access point), instead of started again beside it.
    public var sourceIdentity: String?
    /// Write the bytes to this open file descriptor (standard output, a pipe) as
    /// they arrive instead of to a file: no `.part`, no journal, no resume from an
    /// earlier run, no time set and no rename; the destination is only the name
    /// shown. Retries continue from the bytes already written where the server
    /// allows it; a server that would send the file from its start again fails
    /// the download, as written bytes cannot be taken back. The descriptor is
    /// never closed.
    public var outputDescriptor: Int32?

    /// Default options: refuse to overwrite, resume, five retries, create parents.
    public init() {}
}

/// How an upload behaves.
public struct UploadOptions: Sendable, Hashable {
    /// What to do when the remote file exists.
    public var overwrite: OverwritePolicy = .fail
    /// Create missing remote folders (the default).
    public var createParents: Bool = true
    /// Continue an interrupted upload where the server allows it.
    public var resume: Bool = true
    /// Attempts in a row that may fail without progress before giving up.
    public var maxRetries: Int = 5
    /// First back-off delay; it doubles after each failed attempt.
    public var retryDelay: Duration = .milliseconds(500)
    /// Give up on a connection that accepts nothing for this long.
    public var stallTimeout: Duration = .seconds(30)
    /// Verify TLS certificates.
    public var verifyTLS: Bool = true

    /// Default options: refuse to overwrite, create parents, resume.
    public init() {}
}

/// What a finished transfer did.
public struct TransferResult: Sendable, Hashable {
    /// The source (redacted URL or local path).
    public var source: String
    /// The destination (local path or redacted URL).
    public var destination: String
    /// The final size of the file.
    public var size: Int64
    /// Bytes of the file this transfer moved (less than `size` after a resume).
    public var bytesTransferred: Int64
    /// Every byte this transfer put on the network, attempts that failed and were
    /// retried included (FTP uploads count them; nil where not counted). Against
    /// `bytesTransferred`, the cost of the retries.
    public var bytesSent: Int64?
    /// Bytes kept from before the last interruption: the offset the last
    /// continuation started from (a `.part` from an earlier run, a pause, a
    /// retry), or 0 when the file came from its start (also when a server
    /// ignored the range and the file was started over).
    public var resumedFrom: Int64
    /// Times the transfer had to start the file over (server ignored Range, file changed).
    public var restarts: Int
    /// Failed attempts that were retried.
    public var retries: Int
    /// True when nothing was transferred because the destination existed (policy `.skip`).
    public var skipped: Bool
    /// Wall-clock time from start to end, pauses included.
    public var duration: Duration
    /// The source file's modification time as the server gave it while sending the
    /// bytes (HTTP `Last-Modified`, FTP `MDTM`), in UTC; nil when it gave none.
    /// The downloaded file already carries this time: it is set on the open file
    /// before the flush and the final name, so no stamp by path is needed after
    /// (a caller with a time of its own, a listing's, may still set that).
    public var sourceModified: Date?
    /// The SHA-256 of the file's bytes (lowercase hex, as `sha256sum` prints it)
    /// when ``DownloadOptions/computeChecksum`` asked for it; nil otherwise, or
    /// when the bytes could not be read back.
    public var sha256: String?

    /// Creates a result.
    public init(
        source: String, destination: String, size: Int64, bytesTransferred: Int64,
        resumedFrom: Int64 = 0, restarts: Int = 0, retries: Int = 0, skipped: Bool = false,
        duration: Duration = .zero
    ) {
        self.source = source
        self.destination = destination
        self.size = size
        self.bytesTransferred = bytesTransferred
        self.resumedFrom = resumedFrom
        self.restarts = restarts
        self.retries = retries
        self.skipped = skipped
        self.duration = duration
    }
}
