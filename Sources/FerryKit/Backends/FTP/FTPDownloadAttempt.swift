import CCurl
import Foundation

/// Downloads one FTP file through the shared download driver (`.part`, journal,
/// resume, retries).
struct FTPDownloadSource: DownloadSource {
    let endpoint: FTPEndpoint
    let path: String

    var displayName: String { endpoint.display(path) }
    var engine: CurlEngine { endpoint.engine }

    func makeAttempt(offset: Int64, part: PartFile, transfer: Transfer, options: DownloadOptions)
        -> DownloadAttemptJob
    {
        FTPDownloadAttempt(
            endpoint: endpoint, path: path, offset: offset, part: part, transfer: transfer, options: options)
    }
}

/// One attempt of an FTP download: `MDTM`, `SIZE`, `REST offset`, `RETR`.
///
/// The file's size and MDTM time are its validators (FTP has no ETag): they are
/// stored in the journal when the attempt starts, and a resumed attempt that
/// finds either changed starts the file over instead of appending foreign bytes.
///
/// Engine-thread confined while running, like every `CurlJob`; the driver reads
/// `outcome` only after `perform` returned.
final class FTPDownloadAttempt: DownloadAttemptJob, @unchecked Sendable {
    private var log = FTPReplyLog()
    private var decided = false
    private let display: String

    init(
        endpoint: FTPEndpoint, path: String, offset: Int64, part: PartFile, transfer: Transfer,
        options: DownloadOptions
    ) {
        display = endpoint.display(path)
        super.init(
            hostKey: endpoint.hostKey, tlsSessionCache: endpoint.tlsSessionCache, part: part, transfer: transfer,
            offset: offset)
        endpoint.configure(easy, path: path, stallTimeout: options.stallTimeout)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(options.connectTimeout / .milliseconds(1)))
        // MDTM before RETR; libcurl asks SIZE by itself for a binary download.
        easy.set(CURLOPT_FILETIME, 1)
        // The whole path in MDTM, SIZE and RETR instead of a CWD per folder level:
        // `get -r` moves between folders on every file, and the CWDs were three of
        // the seven round trips per file.
        easy.set(CURLOPT_FTP_FILEMETHOD, Int(CURLFTPMETHOD_NOCWD.rawValue))
        if offset > 0 { easy.set(CURLOPT_RESUME_FROM_LARGE, large: offset) }
        enableDebug()
    }

    /// The `SIZE` answer of this attempt.
    private var remoteSize: Int64? {
        guard let r = log.lastReply(verb: "SIZE"), r.code == 213 else { return nil }
        return Int64(r.text)
    }

    /// The `MDTM` answer of this attempt, as the server wrote it ("20240501120000").
    private var remoteModified: String? {
        guard let r = log.lastReply(verb: "MDTM"), r.code == 213, !r.text.isEmpty else { return nil }
        return r.text
    }

    override func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer) {
        if type == CURLINFO_HEADER_IN {
            log.consumeIncoming(text)
        } else if type == CURLINFO_HEADER_OUT {
            log.consumeOutgoing(String(decoding: text, as: UTF8.self))
        }
    }

    override func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !decided {
            guard decide() else { return false }
        }
        guard part.append(bytes) else {
            outcome = .failed(part.writeError!)
            return false
        }
        bytesReceived += Int64(bytes.count)
        transfer.report(bytesDone: part.length, totalBytes: remoteSize ?? part.journal.totalSize)
        return true
    }

    /// Compares the validators with the journal before the first byte is written.
    /// Returns false (with `outcome` set) to stop the attempt.
    private func decide() -> Bool {
        decided = true
        let journal = part.journal
        let size = remoteSize
        let modified = remoteModified
        if offset > 0 {
            if let old = journal.totalSize, let size, old != size {
                outcome = .restart(reason: "size changed from \(old) to \(size)")
                return false
            }
            if let old = journal.lastModified, let modified, old != modified {
                outcome = .restart(reason: "modification time changed from \(old) to \(modified)")
                return false
            }
        }
        do {
            try part.begin(
                at: offset, etag: nil, lastModified: modified ?? journal.lastModified,
                totalSize: size ?? journal.totalSize)
        } catch {
            outcome = .failed(error)
            return false
        }
        return true
    }

    override func didComplete(_ completion: CurlCompletion) {
        if decided, case .failed(let e) = outcome, e.detail != "no outcome" { return }
        if case .restart = outcome { return }
        if completion.interrupted {
            outcome = .interrupted
            return
        }
        switch completion.code {
        case .ok:
            // No body at all: an empty file, or the .part already held every byte
            // (libcurl skips RETR when REST would start at the end).
            if !decided {
                guard decide() else { return }
            }
            outcome = .complete(expectedSize: remoteSize)
        case .badDownloadResume:
            // The .part is longer than the file now is: it changed.
            outcome = .restart(reason: "the file is shorter than the \(offset) bytes already downloaded")
        default:
            outcome = .failed(.ftp(completion, log: log, operation: "download", target: display))
        }
    }
}

extension CurlCode {
    /// `REST` past the end of the file (libcurl checks it against `SIZE`).
    static let badDownloadResume = CurlCode(CURLE_BAD_DOWNLOAD_RESUME)
}
