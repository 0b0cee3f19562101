import CSMBClient
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One server as libsmbclient talks to it: a small pool of contexts, each on a
/// thread of its own (`SerialThread`). libsmbclient's calls block and a context
/// must not be used by two threads at once, so every call on a context runs on
/// its thread, one after another; several files move at once on several
/// contexts (`-j`), and each server has its own pool, so a slow file on one
/// server never holds up another server's work.
final class SMBServer: Sendable {
    /// Which server and login: one pool per key for the life of the process.
    struct Key: Hashable, Sendable {
        var host: String
        var port: Int
        var workgroup: String
        var user: String
        /// Never printed; part of the key so another password gets its own contexts.
        var password: String
        var encrypt: Bool
    }

    let key: Key
    private let connections = Mutex<[SMBConnection]>([])
    /// Contexts and transfers at once; nil size: the process's per-server limit
    /// (`Ferry.setConnectionLimits`, the CLI's `-j`) when the first is made.
    private let slots: ConnectionSlots

    private init(key: Key, size: Int?) {
        self.key = key
        slots = ConnectionSlots(size: size)
    }

    private var size: Int { slots.size }

    private static let servers = Registry<Key, SMBServer>()

    /// The pool for `key`, made with up to `size` contexts on first use.
    static func shared(_ key: Key, size: Int?) -> SMBServer {
        servers.value(for: key) { SMBServer(key: key, size: size) }
    }

    /// The context with the least work queued: an idle one, else a new one
    /// while the pool has room, else the least busy.
    private func pick() -> SMBConnection {
        connections.withLock { all in
            if let idle = all.first(where: { $0.busy == 0 }) { return idle.claimed() }
            if all.count < size {
                let c = SMBConnection(key: key, number: all.count + 1)
                all.append(c)
                return c.claimed()
            }
            return all.min(by: { $0.busy < $1.busy })!.claimed()
        }
    }

    /// Runs `body` on a context's thread (logged in on first use); `alone`:
    /// while no other context runs a job (``SMBConnection/run(alone:_:)``).
    func run<T: Sendable>(
        alone: Bool = false,
        _ body: @escaping @Sendable (_ context: SMBContext) throws(FerryError) -> T
    ) async throws(FerryError) -> T {
        let connection = pick()
        defer { connection.release() }
        return try await connection.run(alone: alone, body)
    }

    /// Runs `body` with one context kept for it (an open file belongs to its
    /// context): a transfer's jobs all go to that context. At most `size`
    /// transfers run at once per server (`maxConnections`, the CLI's `-j`); the
    /// others wait here, in turn, before they take any memory or server handle.
    func holding<T: Sendable, E: Error>(_ body: (SMBConnection) async throws(E) -> T) async throws(E) -> T {
        try await slots.holding { () async throws(E) -> T in
            let connection = pick()
            defer { connection.release() }
            return try await body(connection)
        }
    }
}

/// One libsmbclient context and the thread it is used on.
final class SMBConnection: Sendable {
    private let thread: SerialThread
    private let handle: SMBContext
    private let count = Mutex(0)

    init(key: SMBServer.Key, number: Int) {
        thread = SerialThread(name: "ferry.smb.\(number)")
        handle = SMBContext(key: key)
    }

    /// Jobs given to this context that have not ended.
    var busy: Int { count.withLock { $0 } }

    func claimed() -> SMBConnection {
        count.withLock { $0 += 1 }
        return self
    }

    func release() { count.withLock { $0 -= 1 } }

    /// Runs one short job on this context's thread. With Samba's thread hooks in
    /// (`SMBContext.threaded`) it shares the library's lock with the other
    /// contexts' jobs, which run at the same time; it holds the lock alone when
    /// `alone`, when the hooks are out, and while the context has not yet had a
    /// job that went well: its first (made, logged in: Samba's one-time set-ups
    /// run then), and the one after a failure (which may connect again).
    func run<T: Sendable>(
        alone: Bool = false,
        _ body: @escaping @Sendable (_ context: SMBContext) throws(FerryError) -> T
    ) async throws(FerryError) -> T {
        try await thread.run { [handle] () throws(FerryError) -> T in
            let alone = alone || !SMBContext.threaded || handle.unproven
            return try SMBContext.library.with(alone: alone) { () throws(FerryError) -> T in
                if !alone {
                    SMBContext.atOnce.withLock {
                        $0.now += 1
                        $0.most = max($0.most, $0.now)
                    }
                }
                defer { if !alone { SMBContext.atOnce.withLock { $0.now -= 1 } } }
                handle.unproven = false
                do throws(FerryError) {
                    return try body(handle)
                } catch {
                    handle.unproven = true
                    throw error
                }
            }
        }
    }
}

/// A libsmbclient context, touched only on its connection's thread: made on
/// first use, it keeps its connection to the server (and reconnects after one
/// dropped) for every call after.
final class SMBContext: @unchecked Sendable {
    let key: SMBServer.Key
    private var pointer: SMBHandle?
    /// Whether the context's next job runs alone (`SMBConnection.run`): until a
    /// job has gone well, and after one that failed (`error(_:operation:target:path:)`).
    var unproven = true

    /// Whether Samba's thread hooks are in (`ferry_smb_threaded`; off with
    /// `FERRY_SMB_THREADS=0`): jobs on several contexts then run at the same
    /// time (`SMBConnection.run`).
    static let threaded = ferry_smb_threaded() != 0

    init(key: SMBServer.Key) { self.key = key }

    deinit {
        if let pointer { SMBContext.library.with(alone: true) { ferry_smb_free(pointer) } }
    }

    /// The process's one lock on libsmbclient, held by every job
    /// (`SMBConnection.run`), shared or alone. Samba 4.17's libsmbclient keeps
    /// its talloc stack frame chain in globals unless thread hooks are installed
    /// (`smbc_thread_posix`, which Debian's build does not export; the shim
    /// installs the same hooks through libsamba-util's `smb_thread_set_functions`):
    /// without them two contexts on two threads at once abort ("Freed frame ...,
    /// expected ...", "Bad talloc magic value"), so every job holds it alone.
    /// With them, jobs share it, except where Samba changes its global settings:
    /// a context made (`smbc_new_context` and its options rewrite loadparm's
    /// values, which other threads' calls read: opens on other contexts failed
    /// with "convert_string_talloc_handle: Conversion error" and ENOMEM while one
    /// was made) or freed, its first connection, a connection made again after a
    /// failure, and the share list's RPC pipe. Work is cut into short jobs (one
    /// open, one 4 MiB read or write), so where files take turns none waits for
    /// another's whole file.
    static let library = SharedLock()

    /// Jobs sharing the library's lock now, in the whole process, and the most
    /// there have been (the tests' evidence that contexts overlap).
    static let atOnce = Mutex<(now: Int, most: Int)>((0, 0))

    /// The context, made on first use (under `library`, as every job runs).
    func context(operation: String, target: String) throws(FerryError) -> SMBHandle {
        if let pointer { return pointer }
        let made = ferry_smb_new(
            key.workgroup, key.user, key.password, Int32(key.port), 30_000, key.encrypt ? 1 : 0)
        guard let c = made else {
            // The library is opened on first use (Sources/CSMBClient/shim.h), so a
            // missing one shows here, not when ferry starts.
            let detail =
                errno == ELIBACC
                ? "libsmbclient.so.0 could not be loaded: install it (apt install libsmbclient)"
                : "libsmbclient could not start: \(String(cString: strerror(errno)))"
            throw FerryError(.unexpected, operation: operation, target: target, detail: detail)
        }
        pointer = c
        return c
    }

    /// The `smb://host/share/path` libsmbclient is given for a decoded path
    /// (`/share/dir/name`): each byte outside the unreserved set percent-encoded,
    /// as libsmbclient decodes it (`%`, `#`, `?`, spaces and UTF-8 names).
    func wire(_ path: String) -> String {
        var out = "smb://"
        out += key.host.contains(":") ? "[" + key.host + "]" : key.host
        out += "/"
        let p = path.utf8.first == UInt8(ascii: "/") ? path.dropFirst() : Substring(path)
        for byte in p.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(_ n: Int) -> String {
        count >= n ? self : String(repeating: "0", count: n - count) + self
    }
}

/// A libsmbclient context.
typealias SMBHandle = UnsafeMutablePointer<SMBCCTX>
