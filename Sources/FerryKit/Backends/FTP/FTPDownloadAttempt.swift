import CCurl
import Foundation

/// What a listing said about a file, used by the first attempt of a fresh
/// download instead of asking again: no `SIZE`, and no `MDTM` when the listing's
/// time is exact (an `MLSD` `modify` fact, UTC to the second) or the file is
/// small. That is two of the four round trips per file in `get -r`, most of a
/// small file's time on a link with latency.
///
/// Safe because only the first attempt from offset zero uses them: the journal
/// records the listed size and time; when the bytes the server sent (and called
/// complete) are not the listed size, the file changed or the listing was wrong,
/// and a retry asks `SIZE` (and `MDTM`) before they are accepted, never appending
/// to them; and a resume always asks the server. A recorded time
/// can only cause a needless restart, never a false match: it is older than the
/// bytes or equal to `MDTM`. A small file listed by `LIST` (a time to the minute,
/// in the server's zone) has no validator at all: should it stop early, its part
/// is marked unverifiable and started over, which costs less than the `MDTM` of
/// every small file.
struct FTPListedFacts: Sendable {
    let size: Int64
    /// The time in `MDTM` form (`YYYYMMDDHHMMSS`), when exact.
    let modified: SourceTime?
    /// Whether the attempt goes without `MDTM`.
    let skipsMDTM: Bool

    /// Files up to this size skip `MDTM` even without an exact listed time.
    static let smallFile: Int64 = 1 << 20

    init?(_ entry: RemoteEntry) {
        guard entry.kind == .file, let size = entry.size, size >= 0 else { return nil }
        self.size = size
        if let t = entry.modified, t.zone == .utc {
            modified = .mdtm(t.timeVal)
        } else {
            modified = nil
        }
        skipsMDTM = modified != nil || size <= FTPListedFacts.smallFile
    }
}

/// What FTP adds to a download attempt (`DownloadAttempt`): `MDTM`, `SIZE`,
/// `REST offset`, `RETR`.
///
/// The file's size and MDTM time are its validators (FTP has no ETag): a
/// `SizeAndTimeDownloadDecision` compares them with the journal before the first byte
/// and starts the file over when either changed, instead of appending foreign
/// bytes. A first attempt with `FTPListedFacts` takes them from the listing
/// instead. This adapter reads them from the replies libcurl logs.
struct FTPDownloadAttempt: DownloadAttemptAdapter {
    var decision: SizeAndTimeDownloadDecision
    private var log = FTPReplyLog()
    private let listed: FTPListedFacts?
    private let endpoint: FTPEndpoint
    private let path: String
    private let offset: Int64
    private let options: DownloadOptions

    /// The source the driver asks for attempts: one per file. `listed` stands in
    /// for `SIZE` (and `MDTM`) in the first attempt from offset 0 only.
    static func source(endpoint: FTPEndpoint, path: String, listed: ListedFacts<FTPListedFacts>?) -> DownloadSource {
        DownloadSource(
            displayName: endpoint.display(path), engine: endpoint.engine,
            makeAttempt: { offset, part, transfer, options in
                let facts = listed?.forAttempt(from: offset)
                return DownloadAttempt(
                    FTPDownloadAttempt(
                        endpoint: endpoint, path: path, offset: offset, journal: part.journal, options: options,
                        listed: facts),
                    hostKey: endpoint.hostKey, tlsSessionCache: endpoint.tlsSessionCache, part: part,
                    transfer: transfer, offset: offset)
            })
    }

    init(
        endpoint: FTPEndpoint, path: String, offset: Int64, journal: DownloadJournal, options: DownloadOptions,
        listed: FTPListedFacts? = nil
    ) {
        decision = SizeAndTimeDownloadDecision(
            offset: offset, journal: journal, listed: listed, display: endpoint.display(path))
        self.listed = listed
        self.endpoint = endpoint
        self.path = path
        self.offset = offset
        self.options = options
    }

    func configure(_ job: CurlJob) {
        let easy = job.easy
        endpoint.configure(easy, path: path, stallTimeout: options.stallTimeout)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(options.connectTimeout / .milliseconds(1)))
        // MDTM before RETR, unless the listing stands in for it.
        if listed?.skipsMDTM != true { easy.set(CURLOPT_FILETIME, 1) }
        // libcurl asks SIZE by itself before a binary RETR; with the listed size it
        // need not (and then reads until the server ends the data connection; the
        // size is checked at the end).
        if listed != nil { easy.set(CURLOPT_IGNORE_CONTENT_LENGTH, 1) }
        // The whole path in MDTM, SIZE and RETR instead of a CWD per folder level:
        // `get -r` moves between folders on every file, and the CWDs were three of
        // the seven round trips per file.
        easy.set(CURLOPT_FTP_FILEMETHOD, Int(CURLFTPMETHOD_NOCWD.rawValue))
        if offset > 0 { easy.set(CURLOPT_RESUME_FROM_LARGE, large: offset) }
        job.enableDebug()
    }

    func header(_ line: UnsafeRawBufferPointer) {}

    mutating func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer, job: CurlJob) {
        job.followFTP(&log, type, text)
    }

    /// The `SIZE` answer of this attempt, or the listed size.
    private var remoteSize: Int64? {
        guard let r = log.lastReply(verb: "SIZE"), r.code == 213 else { return listed?.size }
        return Int64(r.text)
    }

    /// The `MDTM` answer of this attempt, as the server wrote it ("20240501120000"),
    /// or the listed time.
    private var remoteModified: SourceTime? {
        guard let r = log.lastReply(verb: "MDTM"), r.code == 213, !r.text.isEmpty else { return listed?.modified }
        return .mdtm(r.text)
    }

    /// What this attempt knows about the file now.
    func head(_ easy: EasyHandle) -> SizeAndTimeDownloadDecision.Facts {
        SizeAndTimeDownloadDecision.Facts(size: remoteSize, modified: remoteModified)
    }

    func ending(_ completion: CurlCompletion, length: Int64) -> SizeAndTimeDownloadDecision.Ending {
        SizeAndTimeDownloadDecision.Ending(completion, length: length) { completion in
            if completion.code == .ftpCouldntUseREST {
                return .restRefused(
                    reply: log.lastReply(verb: "REST").map { "\($0.code) \($0.text)" },
                    error: .ftp(completion, log: log, operation: "download", target: decision.display))
            }
            return .failed(.ftp(completion, log: log, operation: "download", target: decision.display))
        }
    }

    func progressTotal(_ part: PartFile) -> Int64? { remoteSize ?? part.journal.totalSize }
}

extension SizeAndTimeDownloadDecision {
    /// The decision of an FTP attempt that goes by `listed` instead of asking
    /// `SIZE` (and `MDTM`), when given.
    init(offset: Int64, journal: DownloadJournal, listed: FTPListedFacts?, display: String) {
        self.init(
            offset: offset, journal: journal, listedSize: listed?.size, skipsTimeCheck: listed?.skipsMDTM == true,
            display: display)
    }
}

extension CurlCode {
    /// The server refused `REST` before a resumed `RETR`.
    static let ftpCouldntUseREST = CurlCode(CURLE_FTP_COULDNT_USE_REST)
}
