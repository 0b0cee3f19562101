import CCurl
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The live sockets of servers whose idle connections are let go
/// (`LanePolicy/releaseIdleAfter`), so the engine can close a card's connection
/// that libcurl would keep in its pool for reuse: libcurl has no call that
/// closes one host's idle connections, and `CURLOPT_MAXAGE_CONN` only takes
/// effect when a connection is next looked for, which an idle page never does.
///
/// A job of such a server gets two callbacks: `CURLOPT_SOCKOPTFUNCTION` records
/// each socket libcurl opens for it under the job's host key, and
/// `CURLOPT_CLOSESOCKETFUNCTION` (which libcurl keeps with the connection, so
/// it runs whichever job last used it) forgets and closes it. ``shutDown(_:)``
/// shuts a host's sockets down (`shutdown(2)`, not `close`: the descriptor stays
/// libcurl's): the server sees the connection end and frees its slot; libcurl
/// finds the connection dead when it next looks and opens a new one.
///
/// Called on the engine thread (the callbacks run in `curl_multi_perform`); the
/// registry is a `Mutex` because libcurl may also close a socket while another
/// thread cleans up a handle.
enum IdleSockets {
    private static let live = Mutex<[Int32: String]>([:])

    /// Makes `job`'s handle report its sockets. Before the job is added to libcurl.
    static func track(_ job: CurlJob) {
        CurlEngine.assertOnEngineThread()
        job.easy.set(CURLOPT_SOCKOPTDATA, pointer: Unmanaged.passUnretained(job).toOpaque())
        _ = ferry_curl_setopt_sockopt_cb(job.easy.raw) { context, fd, _ in
            let job = Unmanaged<CurlJob>.fromOpaque(context!).takeUnretainedValue()
            IdleSockets.live.withLock { $0[fd] = job.hostKey }
            return CURL_SOCKOPT_OK
        }
        job.easy.set(CURLOPT_CLOSESOCKETDATA, pointer: nil)
        _ = ferry_curl_setopt_closesocket_cb(job.easy.raw) { _, fd in
            IdleSockets.live.withLock { _ = $0.removeValue(forKey: fd) }
            return close(fd)
        }
    }

    /// Ends every connection to `key` the engine knows of. Only called when no
    /// transfer of `key` runs, so every one of them is idle in libcurl's pool.
    static func shutDown(_ key: String) {
        let sockets = live.withLock { live in live.filter { $0.value == key }.map(\.key) }
        for fd in sockets { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// How many sockets of `key` libcurl holds open now (shut down or not).
    static func count(of key: String) -> Int { live.withLock { $0.values.filter { $0 == key }.count } }
}
