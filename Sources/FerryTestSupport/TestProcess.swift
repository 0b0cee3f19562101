import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Finds programs and runs them for tests.
public enum TestProcess {
    /// The result of a finished program.
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// The full path of a program on PATH (or in /usr/sbin, /sbin), nil when absent.
    public static func which(_ name: String) -> String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/sbin:/usr/local/sbin"
        for dir in path.split(separator: ":") {
            let p = "\(dir)/\(name)"
            if access(p, X_OK) == 0 { return p }
        }
        return nil
    }

    /// The full path of a program a test server runs, or `TestServerError.missing(missing)`
    /// ("apache2 (apt-get install apache2)") when it is not installed.
    public static func require(_ name: String, missing: String) throws -> String {
        guard let path = which(name) else { throw TestServerError.missing(missing) }
        return path
    }

    /// Runs a program to its end and captures its output.
    public static func run(
        _ executable: String, _ arguments: [String], cwd: String? = nil, environment: [String: String]? = nil,
        stdin: String? = nil
    ) throws -> Output {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        if let cwd { p.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        if let environment {
            p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let dir = try TempDir(prefix: "run")
        let outPath = dir.path + "/out"
        let errPath = dir.path + "/err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: outPath)
        p.standardError = FileHandle(forWritingAtPath: errPath)
        if let stdin {
            let inPath = dir.path + "/in"
            _ = FileManager.default.createFile(atPath: inPath, contents: Data(stdin.utf8))
            p.standardInput = FileHandle(forReadingAtPath: inPath)
        } else {
            p.standardInput = FileHandle.nullDevice
        }
        try p.run()
        p.waitWithoutRunLoop()
        let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return Output(status: p.terminationStatus, stdout: out, stderr: err)
    }

    /// The built `ferry` executable next to the test bundle.
    public static func ferryExecutable() -> String {
        var candidates: [String] = []
        if let exe = Bundle.main.executablePath {
            candidates.append(testParentFolder(exe) + "/ferry")
        }
        let arg0 = CommandLine.arguments.first ?? ""
        var dir = testParentFolder(arg0)
        for _ in 0..<4 {
            candidates.append(dir + "/ferry")
            dir = testParentFolder(dir)
        }
        // Fall back to the package's own build folder.
        let root = packageRoot()
        candidates += [root + "/.build/debug/ferry", root + "/.build/release/ferry"]
        for c in candidates where access(c, X_OK) == 0 { return c }
        return root + "/.build/debug/ferry"
    }

    /// The package's root folder (where Package.swift is).
    public static func packageRoot(file: String = #filePath) -> String {
        var dir = testParentFolder(file)
        while dir != "/" && !FileManager.default.fileExists(atPath: dir + "/Package.swift") {
            dir = testParentFolder(dir)
        }
        return dir
    }
}

/// A temporary folder removed when the value goes away.
public final class TempDir: Sendable {
    public let path: String

    public init(prefix: String = "ferry-test") throws {
        let template = NSTemporaryDirectory() + "/\(prefix)-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let p = mkdtemp(&bytes) else {
            throw NSError(domain: "TempDir", code: Int(errno))
        }
        path = String(cString: p)
    }

    deinit {
        // Make everything writable again so a test's read-only folders go too.
        if let e = FileManager.default.enumerator(atPath: path) {
            for case let sub as String in e { chmod(path + "/" + sub, 0o755) }
        }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A path inside the folder.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Makes the folder `name` inside (and its parents); its path.
    public func folder(_ name: String) throws -> String {
        try FileManager.default.createDirectory(atPath: file(name), withIntermediateDirectories: true)
        return file(name)
    }
}

/// The lines of a log file a test server writes (none while it does not exist).
enum TestLog {
    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}

extension ServerProcess {
    /// The lifecycle the test servers share: a free 127.0.0.1 port, the server
    /// started on it (`start` writes its configuration for that port and starts
    /// it), and a wait until it accepts connections; up to three times, since
    /// another process may take the port between choosing and binding it. The
    /// port and the running process (stopped when released), or
    /// `TestServerError.didNotStart` with `name`, the log and `diagnostics`.
    public static func listening(
        _ name: String, diagnostics: () -> String = { "" }, start: (_ port: Int) throws -> ServerProcess
    ) throws -> (port: Int, process: ServerProcess) {
        var failure = ""
        for _ in 0..<3 {
            let port = Loopback.freePort()
            let process = try start(port)
            if Loopback.waitForPort(port, while: process) { return (port, process) }
            failure = process.log + diagnostics()
            process.stop()
        }
        throw TestServerError.didNotStart("\(name): " + failure)
    }
}

/// A long-running server process that tests start and stop.
public final class ServerProcess: @unchecked Sendable {
    // Safe: `process` is set in init and only read afterwards; Process is thread-safe for terminate.
    public let process: Process
    public let logPath: String

    public init(
        _ executable: String, _ arguments: [String], cwd: String? = nil, logPath: String,
        environment: [String: String]? = nil
    ) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        self.logPath = logPath
        guard FileManager.default.createFile(atPath: logPath, contents: nil),
            let log = FileHandle(forWritingAtPath: logPath)
        else { throw TestServerError.didNotStart("\(executable): cannot create its log \(logPath)") }
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Sends a signal (SIGKILL by default).
    public func signal(_ sig: Int32 = SIGKILL) {
        kill(process.processIdentifier, sig)
    }

    private let stopped = Mutex(false)

    /// Stops the process (SIGTERM, then SIGKILL after 0.2 s) and waits for it. Idempotent.
    public func stop() {
        let first = stopped.withLock { s -> Bool in
            defer { s = true }
            return !s
        }
        guard first else { return }
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(0.2)
            while process.isRunning && Date() < deadline { usleep(5_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitWithoutRunLoop()
    }

    deinit { stop() }

    /// What the process printed.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}

/// Loopback networking helpers.
public enum Loopback {
    /// A TCP port on 127.0.0.1 that was free a moment ago.
    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) }
        }
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// A listening TCP socket on 127.0.0.1 with a free port: (descriptor, port).
    public static func listen(backlog: Int32, what: String) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, len) == 0 && Glibc.listen(fd, backlog) == 0 && getsockname(fd, $0, &len) == 0
            }
        }
        guard ok else {
            close(fd)
            throw TestServerError.didNotStart("\(what): bind failed")
        }
        return (fd, Int(UInt16(bigEndian: addr.sin_port)))
    }

    /// A TCP connection to `host` (127.0.0.1 unless told) at `port`: the connected
    /// descriptor, or nil when the connection failed.
    public static func connect(port: Int, host: String = "127.0.0.1") -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr(host)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Waits until something accepts connections on the port.
    public static func waitForPort(_ port: Int, timeout: TimeInterval = 10, while server: ServerProcess? = nil) -> Bool
    {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let server, !server.process.isRunning { return false }
            if let fd = connect(port: port) {
                close(fd)
                return true
            }
            usleep(20_000)
        }
        return false
    }
}

extension Process {
    /// Waits for the process to end by polling, unlike `waitUntilExit()`, which
    /// runs the calling thread's run loop and so gives the thread a CFRunLoop. A
    /// thread holding one crashes under ThreadSanitizer when it exits
    /// (CoreFoundation's thread-exit destructor allocates after TSan has let go of
    /// the thread), which killed test runs under `scripts/sanitize.sh thread`.
    public func waitWithoutRunLoop() {
        while isRunning { usleep(2_000) }
    }
}

/// The folder holding `path`, as `dirname` says (`.` for a bare name, `/` for
/// `/a`), without `NSString.deletingLastPathComponent`, which crashes this
/// toolchain's Foundation for a one-character string. FerryKit's `LocalPath`
/// does the same; this target depends on nothing.
func testParentFolder(_ path: String) -> String {
    var p = Substring(path)
    while p.count > 1 && p.hasSuffix("/") { p = p.dropLast() }
    guard let slash = p.lastIndex(of: "/") else { return "." }
    var head = p[..<slash]
    while head.hasSuffix("/") { head = head.dropLast() }
    return head.isEmpty ? "/" : String(head)
}
