import CCurl
import Foundation

/// libcurl is initialised once per process, before the first handle exists.
let curlGlobalInit: Void = {
    curl_global_init(Int(CURL_GLOBAL_ALL))
}()

/// Which TLS session cache an easy handle uses, for its whole life.
enum TLSSessionCache: Sendable, Hashable {
    /// The handle's own (libcurl's default): HTTP, FlashAir, plain FTP.
    case own
    /// A `ConnectionLane`'s, given by the engine when the job is admitted
    /// (`ConnectionLanes`), left when the handle goes back to the pool. The key
    /// names the handles that may share a control connection (`FTPEndpoint.laneKey`).
    case lane(String)

    /// Whether the handle runs in a lane (FTPS, SFTP).
    var isLane: Bool { self != .own }
}

/// Raw easy handles kept for reuse (`curl_easy_reset` between uses), as libcurl
/// advises for many transfers: a fresh handle allocates its state and receive
/// buffer again, and the kernel then faults those pages in on every file.
///
/// One pool per `TLSSessionCache`, never mixed. libcurl 7.88 gives a handle its
/// own TLS session cache on its first transfer of any kind (920 bytes) and
/// `curl_easy_reset` keeps it, as it keeps `CURLOPT_SHARE`; setting
/// `CURLOPT_SHARE` on a handle that has its own cache replaces the pointer
/// without freeing the cache (a leak, `scripts/sanitizers/repro/curl-share-session-leak.c`).
/// So a handle meets the share before its first transfer or never.
///
/// Sized for the CLI's window of started transfers (`TransferRunner.window`, up
/// to 260), each holding a handle while it waits in the engine's queue: with 32,
/// the handles of files waiting for their group commit overflowed the pool and
/// nearly every file paid `curl_easy_init` and `curl_easy_cleanup` (two
/// `rt_sigaction` calls each). A reset handle keeps a few KB, so a full pool
/// costs under 1 MB (strace and massif, bench/RESULTS.md, "Issue 19, third step (2026-12-01, branch many): CPU per
/// file").
private let ownSessionHandles = ReusePool<UnsafeMutableRawPointer>(
    capacity: 256,
    make: makeEasyHandle,
    prepare: { curl_easy_reset($0) },
    discard: { curl_easy_cleanup($0) })
private let sharedSessionHandles = ReusePool<UnsafeMutableRawPointer>(
    capacity: 256,
    make: makeEasyHandle,
    prepare: { curl_easy_reset($0) },
    discard: { curl_easy_cleanup($0) })

private func makeEasyHandle() -> UnsafeMutableRawPointer {
    guard let h = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
    return h
}

private func easyHandlePool(_ cache: TLSSessionCache) -> ReusePool<UnsafeMutableRawPointer> {
    cache.isLane ? sharedSessionHandles : ownSessionHandles
}

/// Owns one libcurl easy handle and the C memory its options point to.
///
/// Confined to one thread at a time: built by the submitter, then used only on
/// the engine thread while the transfer runs (corelibs-foundation `EasyHandle`).
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    let tlsSessionCache: TLSSessionCache
    private var lists: [UnsafeMutablePointer<curl_slist>] = []
    private var strings: [UnsafeMutablePointer<CChar>] = []
    /// libcurl writes its human-readable error text here.
    let errorBuffer: UnsafeMutablePointer<CChar>

    init(tlsSessionCache: TLSSessionCache = .own) {
        _ = curlGlobalInit
        self.tlsSessionCache = tlsSessionCache
        raw = easyHandlePool(tlsSessionCache).take()
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        _ = ferry_curl_setopt_pointer(raw, CURLOPT_ERRORBUFFER, errorBuffer)
        set(CURLOPT_NOSIGNAL, 1)
    }

    deinit {
        // Out of its lane before the pool takes it back: `curl_easy_reset` would
        // keep the share, and with it the lane's connections, for the next job.
        // Leaving drops the pointer to the share's session cache, so the handle
        // still has no cache of its own (see `TLSSessionCache`).
        if tlsSessionCache.isLane { set(CURLOPT_SHARE, pointer: nil) }
        easyHandlePool(tlsSessionCache).give(raw)
        for l in lists { curl_slist_free_all(l) }
        for s in strings { free(s) }
        errorBuffer.deallocate()
    }

    func set(_ option: CURLoption, _ value: Int) {
        _ = ferry_curl_setopt_long(raw, option, value)
    }

    func set(_ option: CURLoption, _ value: Bool) {
        _ = ferry_curl_setopt_long(raw, option, value ? 1 : 0)
    }

    func set(_ option: CURLoption, large value: Int64) {
        _ = ferry_curl_setopt_off(raw, option, value)
    }

    /// libcurl copies most strings, but not all (e.g. CURLOPT_ERRORBUFFER, POSTFIELDS);
    /// keep our own copy alive for the handle's lifetime to be safe with every option.
    func set(_ option: CURLoption, _ value: String) {
        let copy = strdup(value)!
        strings.append(copy)
        _ = ferry_curl_setopt_string(raw, option, copy)
    }

    func set(_ option: CURLoption, list values: [String]) {
        var list: UnsafeMutablePointer<curl_slist>?
        for v in values { list = curl_slist_append(list, v) }
        if let list { lists.append(list) }
        _ = ferry_curl_setopt_slist(raw, option, list)
    }

    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) {
        _ = ferry_curl_setopt_pointer(raw, option, pointer)
    }

    func setCallback(_ option: CURLoption, _ cb: ferry_curl_data_cb) {
        _ = ferry_curl_setopt_data_cb(raw, option, cb)
    }

    func setProgressCallback(_ cb: ferry_curl_xferinfo_cb) {
        _ = ferry_curl_setopt_xferinfo_cb(raw, cb)
        set(CURLOPT_NOPROGRESS, 0)
    }

    func setDebugCallback(_ cb: ferry_curl_debug_cb) {
        _ = ferry_curl_setopt_debug_cb(raw, cb)
        set(CURLOPT_VERBOSE, 1)
    }

    func info(_ key: CURLINFO) -> Int {
        var v = 0
        _ = ferry_curl_getinfo_long(raw, key, &v)
        return v
    }

    func info(large key: CURLINFO) -> Int64 {
        var v: Int64 = 0
        _ = ferry_curl_getinfo_off(raw, key, &v)
        return v
    }

    func info(string key: CURLINFO) -> String? {
        var p: UnsafePointer<CChar>?
        _ = ferry_curl_getinfo_string(raw, key, &p)
        return p.map { String(cString: $0) }
    }

    /// The text libcurl left in the error buffer, if any.
    var errorText: String {
        String(cString: errorBuffer)
    }
}

/// A libcurl result code with a readable name (the swift-system `Errno` pattern).
struct CurlCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    let rawValue: UInt32
    init(rawValue: UInt32) { self.rawValue = rawValue }
    init(_ c: CURLcode) { rawValue = c.rawValue }

    static let ok = CurlCode(CURLE_OK)
    static let couldntResolveHost = CurlCode(CURLE_COULDNT_RESOLVE_HOST)
    static let couldntConnect = CurlCode(CURLE_COULDNT_CONNECT)
    static let operationTimedOut = CurlCode(CURLE_OPERATION_TIMEDOUT)
    static let writeError = CurlCode(CURLE_WRITE_ERROR)
    static let outOfMemory = CurlCode(CURLE_OUT_OF_MEMORY)
    static let abortedByCallback = CurlCode(CURLE_ABORTED_BY_CALLBACK)
    static let partialFile = CurlCode(CURLE_PARTIAL_FILE)
    static let recvError = CurlCode(CURLE_RECV_ERROR)
    static let sendError = CurlCode(CURLE_SEND_ERROR)
    static let gotNothing = CurlCode(CURLE_GOT_NOTHING)
    static let loginDenied = CurlCode(CURLE_LOGIN_DENIED)
    static let remoteFileNotFound = CurlCode(CURLE_REMOTE_FILE_NOT_FOUND)
    static let remoteAccessDenied = CurlCode(CURLE_REMOTE_ACCESS_DENIED)
    static let quoteError = CurlCode(CURLE_QUOTE_ERROR)
    static let rangeError = CurlCode(CURLE_RANGE_ERROR)
    static let unsupportedProtocol = CurlCode(CURLE_UNSUPPORTED_PROTOCOL)
    static let urlMalformat = CurlCode(CURLE_URL_MALFORMAT)
    static let readError = CurlCode(CURLE_READ_ERROR)
    static let http2 = CurlCode(CURLE_HTTP2)
    static let ftpAcceptFailed = CurlCode(CURLE_FTP_ACCEPT_FAILED)
    static let ftpCouldntRetrFile = CurlCode(CURLE_FTP_COULDNT_RETR_FILE)
    static let uploadFailed = CurlCode(CURLE_UPLOAD_FAILED)
    static let weirdServerReply = CurlCode(CURLE_WEIRD_SERVER_REPLY)
    static let ftpWeirdPasvReply = CurlCode(CURLE_FTP_WEIRD_PASV_REPLY)
    static let ftpCantGetHost = CurlCode(CURLE_FTP_CANT_GET_HOST)
    static let ftpPortFailed = CurlCode(CURLE_FTP_PORT_FAILED)
    static let peerFailedVerification = CurlCode(CURLE_PEER_FAILED_VERIFICATION)
    static let sslConnectError = CurlCode(CURLE_SSL_CONNECT_ERROR)
    static let useSSLFailed = CurlCode(CURLE_USE_SSL_FAILED)
    static let badContentEncoding = CurlCode(CURLE_BAD_CONTENT_ENCODING)
    static let ftpBadFileList = CurlCode(CURLE_FTP_BAD_FILE_LIST)

    var description: String { String(cString: curl_easy_strerror(CURLcode(rawValue: rawValue))) }

    /// Whether trying again later may help: the network or the server hiccupped.
    var isTransient: Bool {
        switch self {
        case .couldntConnect, .operationTimedOut, .partialFile, .recvError, .sendError,
            .gotNothing, .http2, .ftpAcceptFailed, .weirdServerReply, .ftpWeirdPasvReply,
            .ftpCantGetHost, .ftpPortFailed, .sslConnectError:
            return true
        default:
            return false
        }
    }
}
