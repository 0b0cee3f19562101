import CCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TLS session cache and a connection cache for easy handles that must keep
/// to their own connection (a libcurl share handle with
/// `CURL_LOCK_DATA_SSL_SESSION` and `CURL_LOCK_DATA_CONNECT`): one *lane*, whose
/// handles run one at a time over one connection. The engine gives lanes to jobs
/// whose handle asks for one (`TLSSessionCache.lane`), knowing nothing of why:
/// FTPS needs them for its data connections (below), SFTP for connections per
/// host key (`SFTPEndpoint`).
///
/// Why lanes: FTPS servers such as vsftpd (`require_ssl_reuse=YES`, its default)
/// and proftpd's mod_tls (its default) accept a data connection only when it
/// resumes the TLS session of *its own* control connection. libcurl 7.88 does
/// not remember which session that was: a data connection resumes whatever
/// session the handle's cache holds for the host and port, and every new control
/// connection puts its session there, replacing the last one. One process-wide
/// cache therefore handed the data connections of `get -r -j 4` the session of
/// another control connection ("522 SSL connection failed: session reuse
/// required"; proftpd: "425 Unable to build data connection"). Newer libcurl
/// keeps the control connection's session for its data connections (curl pull
/// request 22246, 2026); 7.88 needs this.
///
/// A lane keeps its own connections as well as its sessions, so a handle in lane
/// N only reuses lane N's control connection, whose session is the one lane N's
/// cache holds. The engine gives each running FTPS job a lane no other running
/// job of the same server uses (`ConnectionLanes`), so a lane never has two
/// control connections to one server at once.
///
/// libcurl calls the lock callbacks from whichever thread uses a handle (the
/// engine thread, and a handle's owner detaching it before the pool takes it
/// back); the pthread mutexes they take, one per kind of data as in libcurl's
/// examples, are what make `@unchecked Sendable` safe.
final class ConnectionLane: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
    /// One mutex per `curl_lock_data` value.
    private let mutexes: UnsafeMutablePointer<pthread_mutex_t>
    private static let lockCount = Int(CURL_LOCK_DATA_LAST.rawValue)

    init() {
        _ = curlGlobalInit
        raw = curl_share_init()!
        mutexes = .allocate(capacity: Self.lockCount)
        for i in 0..<Self.lockCount { pthread_mutex_init(mutexes + i, nil) }
        _ = ferry_curl_share_setopt_pointer(raw, CURLSHOPT_USERDATA, UnsafeMutableRawPointer(mutexes))
        _ = ferry_curl_share_setopt_lock_cb(raw) { _, data, _, ctx in
            let m = ctx!.assumingMemoryBound(to: pthread_mutex_t.self)
            pthread_mutex_lock(m + Int(data.rawValue))
        }
        _ = ferry_curl_share_setopt_unlock_cb(raw) { _, data, ctx in
            let m = ctx!.assumingMemoryBound(to: pthread_mutex_t.self)
            pthread_mutex_unlock(m + Int(data.rawValue))
        }
        _ = ferry_curl_share_setopt_long(raw, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
        _ = ferry_curl_share_setopt_long(raw, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_CONNECT.rawValue))
    }

    /// Frees the share, closing its idle connections. libcurl refuses while a
    /// handle still uses it (`CURLSHE_IN_USE`): the share and its mutexes are then
    /// kept (a handle may still take a lock), which only an engine released with
    /// handles alive would see.
    func close() {
        guard curl_share_cleanup(raw) == CURLSHE_OK else { return }
        for i in 0..<Self.lockCount { pthread_mutex_destroy(mutexes + i) }
        mutexes.deallocate()
    }

    /// Makes `easy` use this lane's TLS sessions and connections. A handle made
    /// for lanes (`TLSSessionCache.lane`) meets a share before its first
    /// transfer and leaves it before the pool takes it back, so it never has a
    /// cache of its own: libcurl 7.88 leaks the cache of a handle given a share
    /// after a transfer without one (docs/RELIABILITY.md bug 15).
    func attach(_ easy: EasyHandle) {
        precondition(easy.tlsSessionCache.isLane, "a handle with its own TLS session cache given a lane")
        easy.set(CURLOPT_SHARE, pointer: raw)
    }
}

/// The engine thread's lanes (`ConnectionLane`): for each server key, the
/// lanes made so far and which of them a running job holds. Confined to the
/// engine thread.
struct ConnectionLanes {
    private var lanes: [String: [ConnectionLane]] = [:]
    private var busy: [String: Set<Int>] = [:]

    /// Gives a job about to run a lane nobody of its server (`key`) holds: the
    /// lowest free one, whose idle connection it may reuse, or a new one when it
    /// logs in afresh (`CURLOPT_FRESH_CONNECT`): in a lane with an idle
    /// connection, its new session would replace that connection's in the cache.
    /// Returns the lane's index for `release`.
    mutating func assign(_ key: String, fresh: Bool, to easy: EasyHandle) -> Int {
        var made = lanes[key, default: []]
        let taken = busy[key, default: []]
        let index: Int
        if fresh {
            index = made.count
        } else {
            index = (0..<made.count).first { !taken.contains($0) } ?? made.count
        }
        if index == made.count {
            made.append(ConnectionLane())
            lanes[key] = made
        }
        made[index].attach(easy)
        busy[key, default: []].insert(index)
        return index
    }

    /// The job in lane `index` of `key` has left the multi handle.
    mutating func release(_ key: String, _ index: Int) {
        busy[key]?.remove(index)
        if busy[key]?.isEmpty == true { busy[key] = nil }
    }

    /// Frees every lane (the engine is closing).
    mutating func close() {
        for share in lanes.values.joined() { share.close() }
        lanes = [:]
        busy = [:]
    }
}
