import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `ChaosProxy` for FTP: a proxy on 127.0.0.1 in front of an FTP server's control
/// port that also carries the data connections, so that faults reach them.
///
/// - The control connection is relayed line by line. `227 Entering Passive Mode
///   (h1,h2,h3,h4,p1,p2)` and `229 Entering Extended Passive Mode (|||port|)` are
///   rewritten to name a data listener of the proxy (opened for that one reply),
///   which connects to the server's real data port when the client connects.
/// - Every data connection gets one fault at a random byte, chosen when its first
///   byte shows which way the file goes. A download (RETR, MLSD): none (half of
///   them), reset (RST), truncate (FIN: a short file) or stall (silence for
///   `stall`, then RST). An upload (STOR, APPE): none (half), reset, truncate (the
///   server gets a FIN and stores a short file while the client's remaining bytes
///   are swallowed, so the client believes it sent everything), stall, or cut
///   upload (FIN to the server, RST to the client).
/// - Optionally the control connection too: each server reply line resets the
///   session with odds 1 in `controlResetOdds`; and every `refuseEPSVEvery`th
///   session answers `EPSV` with a 502 of the proxy's own, so the client falls
///   back to `PASV` and the 227 rewrite is exercised as well.
/// - For focused tests, `scriptedResets` and `scriptedDataFaults` put a fault
///   exactly where a test wants it.
///
/// Random choices come from one generator per control session, seeded from the
/// seed and the session's number: a run with one client at a time repeats its
/// faults as long as the server repeats its replies; with parallel clients, which
/// session gets which number depends on timing. `stop()` closes the listeners and ends every relay (threads poll every
/// 100 ms); it returns once all threads have ended.
public final class FTPChaosProxy: Sendable {
    public enum Fault: String, CaseIterable, Sendable {
        case none, reset, truncate, stall, cutUpload
    }

    public struct Settings: Sendable {
        public var seed: UInt64
        /// Faults strike within the first `maxOffset` bytes of a data connection.
        public var maxOffset: Int
        /// How long a stalled data connection stays silent before it is reset.
        public var stall: Duration = .seconds(3)
        /// Each server reply line resets the control connection with odds 1 in
        /// this (0: never).
        public var controlResetOdds = 0
        /// Every this-many-th session refuses `EPSV`, forcing `PASV` (0: none).
        public var refuseEPSVEvery = 0
        /// Whether data connections get faults at all.
        public var dataFaults = true
        /// Replies that reset the control connection instead of reaching the client.
        public var scriptedResets: Set<ScriptedReset> = []
        /// Faults for the first data connections that carry a byte, in the order
        /// their first bytes arrive; later ones get random faults (`dataFaults`).
        public var scriptedDataFaults: [ScriptedFault] = []

        public init(seed: UInt64, maxOffset: Int) {
            self.seed = seed
            self.maxOffset = maxOffset
        }
    }

    /// A fault at a chosen byte of a data connection.
    public struct ScriptedFault: Sendable {
        public var fault: Fault
        public var offset: Int

        public init(fault: Fault, offset: Int) {
            self.fault = fault
            self.offset = offset
        }
    }

    /// The `occurrence`th reply (from 1, counted over all sessions) to a command
    /// with this verb ("MLST", "RNTO") resets the control connection: the server
    /// did what was asked, the client never hears of it.
    public struct ScriptedReset: Hashable, Sendable {
        public var verb: String
        public var occurrence: Int

        public init(verb: String, occurrence: Int) {
            self.verb = verb
            self.occurrence = occurrence
        }
    }

    /// What the proxy did so far. Data faults are counted when they struck: a
    /// data connection that ended before its fault's byte counts as `none`.
    public struct Counts: Sendable, CustomStringConvertible {
        public var sessions = 0
        public var epsvRefusedSessions = 0
        public var controlResets = 0
        public var rewritten227 = 0
        public var rewritten229 = 0
        public var downloads: [Fault: Int] = [:]
        public var uploads: [Fault: Int] = [:]
        /// Data connections that carried no byte (an empty file), or passive
        /// replies the client never connected to.
        public var idle = 0

        public init() {}

        public var description: String {
            func faults(_ c: [Fault: Int], _ kinds: [Fault]) -> String {
                kinds.map { "\($0.rawValue) \(c[$0, default: 0])" }.joined(separator: ", ")
            }
            var parts = [
                "control: \(sessions) sessions (\(epsvRefusedSessions) refused EPSV), \(controlResets) reset, "
                    + "\(rewritten229) EPSV + \(rewritten227) PASV replies rewritten"
            ]
            if !downloads.isEmpty {
                parts.append("data down: " + faults(downloads, [.none, .reset, .truncate, .stall]))
            }
            if !uploads.isEmpty { parts.append("data up: " + faults(uploads, Fault.allCases)) }
            parts.append("idle \(idle)")
            return parts.joined(separator: "; ")
        }

        /// The change since `earlier`.
        public func since(_ earlier: Counts) -> Counts {
            var c = self
            c.sessions -= earlier.sessions
            c.epsvRefusedSessions -= earlier.epsvRefusedSessions
            c.controlResets -= earlier.controlResets
            c.rewritten227 -= earlier.rewritten227
            c.rewritten229 -= earlier.rewritten229
            c.downloads.merge(earlier.downloads) { $0 - $1 }
            c.uploads.merge(earlier.uploads) { $0 - $1 }
            c.idle -= earlier.idle
            return c
        }
    }

    public var port: Int { listener.port }
    private let core: Core
    private let listener: ProxyListener

    public init(upstreamPort: Int, settings: Settings) throws {
        let core = Core(upstreamPort: upstreamPort, settings: settings)
        self.core = core
        listener = try ProxyListener(what: "FTP chaos proxy") { client in core.accepted(client) }
    }

    deinit { stop() }

    /// Switches every fault off (and the EPSV refusals): from now on the proxy
    /// only relays, so a rerun can resume from the same URL its `.part` names.
    public func calm() { core.calm.store(true, ordering: .releasing) }

    /// Closes the listeners and ends every relay; true when all threads ended
    /// within 5 s.
    @discardableResult
    public func stop() -> Bool {
        listener.stop()
        return core.stop()
    }

    public var counts: Counts { core.state.withLock { $0.counts } }
}

// MARK: - The relays

extension FTPChaosProxy {
    /// Everything the threads share; the threads hold this, not the proxy, so that
    /// releasing the proxy stops them.
    final class Core: Sendable {
        struct State {
            var counts = Counts()
            var sessionNumber = 0
            /// Replies so far by the verb they answered.
            var replies: [String: Int] = [:]
            /// Data connections that carried a byte so far.
            var dataConnections = 0
        }
        let state = Mutex(State())
        let stopped = Atomic<Bool>(false)
        let calm = Atomic<Bool>(false)
        private let live = Atomic<Int>(0)
        let upstreamPort: Int
        let settings: Settings

        init(upstreamPort: Int, settings: Settings) {
            self.upstreamPort = upstreamPort
            self.settings = settings
        }

        var isStopped: Bool { stopped.load(ordering: .acquiring) }
        var isCalm: Bool { calm.load(ordering: .acquiring) }

        func spawn(_ body: @escaping @Sendable () -> Void) {
            live.add(1, ordering: .sequentiallyConsistent)
            let t = Thread { [self] in
                body()
                live.subtract(1, ordering: .sequentiallyConsistent)
            }
            t.start()
        }

        func stop() -> Bool {
            stopped.store(true, ordering: .releasing)
            let deadline = ContinuousClock.now + .seconds(5)
            while live.load(ordering: .sequentiallyConsistent) > 0 {
                if ContinuousClock.now > deadline { return false }
                usleep(10_000)
            }
            return true
        }

        // MARK: Control

        /// A control connection from the accept loop: a session of its own.
        func accepted(_ client: Int32) {
            guard !isStopped else {
                close(client)
                return
            }
            let number = state.withLock { s -> Int in
                s.sessionNumber += 1
                s.counts.sessions += 1
                return s.sessionNumber
            }
            spawn { [self] in session(client, number: number) }
        }

        private func session(_ client: Int32, number: Int) {
            var random = SeededRandom(seed: settings.seed ^ (UInt64(number) &* 0xD1B5_4A32_D192_ED03))
            guard let upstream = Loopback.connect(port: upstreamPort) else {
                close(client)
                return
            }
            let refuseEPSV = settings.refuseEPSVEvery > 0 && number % settings.refuseEPSVEvery == 0
            if refuseEPSV { state.withLock { $0.counts.epsvRefusedSessions += 1 } }
            var fromServer: [UInt8] = []
            var fromClient: [UInt8] = []
            // The command waiting for the first line of its reply.
            var awaiting: String?
            var buffer = [UInt8](repeating: 0, count: 16 << 10)
            relay: while !isStopped {
                var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0)]
                fds.append(pollfd(fd: upstream, events: Int16(POLLIN), revents: 0))
                guard poll(&fds, 2, 100) > 0 else { continue }
                if fds[1].revents != 0 {
                    let n = read(upstream, &buffer, buffer.count)
                    if n <= 0 { break }
                    fromServer += buffer[0..<n]
                    while let line = Self.takeLine(&fromServer) {
                        if let verb = awaiting {
                            awaiting = nil
                            let n = state.withLock { s -> Int in
                                s.replies[verb, default: 0] += 1
                                return s.replies[verb]!
                            }
                            if settings.scriptedResets.contains(ScriptedReset(verb: verb, occurrence: n)) {
                                state.withLock { $0.counts.controlResets += 1 }
                                Net.resetClose(client)
                                Net.resetClose(upstream)
                                return
                            }
                        }
                        if random.oneIn(settings.controlResetOdds) && !isCalm {
                            state.withLock { $0.counts.controlResets += 1 }
                            Net.resetClose(client)
                            Net.resetClose(upstream)
                            return
                        }
                        let out = rewrite(line, random: &random)
                        guard Net.sendAll(client, out, stopped: stopped) else { break relay }
                    }
                }
                if fds[0].revents != 0 {
                    let n = read(client, &buffer, buffer.count)
                    if n <= 0 { break }
                    fromClient += buffer[0..<n]
                    while let line = Self.takeLine(&fromClient) {
                        if refuseEPSV, !isCalm, line.count >= 4,
                            String(decoding: line.prefix(4), as: UTF8.self).uppercased() == "EPSV"
                        {
                            let refusal = Array("502 EPSV refused by the test proxy.\r\n".utf8)
                            guard Net.sendAll(client, refusal, stopped: stopped) else { break relay }
                            continue
                        }
                        awaiting = String(
                            decoding: line.prefix { $0 != 0x20 && $0 != 0x0D && $0 != 0x0A }, as: UTF8.self
                        )
                        .uppercased()
                        guard Net.sendAll(upstream, line, stopped: stopped) else { break relay }
                    }
                }
            }
            close(client)
            close(upstream)
        }

        /// The first line of `buffer` with its line feed, removed from it.
        static func takeLine(_ buffer: inout [UInt8]) -> [UInt8]? {
            guard let lf = buffer.firstIndex(of: 0x0A) else { return nil }
            let line = Array(buffer[...lf])
            buffer.removeSubrange(...lf)
            return line
        }

        /// A 227 or 229 reply naming a data listener of the proxy instead of the server's.
        private func rewrite(_ line: [UInt8], random: inout SeededRandom) -> [UInt8] {
            let text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix("229 ") {
                guard let open = text.range(of: "(|||"),
                    let end = text.range(of: "|)", range: open.upperBound..<text.endIndex),
                    let port = Int(text[open.upperBound..<end.lowerBound]),
                    let local = openDataRelay(host: "127.0.0.1", port: port, random: &random)
                else { return line }
                state.withLock { $0.counts.rewritten229 += 1 }
                return Array((text[..<open.upperBound] + String(local) + text[end.lowerBound...]).utf8)
            }
            if text.hasPrefix("227 ") {
                guard let match = text.firstMatch(of: /(\d+),(\d+),(\d+),(\d+),(\d+),(\d+)/),
                    let p1 = Int(match.output.5), let p2 = Int(match.output.6)
                else { return line }
                let host = "\(match.output.1).\(match.output.2).\(match.output.3).\(match.output.4)"
                guard let local = openDataRelay(host: host, port: p1 * 256 + p2, random: &random) else {
                    return line
                }
                state.withLock { $0.counts.rewritten227 += 1 }
                let replacement = "127,0,0,1,\(local >> 8),\(local & 255)"
                return Array((text[..<match.range.lowerBound] + replacement + text[match.range.upperBound...]).utf8)
            }
            return line
        }

        // MARK: Data

        /// Listens for the one data connection a passive reply announces; its fault
        /// is drawn now, from the session's generator.
        private func openDataRelay(host: String, port: Int, random: inout SeededRandom) -> Int? {
            guard let (listener, local) = try? Loopback.listen(backlog: 1, what: "FTP data relay") else {
                return nil
            }
            let roll = random.next()
            let offset = Int(random.next() % UInt64(max(1, settings.maxOffset)))
            spawn { [self] in
                let deadline = ContinuousClock.now + .seconds(30)
                var client: Int32 = -1
                while !isStopped && ContinuousClock.now < deadline {
                    guard Net.readable(listener, milliseconds: 100) else { continue }
                    client = accept(listener, nil, nil)
                    if client >= 0 { break }
                }
                close(listener)
                guard client >= 0 else {
                    state.withLock { $0.counts.idle += 1 }
                    return
                }
                relayData(client, host: host, port: port, roll: roll, offset: offset)
            }
            return local
        }

        /// The fault a data connection gets, once its first byte shows the direction.
        /// The fault and its byte for a data connection, once its first byte came.
        private func fault(roll: UInt64, offset: Int, upload: Bool) -> (Fault, Int) {
            let n = state.withLock { s -> Int in
                defer { s.dataConnections += 1 }
                return s.dataConnections
            }
            if isCalm { return (.none, 0) }
            if n < settings.scriptedDataFaults.count {
                let scripted = settings.scriptedDataFaults[n]
                return (scripted.fault, scripted.offset)
            }
            guard settings.dataFaults else { return (.none, 0) }
            return (fault(roll: roll, upload: upload), offset)
        }

        private func fault(roll: UInt64, upload: Bool) -> Fault {
            if upload {
                return [.none, .none, .none, .none, .reset, .truncate, .stall, .cutUpload][Int(roll % 8)]
            }
            return [.none, .none, .none, .reset, .truncate, .stall][Int(roll % 6)]
        }

        private func count(_ fault: Fault, upload: Bool) {
            state.withLock {
                if upload {
                    $0.counts.uploads[fault, default: 0] += 1
                } else {
                    $0.counts.downloads[fault, default: 0] += 1
                }
            }
        }

        /// Sleeps for `stall`, or until the proxy stops.
        private func stall() {
            let end = ContinuousClock.now + settings.stall
            while !isStopped && ContinuousClock.now < end { usleep(20_000) }
        }

        /// What one pass over a data connection's side leaves the relay to do.
        private enum Step {
            /// Poll again.
            case next
            /// Stop relaying; both sides are closed at the end.
            case leave
            /// Both sides are already closed.
            case done
        }

        private func relayData(_ client: Int32, host: String, port: Int, roll: UInt64, offset drawn: Int) {
            guard let upstream = Loopback.connect(port: port, host: host) else {
                Net.resetClose(client)
                return
            }
            var upload: Bool?
            var fault = Fault.none
            var offset = drawn
            var struck = false
            var forwarded = 0
            var clientOpen = true
            var serverOpen = true
            var swallowing = false
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            var lastActivity = ContinuousClock.now
            defer {
                if let upload, !struck { count(.none, upload: upload) }
                if upload == nil { state.withLock { $0.counts.idle += 1 } }
            }
            /// Moves what one side sent to the other, striking the drawn fault at its byte.
            func pass(upload isUpload: Bool) -> Step {
                let (source, sink) = isUpload ? (client, upstream) : (upstream, client)
                let n = read(source, &buffer, buffer.count)
                if n < 0 {
                    // One side reset it: so does the proxy to the other.
                    Net.resetClose(sink)
                    close(source)
                    return .done
                }
                // After a truncated upload the client's bytes go nowhere.
                let swallowed = isUpload && swallowing
                if n == 0 {
                    if isUpload { clientOpen = false } else { serverOpen = false }
                    if !swallowed { shutdown(sink, Int32(SHUT_WR)) }
                    return .next
                }
                if swallowed { return .next }
                if upload == nil {
                    upload = isUpload
                    (fault, offset) = self.fault(roll: roll, offset: drawn, upload: isUpload)
                }
                var send = n
                let strike = fault != .none && forwarded + n >= offset
                if strike { send = max(0, offset - forwarded) }
                if send > 0 && !Net.sendAll(sink, buffer[0..<send], stopped: stopped) { return .leave }
                forwarded += send
                guard strike else { return .next }
                struck = true
                count(fault, upload: isUpload)
                switch (fault, isUpload) {
                case (.truncate, false):
                    close(client)  // FIN: the client sees a short file
                    Net.resetClose(upstream)
                case (.truncate, true):
                    // The server stores a short file; the client goes on
                    // sending into the void and believes it all arrived.
                    shutdown(upstream, Int32(SHUT_WR))
                    swallowing = true
                    return .next
                case (.cutUpload, true):
                    shutdown(upstream, Int32(SHUT_WR))
                    Net.resetClose(client)
                    close(upstream)
                case (.stall, _):
                    stall()
                    Net.resetClose(client)
                    Net.resetClose(upstream)
                default:
                    Net.resetClose(client)
                    Net.resetClose(upstream)
                }
                return .done
            }
            relay: while (clientOpen || serverOpen) && !isStopped {
                var fds = [pollfd(fd: clientOpen ? client : -1, events: Int16(POLLIN), revents: 0)]
                fds.append(pollfd(fd: serverOpen ? upstream : -1, events: Int16(POLLIN), revents: 0))
                guard poll(&fds, 2, 100) > 0 else {
                    if ContinuousClock.now - lastActivity > .seconds(60) { break }
                    continue
                }
                lastActivity = .now
                // Server to client first (a download or a listing), then client to server (an upload).
                for (ready, isUpload) in [(fds[1].revents != 0, false), (fds[0].revents != 0, true)] where ready {
                    switch pass(upload: isUpload) {
                    case .next: continue
                    case .leave: break relay
                    case .done: return
                    }
                }
            }
            if isStopped {
                Net.resetClose(client)
                Net.resetClose(upstream)
            } else {
                close(client)
                close(upstream)
            }
        }
    }
}

/// Socket helpers for the proxy.
private enum Net {
    static func readable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, milliseconds) > 0
    }

    /// Closes with an RST instead of a FIN (SO_LINGER 0).
    static func resetClose(_ fd: Int32) {
        var lg = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, socklen_t(MemoryLayout<linger>.size))
        close(fd)
    }

    /// Sends everything; false when the peer is gone, the proxy stopped, or the
    /// peer read nothing for 30 s.
    static func sendAll<C: Collection<UInt8>>(_ fd: Int32, _ bytes: C, stopped: borrowing Atomic<Bool>) -> Bool {
        let data = Array(bytes)
        var sent = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while sent < data.count {
            if stopped.load(ordering: .acquiring) || ContinuousClock.now > deadline { return false }
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let n = data.withUnsafeBytes {
                send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                return false
            }
            sent += n
        }
        return true
    }
}
