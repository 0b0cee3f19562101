import CCurl
import Foundation

/// One FTP request whose reply fits in memory: a listing, a `stat`, the `FEAT`
/// probe, or a list of quote commands. It records every server reply so errors
/// can carry the server's own code and text.
///
/// Engine-thread confined while running (see `CurlJob`); the awaiting task reads
/// the results after `perform` returned.
final class FTPCommandJob: RemoteCommandJob, @unchecked Sendable {
    var log = FTPReplyLog()
    /// The login folder, from the `PWD` reply libcurl's login sent, when this job
    /// logged in (see ``freshConnection()``).
    private(set) var entryPath: String?

    /// `maxBody` caps the body (a listing). Control-only requests get libcurl's
    /// synthesized header text there too, which is why the default cap is not 0.
    init(endpoint: FTPEndpoint, path: String, maxBody: Int = 64 << 10) {
        super.init(hostKey: endpoint.hostKey, tlsSessionCache: endpoint.tlsSessionCache, maxBody: maxBody)
        endpoint.configure(easy, path: path)
        enableDebug()
    }

    /// Logs in on a new connection (kept for reuse afterwards), so that the
    /// login's `PWD` reply, and with it ``entryPath``, is in this job's log.
    func freshConnection() {
        easy.set(CURLOPT_FRESH_CONNECT, 1)
        freshLane = true
    }

    /// Makes this a control-only request: `commands` as quote commands, each
    /// prefixed `*` so a refusal neither aborts the request nor makes libcurl
    /// drop the connection; the caller judges each reply itself.
    func quote(_ commands: [String]) {
        easy.set(CURLOPT_NOBODY, 1)
        easy.set(CURLOPT_QUOTE, list: commands.map { "*" + $0 })
    }

    override func debug(_ type: curl_infotype, _ text: UnsafeRawBufferPointer) {
        followFTP(&log, type, text)
    }

    override func didComplete(_ completion: CurlCompletion) {
        // From the PWD reply of this job's login, never from libcurl's
        // CURLINFO_FTP_ENTRY_PATH: in libcurl 7.88 that points into the
        // connection, which may already be gone (AddressSanitizer caught reads
        // after free, after failures and after successes, once the connection
        // had been closed).
        if let pwd = log.lastReply(verb: "PWD"), pwd.code == 257, let path = FTPReplyLog.quotedPath(pwd.text) {
            entryPath = path
        }
        super.didComplete(completion)
    }
}

extension FTPEndpoint {
    /// Runs a job; throws the server's error (or libcurl's) when it failed.
    @discardableResult
    func run(_ job: FTPCommandJob, operation: String, path: String) async throws(FerryError) -> FTPCommandJob {
        let completion = await engine.perform(job)
        if completion.interrupted || completion.code != .ok {
            throw FerryError.ftp(completion, log: job.log, operation: operation, target: display(path))
        }
        return job
    }

    /// Sends quote commands on a control connection and returns the reply to each
    /// (nil for a command the server never answered). Connection and login errors throw.
    func quote(_ commands: [String], operation: String, path: String) async throws(FerryError) -> [FTPReply?] {
        // The server root URL: libcurl then sends no CWD of its own after the commands
        // (only a CWD back to the login folder on a reused connection).
        let job = FTPCommandJob(endpoint: self, path: "/", maxBody: 64 << 10)
        job.quote(commands)
        try await run(job, operation: operation, path: path)
        return commands.map { job.log.reply(to: $0) }
    }
}
