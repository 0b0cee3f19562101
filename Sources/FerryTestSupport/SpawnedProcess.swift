import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A server program started with `posix_spawn` in its own process group, output to
/// a log file, stopped (with its whole group) when released.
///
/// Not Foundation's `Process`: vsftpd and proftpd close the descriptors they
/// inherit, which makes corelibs-foundation reap them early with a blocking
/// `wait4` on its monitor thread; every other `Process` in the test run then
/// hangs. Plain `posix_spawn` + `waitpid` has no such coupling, and the child
/// inherits no descriptor beyond stdin, stdout and stderr.
public final class SpawnedProcess: Sendable {
    /// The process id, which is also its process group id.
    public let pid: pid_t
    /// Where its standard output and error go.
    public let logPath: String
    /// Set once the process was reaped. Guarded by the Mutex.
    private let exited = Mutex(false)

    /// Starts `executable` with `arguments`; stdin is /dev/null.
    public init(_ executable: String, _ arguments: [String], logPath: String) throws {
        self.logPath = logPath
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Inherit nothing else. An inherited descriptor keeps another child's end
        // of a pipe or socket open: Foundation's Process watches a socket to see
        // its own children exit, and would wait forever while this server lives.
        Self.closeInheritedDescriptors(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own group, so stopping it also stops the session processes it forks.
        // A clean signal state: the test runner's threads block signals, and a
        // server that inherits a blocked SIGTERM (or SIGCHLD) misbehaves.
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv, environ)
        guard rc == 0 else {
            throw TestServerError.didNotStart("\(executable): \(String(cString: strerror(rc)))")
        }
        pid = child
    }

    deinit { stop() }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+) is declared only
    /// under `_GNU_SOURCE`, which Swift's Glibc module does not set: look it up.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let closeFrom: CloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: CloseFrom.self) }

    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        if let closeFrom, closeFrom(&actions, 3) == 0 { return }
        // Older glibc: close what is open now.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
    }

    /// Whether the process is still running (reaps it when it has ended).
    public var isRunning: Bool {
        exited.withLock { done in
            if done { return false }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { done = true }
            return !done
        }
    }

    /// What the process printed.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Stops the process group: SIGTERM, then SIGKILL after `grace`. Idempotent.
    public func stop(grace: TimeInterval = 0.5) {
        guard isRunning else { return }
        kill(-pid, SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        while isRunning && Date() < deadline { usleep(1_000) }
        kill(-pid, SIGKILL)
        exited.withLock { done in
            guard !done else { return }
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            done = true
        }
    }

    /// Starts a server on a free loopback port, up to three times (another
    /// process may take the port between choosing and binding it): `start` is
    /// given the port and spawns the server. The port and the running process,
    /// or `TestServerError.didNotStart` with `name` and the last log.
    public static func listening(
        _ name: String, start: (Int) throws -> SpawnedProcess
    ) async throws -> (port: Int, process: SpawnedProcess) {
        var failure = ""
        for _ in 0..<3 {
            let port = Loopback.freePort()
            let process = try start(port)
            if await process.waitForPort(port), process.isRunning { return (port, process) }
            failure = process.log
            process.stop()
        }
        throw TestServerError.didNotStart(name + ": " + failure)
    }

    /// Waits until something accepts connections on `port`, or the process ended.
    /// Sleeps between tries without blocking a thread of the test's pool.
    public func waitForPort(_ port: Int, timeout: Duration = .seconds(20)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard isRunning else { return false }
            if Self.accepts(port) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// One connection attempt to 127.0.0.1:`port`.
    static func accepts(_ port: Int) -> Bool {
        guard let fd = Loopback.connect(port: port) else { return false }
        close(fd)
        return true
    }
}
