import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One SFTP session over OpenSSH's own client: `ssh -s HOST sftp` as a child
/// process whose standard input and output are one end of a socket pair, and
/// Ferry speaking SFTP version 3 (`SFTPWire`) on the other, as lftp does.
/// OpenSSH brings its ciphers (AES-GCM, chacha20-poly1305, on its own core),
/// and every `ssh_config` feature (agent, certificates, FIDO keys, ProxyJump,
/// ControlMaster); the host key is checked by `ssh` against the files Ferry's
/// policy names (`SFTPOpenSSH.arguments`).
///
/// Blocking and used by one thread at a time: its pool (`SFTPChannelPool`) runs
/// every call on the channel's own `SerialThread`, so no async task waits on it.
final class SFTPChannel: @unchecked Sendable {
    let process: SSHProxyProcess
    private let fd: Int32
    private var nextID: UInt32 = 1
    /// Received bytes; a packet is `buffer[start..<start + 4 + length]`.
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var filled = 0
    /// How long a reply may take before the connection counts as stalled.
    var replyTimeout: Duration
    /// Set once the connection broke: the channel is not used again.
    private(set) var broken: FerryError?
    /// The largest read the server serves whole (`limits@openssh.com`, else
    /// the 32 KiB every server must).
    private(set) var readSize = 32 << 10
    /// The server's extensions from its `version` reply.
    private(set) var extensions: [String: String] = [:]

    /// Starts `ssh` and says hello; throws `ssh`'s own words when it could not
    /// connect or log in.
    init(arguments: [String], connectTimeout: Duration, replyTimeout: Duration, target: String) throws(FerryError) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw FerryError(.localIO, operation: "connect", target: target, detail: String(cString: strerror(errno)))
        }
        fd = pair[0]
        process = SSHProxyProcess(proxy: SSHProxy(arguments: arguments, description: "ssh"))
        buffer = .allocate(byteCount: SFTPWire.maxPacket * 2, alignment: 16)
        self.replyTimeout = connectTimeout
        let theirs = pair[1]
        let process = self.process
        let thread = Thread { process.run(on: theirs) }
        thread.name = "ferry-ssh"
        thread.start()
        do throws(FerryError) {
            try send(SFTPWire.Request(.initialize, id: SFTPWire.version), operation: "connect", target: target)
            let version = try receive(operation: "connect", target: target) { reply throws(FerryError) in
                guard case .version(let v, let ext) = reply else {
                    throw FerryError(
                        .protocolError, operation: "connect", target: target,
                        detail: "the server's SFTP answered its greeting with something else")
                }
                return (v, ext)
            }
            guard version.0 >= 3 else {
                throw FerryError(
                    .unsupportedOperation, operation: "connect", target: target,
                    detail: "the server speaks SFTP version \(version.0); Ferry needs version 3")
            }
            extensions = version.1
            self.replyTimeout = replyTimeout
            if extensions["limits@openssh.com"] != nil { try askLimits(target: target) }
        } catch {
            close()
            throw error
        }
    }

    deinit {
        Glibc.close(fd)
        buffer.deallocate()
    }

    /// Ends the session: `ssh` sees its input end and exits (stopped if it lingers).
    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        process.stop()
        if broken == nil { broken = FerryError(.cancelled, operation: "connect", target: "") }
    }

    /// Requests whose replies are dropped when they come (a `close` not waited for).
    private var forgotten = Set<UInt32>()

    /// Drops the reply to `id` when it comes.
    func forget(_ id: UInt32) { forgotten.insert(id) }

    /// Drops the replies to `ids` when they come.
    func forget(_ ids: [UInt32]) { forgotten.formUnion(ids) }

    /// A new request id.
    func id() -> UInt32 {
        defer { nextID &+= 1 }
        return nextID
    }

    /// `limits@openssh.com`: the server's largest read, so each request asks for
    /// as much as it will serve whole (OpenSSH: 255 KiB; Ferry takes at most 256 KiB).
    private func askLimits(target: String) throws(FerryError) {
        var r = SFTPWire.Request(.extended, id: id())
        r.string("limits@openssh.com")
        try send(r, operation: "connect", target: target)
        // uint64 max-packet-length, max-read-length, max-write-length, max-open-handles.
        let read = try receive(operation: "connect", target: target) { reply throws(FerryError) -> UInt64? in
            guard case .extendedReply(_, let rest) = reply else { return nil }
            var r = SFTPWire.Reader(rest)
            _ = try? r.u64()
            return try? r.u64()
        }
        if let read, read >= 4096 { readSize = Int(min(read, 256 << 10)) }
    }

    // MARK: moving packets

    /// Sends one request whole.
    func send(_ request: SFTPWire.Request, operation: String, target: String) throws(FerryError) {
        if let broken { throw Self.renamed(broken, operation: operation, target: target) }
        let packet = request.packet
        var sent = 0
        while sent < packet.count {
            let n = packet.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                sent += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN) {
                try wait(for: Int16(POLLOUT), operation: operation, target: target)
            } else {
                throw fail(operation: operation, target: target)
            }
        }
    }

    /// Reads the next reply and hands it to `body` while its bytes are in the
    /// buffer (a `data` reply's bytes are not copied).
    func receive<T>(
        operation: String, target: String, _ body: (SFTPWire.Reply) throws(FerryError) -> T
    ) throws(FerryError) -> T {
        if let broken { throw Self.renamed(broken, operation: operation, target: target) }
        while true {
            let have = filled - start
            if have >= 4 {
                let p = UnsafeRawBufferPointer(buffer).baseAddress! + start
                let length =
                    Int(p.load(fromByteOffset: 0, as: UInt8.self)) << 24
                    | Int(p.load(fromByteOffset: 1, as: UInt8.self)) << 16
                    | Int(p.load(fromByteOffset: 2, as: UInt8.self)) << 8
                    | Int(p.load(fromByteOffset: 3, as: UInt8.self))
                guard length >= 1, length <= SFTPWire.maxPacket else {
                    broken = FerryError(
                        .protocolError, operation: operation, target: target,
                        detail: "the server's SFTP sent a packet of \(length) bytes")
                    close()
                    throw broken!
                }
                if have >= 4 + length {
                    let packet = UnsafeRawBufferPointer(start: p + 4, count: length)
                    start += 4 + length
                    let reply: SFTPWire.Reply
                    do {
                        reply = try SFTPWire.Reply(packet)
                    } catch {
                        broken = FerryError(
                            .protocolError, operation: operation, target: target,
                            detail: "the server's SFTP sent a reply Ferry cannot read")
                        close()
                        throw broken!
                    }
                    if case .version = reply {
                    } else if forgotten.remove(reply.id) != nil {
                        continue
                    }
                    return try body(reply)
                }
            }
            // Room for a whole packet after `start`, else move what is there to the front.
            if buffer.count - start < SFTPWire.maxPacket + 4 || filled == start {
                if filled > start {
                    memmove(buffer.baseAddress!, buffer.baseAddress! + start, filled - start)
                }
                filled -= start
                start = 0
            }
            try wait(for: Int16(POLLIN), operation: operation, target: target)
            let n = recv(fd, buffer.baseAddress! + filled, buffer.count - filled, Int32(MSG_DONTWAIT))
            if n > 0 {
                filled += n
            } else if n < 0 && (errno == EINTR || errno == EAGAIN) {
                continue
            } else {
                throw fail(operation: operation, target: target)
            }
        }
    }

    /// Waits until the socket is ready, at most `replyTimeout`.
    private func wait(for events: Int16, operation: String, target: String) throws(FerryError) {
        let deadline = ContinuousClock.now + replyTimeout
        while true {
            var p = pollfd(fd: fd, events: events, revents: 0)
            let left = deadline - ContinuousClock.now
            if left <= .zero {
                broken = FerryError(
                    .timedOut, operation: operation, target: target,
                    detail: "the server sent nothing for \(Int(replyTimeout / .seconds(1))) s", isTransient: true)
                close()
                throw broken!
            }
            let ms = Int32(min(left / .milliseconds(1), 1000).rounded(.up))
            let r = poll(&p, 1, max(1, ms))
            if r > 0 { return }
            if r < 0 && errno != EINTR { throw fail(operation: operation, target: target) }
        }
    }

    /// The connection ended: `ssh`'s own words when it exited with an error.
    private func fail(operation: String, target: String) -> FerryError {
        let words = process.failure(waiting: .seconds(2))
        let e = SFTPOpenSSH.error(sshSaid: words, operation: operation, target: target)
        // Set before `close`, which marks a channel closed without a cause as cancelled.
        broken = e
        close()
        return e
    }

    private static func renamed(_ e: FerryError, operation: String, target: String) -> FerryError {
        var e = e
        e.operation = operation
        if !target.isEmpty { e.target = target }
        return e
    }
}
