import CCurl
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How an SFTP connection reaches a server that `ssh_config` puts behind a jump
/// host (`ProxyJump`) or a command (`ProxyCommand`): OpenSSH's own `ssh -W
/// host:port jump` (or the command) runs as a child process whose standard
/// input and output are the connection, and libcurl's SSH session runs through
/// it to the final server, whose host key Ferry checks as for a direct
/// connection. The jump host's login and host key are `ssh`'s business, from
/// the same configuration (`BatchMode=yes`: it never asks for a password).
struct SSHProxy: Sendable, Hashable {
    /// The program and its arguments.
    let arguments: [String]
    /// For messages: `ProxyJump bastion` or `ProxyCommand ...`.
    let description: String

    /// The command as a shell would take it, for a person to run.
    var shellCommand: String {
        arguments.map { a in
            a.allSatisfy({ $0.isLetter || $0.isNumber || "-_./=:@,%+".contains($0) })
                ? a : "'" + a.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }.joined(separator: " ")
    }

    /// The command for `proxy` to reach `host:port` (the final server, after
    /// `HostName`), as OpenSSH builds it: the last jump host is the destination
    /// of `ssh -W`, the ones before it its own `-J`. `configFile`: given to `ssh`
    /// as `-F` when it is not the account's own `~/.ssh/config` (a test's or a
    /// service's `HOME`). `acceptNewHostKey`: `--accept-new-host-key`, passed on
    /// for the jump hosts' keys.
    static func make(
        _ proxy: SSHClientConfig.Proxy, host: String, port: Int, user: String, alias: String,
        configFile: String?, acceptNewHostKey: Bool
    ) -> SSHProxy {
        switch proxy {
        case .jump(let hops):
            var args = ["ssh"]
            if let configFile { args += ["-F", configFile] }
            args += ["-o", "BatchMode=yes"]
            if acceptNewHostKey { args += ["-o", "StrictHostKeyChecking=accept-new"] }
            if hops.count > 1 { args += ["-J", hops.dropLast().joined(separator: ",")] }
            let last = Jump(hops.last ?? "")
            if let u = last.user { args += ["-l", u] }
            if let p = last.port { args += ["-p", String(p)] }
            args += ["-W", "[\(host)]:\(port)", "--", last.host]
            return SSHProxy(arguments: args, description: "ProxyJump " + hops.joined(separator: ","))
        case .command(let command):
            var out = ""
            var i = command.startIndex
            while i < command.endIndex {
                let next = command.index(after: i)
                if command[i] == "%", next < command.endIndex {
                    switch command[next] {
                    case "h": out += host
                    case "p": out += String(port)
                    case "r": out += user
                    case "n": out += alias
                    case "%": out += "%"
                    default: out += String(command[i...next])
                    }
                    i = command.index(after: next)
                    continue
                }
                out.append(command[i])
                i = next
            }
            return SSHProxy(arguments: ["/bin/sh", "-c", "exec " + out], description: "ProxyCommand " + out)
        }
    }

    /// One `ProxyJump` hop: `[user@]host[:port]` or `ssh://[user@]host[:port]`,
    /// an IPv6 address in brackets.
    struct Jump: Hashable {
        var user: String?
        var host: String
        var port: Int?
    }
}

extension SSHProxy.Jump {
    init(_ text: String) {
        var s = Substring(text)
        if s.hasPrefix("ssh://") { s = s.dropFirst(6) }
        if let at = s.lastIndex(of: "@") {
            user = String(s[..<at])
            s = s[s.index(after: at)...]
        }
        if s.hasPrefix("["), let close = s.firstIndex(of: "]") {
            host = String(s[s.index(after: s.startIndex)..<close])
            let rest = s[s.index(after: close)...]
            if rest.hasPrefix(":") { port = Int(rest.dropFirst()) }
        } else if let colon = s.firstIndex(of: ":"), s.filter({ $0 == ":" }).count == 1 {
            host = String(s[..<colon])
            port = Int(s[s.index(after: colon)...])
        } else {
            host = String(s)
        }
    }
}

/// A proxy at work for one handle: libcurl's connection goes to a loopback
/// listener made for it alone, whose one accepted socket (checked to be this
/// connection's own, by its bound local port) becomes the child's standard
/// input and output. libcurl 7.88 connects every socket it opens (its
/// `CURL_SOCKOPT_ALREADY_CONNECTED` is ignored), so a socketpair cannot be
/// handed over; the kernel's loopback carries the bytes instead of a relay.
///
/// The handle's job keeps this alive (`SSHConnectionChecks`); the connection,
/// which libcurl may keep for later jobs, is tracked by its socket in
/// `SSHProxyProcess.live` and its child stopped when libcurl closes it.
final class SSHTunnel: @unchecked Sendable {
    let proxy: SSHProxy
    private let latest = Mutex<SSHProxyProcess?>(nil)

    init(proxy: SSHProxy) { self.proxy = proxy }

    /// Routes the handle's connections through the proxy.
    func install(on easy: EasyHandle) {
        // Never resolved nor dialled: the socket callback picks the address.
        easy.set(CURLOPT_CONNECT_TO, list: ["::127.0.0.1:"])
        easy.set(CURLOPT_OPENSOCKETDATA, pointer: Unmanaged.passUnretained(self).toOpaque())
        _ = ferry_curl_setopt_opensocket_cb(easy.raw) { ctx, purpose, address in
            guard let ctx, let address, purpose == CURLSOCKTYPE_IPCXN else { return -1 }
            return Unmanaged<SSHTunnel>.fromOpaque(ctx).takeUnretainedValue().open(address)
        }
        _ = ferry_curl_setopt_closesocket_cb(easy.raw) { _, fd in
            SSHProxyProcess.closed(fd)
            return 0
        }
    }

    private func open(_ address: UnsafeMutablePointer<curl_sockaddr>) -> Int32 {
        guard let (listener, listenAddress) = Self.loopbackSocket(listening: true) else { return -1 }
        guard let (client, clientAddress) = Self.loopbackSocket(listening: false) else {
            Glibc.close(listener)
            return -1
        }
        let process = SSHProxyProcess(proxy: proxy)
        withUnsafeMutableBytes(of: &address.pointee.addr) { raw in
            withUnsafeBytes(of: listenAddress) { raw.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<16])) }
        }
        address.pointee.family = AF_INET
        address.pointee.addrlen = UInt32(MemoryLayout<sockaddr_in>.size)
        latest.withLock { $0 = process }
        SSHProxyProcess.live.withLock { $0[client] = process }
        let thread = Thread { process.serve(listener: listener, peer: clientAddress) }
        thread.name = "ferry-ssh-proxy"
        thread.start()
        return client
    }

    /// A TCP socket bound to 127.0.0.1 on a free port, listening or not.
    private static func loopbackSocket(listening: Bool) -> (Int32, sockaddr_in)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(fd, sa, len) == 0 && (!listening || listen(fd, 4) == 0) && getsockname(fd, sa, &len) == 0
            }
        }
        guard ok else {
            Glibc.close(fd)
            return nil
        }
        return (fd, addr)
    }

    /// Why the proxy failed, in its own words, when it did (exited with an
    /// error, or could not start); nil while it runs or after a clean end.
    /// Waits up to a second for a child that is ending to be reaped.
    func failure() -> String? {
        guard let process = latest.withLock({ $0 }) else { return nil }
        return process.failure(waiting: .seconds(1))
    }
}

/// The child process behind one proxied connection, or behind one SFTP channel
/// (`SFTPChannel`: `ssh -s HOST sftp`).
final class SSHProxyProcess: @unchecked Sendable {
    /// The proxied connections libcurl holds, by socket.
    static let live = Mutex<[Int32: SSHProxyProcess]>([:])

    private struct State {
        var pid: pid_t = 0
        var status: Int32?
        var startError: String?
        var stopping = false
    }
    let proxy: SSHProxy
    private let state = Mutex(State())
    /// The child's standard error: an unlinked temporary file.
    private let stderrFile: Int32

    init(proxy: SSHProxy) {
        self.proxy = proxy
        var template = Array((NSTemporaryDirectory() + "/ferry-ssh-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd >= 0 {
            _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        stderrFile = fd
    }

    deinit { if stderrFile >= 0 { close(stderrFile) } }

    /// libcurl closed a socket: if it was a proxied connection, stop its child.
    static func closed(_ fd: Int32) {
        close(fd)
        live.withLock { $0.removeValue(forKey: fd) }?.stop()
    }

    func stop() {
        state.withLock { s in
            s.stopping = true
            if s.pid > 0 && s.status == nil { kill(s.pid, SIGTERM) }
        }
    }

    /// On its own thread: accepts the connection from `peer` (anything else is
    /// turned away), starts the child on it, and waits for the child to end.
    func serve(listener: Int32, peer: sockaddr_in) {
        defer { close(listener) }
        let deadline = ContinuousClock.now + .seconds(30)
        var accepted: Int32 = -1
        while accepted < 0 && ContinuousClock.now < deadline {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 1000) >= 0 || errno == EINTR else { break }
            if poller.revents == 0 { continue }
            var from = sockaddr_in()
            var len = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept(listener, $0, &len)
                }
            }
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if from.sin_port == peer.sin_port && from.sin_addr.s_addr == peer.sin_addr.s_addr {
                accepted = fd
            } else {
                close(fd)
            }
        }
        guard accepted >= 0 else {
            state.withLock { $0.startError = "the connection to the proxy never came" }
            return
        }
        // The child's writes are the server's data: no Nagle wait on loopback.
        var on: Int32 = 1
        _ = setsockopt(accepted, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        run(on: accepted)
    }

    /// Starts the child with `socket` as its standard input and output (closed
    /// here once the child has it), and waits for it to end. On a thread of its own.
    func run(on socket: Int32) {
        let pid = spawn(socket: socket)
        close(socket)
        guard let pid else { return }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        state.withLock { $0.status = status }
    }

    private func spawn(socket: Int32) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, socket, 0)
        posix_spawn_file_actions_adddup2(&actions, socket, 1)
        if stderrFile >= 0 { posix_spawn_file_actions_adddup2(&actions, stderrFile, 2) }
        // SIGTERM as default (the CLI ignores it, and an ignored signal stays
        // ignored across exec), so `stop` ends the child; SIGINT stays as it is:
        // Ctrl-C stops Ferry's transfers cleanly, not their connections.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = proxy.arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let rc = state.withLock { s -> Int32 in
            if s.stopping { return ECANCELED }
            let rc = posix_spawnp(&pid, argv[0]!, &actions, &attributes, argv, environ)
            if rc == 0 { s.pid = pid }
            return rc
        }
        guard rc == 0 else {
            if rc != ECANCELED {
                state.withLock { $0.startError = "cannot run \(proxy.arguments[0]): \(String(cString: strerror(rc)))" }
            }
            return nil
        }
        return pid
    }

    /// The child's error, once it ended with one (see `SSHTunnel.failure`).
    func failure(waiting: Duration) -> String? {
        let deadline = ContinuousClock.now + waiting
        while true {
            let s = state.withLock { $0 }
            if let e = s.startError { return e }
            if let status = s.status {
                // Exited (not killed by a signal) with a code: ssh's 255, a command's own.
                let exited = status & 0x7f == 0
                let code = (status >> 8) & 0xff
                guard exited && code != 0 else { return nil }
                let words = stderrText()
                return words.isEmpty ? "\(proxy.arguments[0]) exited with status \(code)" : words
            }
            if s.pid == 0 && s.stopping { return nil }
            if ContinuousClock.now >= deadline { return nil }
            usleep(20_000)
        }
    }

    /// What the child wrote to its standard error (the last 2,000 bytes).
    private func stderrText() -> String {
        guard stderrFile >= 0 else { return "" }
        let size = lseek(stderrFile, 0, SEEK_END)
        guard size > 0 else { return "" }
        let count = Int(min(size, 2000))
        var bytes = [UInt8](repeating: 0, count: count)
        let n = pread(stderrFile, &bytes, count, off_t(size) - off_t(count))
        guard n > 0 else { return "" }
        return String(decoding: bytes[..<n], as: UTF8.self)
            .split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
    }
}
