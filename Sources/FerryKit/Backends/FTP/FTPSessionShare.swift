import CCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One TLS session cache for every FTPS easy handle (a libcurl share handle with
/// `CURL_LOCK_DATA_SSL_SESSION`).
///
/// Why: each Ferry operation is its own easy handle, reusing the control
/// connection an earlier handle opened. FTPS servers such as vsftpd
/// (`require_ssl_reuse=YES`, its default) accept a data connection only when it
/// resumes the control connection's TLS session, and libcurl looks that session
/// up in the cache of the handle doing the transfer. Without a shared cache every
/// operation after the first fails with "522 SSL connection failed: session reuse
/// required".
///
/// libcurl calls the lock callbacks from whichever thread uses a handle (the
/// engine thread, and a submitter setting `CURLOPT_SHARE`); the pthread mutex they
/// take is what makes `@unchecked Sendable` safe. Lives for the whole process.
final class FTPSessionShare: @unchecked Sendable {
    static let shared = FTPSessionShare()

    let raw: UnsafeMutableRawPointer
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    private init() {
        _ = curlGlobalInit
        raw = curl_share_init()!
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        // The mutex pointer is the callbacks' context; both live as long as the process.
        _ = ferry_curl_share_setopt_pointer(raw, CURLSHOPT_USERDATA, UnsafeMutableRawPointer(mutex))
        _ = ferry_curl_share_setopt_lock_cb(raw) { _, _, _, ctx in
            pthread_mutex_lock(ctx!.assumingMemoryBound(to: pthread_mutex_t.self))
        }
        _ = ferry_curl_share_setopt_unlock_cb(raw) { _, _, ctx in
            pthread_mutex_unlock(ctx!.assumingMemoryBound(to: pthread_mutex_t.self))
        }
        _ = ferry_curl_share_setopt_long(raw, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
    }

    /// Makes `easy` use the shared TLS session cache. Only for a handle that has
    /// never run a transfer without it (`EasyHandle(tlsSessionCache: .ftpShare)`
    /// does this): libcurl 7.88 leaks the cache of a handle that had its own.
    func attach(_ easy: EasyHandle) {
        easy.set(CURLOPT_SHARE, pointer: raw)
    }
}
